"""Lower: statements that only observe -- ``print(...)``, ``logger.info(...)``,
a plotting call, ``assert``, ``raise``.

They run in the forward sweep where the user wrote them, each as a
nondifferentiable assignment of a name nothing reads; the reverse sweep leaves
them out (the adjoint step of a checkpointed loop recomputes only what its
adjoints need).  A discarded call that could change a differentiated value --
an unknown function handed one of the function's variables -- is refused.
"""

import ast
import builtins

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.scopes import LocalFunction, Lowered, ObjectValue, clone, to_source
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED
from tangent_ckpt.errors import UnsupportedSyntaxError
from tangent_ckpt.runtime import random_state

# libraries whose calls only look at their arguments: logging, warnings, plotting
OBSERVER_MODULES = ("logging", "warnings", "_warnings", "matplotlib", "pprint")


def is_observer(fn):
    """``print``, a logging/warnings/matplotlib function or method: a call that
    reads its arguments and changes none of them."""
    if fn is print:
        return True
    owner = getattr(fn, "__self__", None)
    modules = (getattr(fn, "__module__", None) or "",
               getattr(type(owner), "__module__", "") if owner is not None else "")
    return any(m.split(".")[0] in OBSERVER_MODULES for m in modules)


def observe_call(lo, stmt):
    """A call statement whose value is discarded: kept as written when it only
    observes, refused when it may change one of the function's variables."""
    call = stmt.value
    fn = lo.expressions.static_value(call.func)
    spelled = to_source(call)
    # np.random.seed(3), random.seed(t), RS.seed(1), a draw whose numbers are dropped:
    # the draws after it read the state it leaves, so a recording that draws again
    # (a checkpointed loop's adjoint step) must run it again -- an ordinary
    # statement, not an observation.  A seed only reads its arguments
    draws_or_seeds = random_state.uses_global_state(fn) or \
        random_state.generator_of(fn) is not None
    seeds = draws_or_seeds and getattr(fn, "__name__", None) in ("seed", "set_state",
                                                                  "setstate")
    if not is_observer(fn) and not seeds and _reads_variables(lo, call):
        raise lo.error(UnsupportedSyntaxError,
                       f"`{spelled}` is called for its effect, and may change the "
                       "arrays it is given", stmt, construct=spelled,
                       hint="assign its value (y = f(x)) if it computes one; only print, "
                            "logging, warnings and matplotlib calls are kept as observers")
    func = _function_node(lo, call.func, fn)
    where = f"the arguments of {spelled}"
    arguments = [_inlined_calls(lo, a) for a in call.args]
    args = lo.expressions.nondiff(gast.Tuple(elts=arguments, ctx=gast.Load()), where)
    keywords, names = [], list(args.names)
    for k in call.keywords:
        value = lo.expressions.nondiff(_inlined_calls(lo, k.value), where)
        keywords.append(ast.keyword(arg=k.arg, value=value.node))
        names.extend(value.names)
    node = ast.Call(func=func, args=list(args.node.elts), keywords=keywords)
    emit_observation(lo, node, names, stmt.lineno, observes=not draws_or_seeds)


def observe_assert(lo, stmt):
    """``assert test, message``: ``rt.check(test, message)`` in the forward sweep;
    the view lowering's check that a name it follows as an array is one:
    ``rt.require_array(U0, name='U0', view='u', of='U', line=8)`` (``of``: the
    array the view is taken of, when it is not the parameter itself)."""
    checked = lo.fenced.marks.array_checks.get(stmt)
    if checked is not None:
        name, view, of, least = checked
        value = lo.expressions.nondiff(stmt.test.args[0])  # isinstance(U0, np.ndarray)
        named = dict(name=sx.const(name), view=sx.const(view))
        if of != name:
            named["of"] = sx.const(of)
        if least:   # y = U0 * 1.0: an array when U0 has a dimension
            named["least"] = sx.const(least)
        check = sx.rt("require_array", value.node, **named, line=sx.const(stmt.lineno))
        emit_observation(lo, check, value.names, stmt.lineno)
        return
    parts = [stmt.test] + ([stmt.msg] if stmt.msg is not None else [])
    value = lo.expressions.nondiff(gast.Tuple(elts=parts, ctx=gast.Load()))
    emit_observation(lo, sx.rt("check", *value.node.elts), value.names, stmt.lineno)


def observe_raise(lo, stmt):
    """``raise E(message)`` (``from cause``): ``rt.raise_error(E(message))`` in
    the forward sweep, on the path that raises (desugar's
    ``raising_branches.py`` has made the rest of the function the other path);
    the exception is built there only, as Python builds it.  A bare ``raise``
    re-raises the exception an ``except`` block handles: there is none here."""
    if stmt.exc is None:
        raise lo.error(UnsupportedSyntaxError, "a bare raise outside an except block", stmt,
                       construct="raise", hint="raise an exception: raise ValueError(...)")
    parts = [stmt.exc] + ([stmt.cause] if stmt.cause is not None else [])
    value = lo.expressions.nondiff(gast.Tuple(elts=parts, ctx=gast.Load()))
    emit_observation(lo, sx.rt("raise_error", *value.node.elts), value.names, stmt.lineno)


def _inlined_calls(lo, node):
    """``node`` (an observer's argument) with each call of a function defined in
    the differentiated code (``print(f'{norm(F(x)):.1e}')``, ``F`` a nested def or
    one passed down as a value) lowered first, in Python's order of evaluation,
    and read from its variable: such a function has no object the printed
    expression could call.  A call that Python may not run (in a short-circuit,
    a conditional expression, a comprehension, a lambda) is left in place (and
    refused by ``nondiff``)."""
    node = clone(node)
    maybe_skipped = set()
    for sub in gast.walk(node):
        if isinstance(sub, (gast.BoolOp, gast.IfExp, gast.ListComp, gast.SetComp,
                            gast.DictComp, gast.GeneratorExp, gast.Lambda)):
            maybe_skipped.update(id(n) for n in gast.walk(sub) if n is not sub)

    class Inliner(gast.NodeTransformer):
        def visit_Call(self, n):  # noqa: N802
            self.generic_visit(n)  # its arguments' calls first, as Python runs them
            if id(n) in maybe_skipped or \
                    not isinstance(lo.expressions.static_value(n.func), LocalFunction):
                return n
            value = lo.expressions.value(n, "observed")
            if not isinstance(value, ir.Name):
                value = lo.expressions.atomize(value, "observed")
            return Lowered(value, n)

    return Inliner().visit(node)


def emit_observation(lo, node, names, line, observes=True):
    """``node`` run in the forward sweep for its check or output, its value unused
    (``observes`` False: run wherever the statements around it run again)."""
    target = lo.namer.fresh("observed")
    lo.emit(ir.Assign(target, ir.NonDiff(node, tuple(dict.fromkeys(names))), line,
                      observes=observes))


def _function_node(lo, func, fn):
    """How generated code calls ``fn``: ``print``, ``logger.info``, ``plt.plot``
    (the module or object bound under its own name, then the attribute)."""
    if fn is _UNRESOLVED:
        raise lo.error(UnsupportedSyntaxError, f"cannot resolve the function {to_source(func)}",
                       func, construct=to_source(func),
                       hint="call a function defined at module level")
    if isinstance(func, gast.Attribute):
        base = lo.expressions.static_value(func.value)
        if base is not _UNRESOLVED:
            root = _function_node(lo, func.value, base)
            return sx.attr(root, func.attr)
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return sx.builtin_call(fn.__name__).func
    hint = func.id if isinstance(func, gast.Name) else getattr(fn, "__name__", "fn")
    return ir.operand_node(lo.expressions.constant(fn, hint))


def _reads_variables(lo, call):
    """Does the call hand over one of the function's own variables?"""
    for node in gast.walk(call):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                node is not call.func and (lo.expressions.static_value(node) is _UNRESOLVED or
                                           isinstance(lo.expressions.static_value(node),
                                                      ObjectValue)):  # its attributes are
            return True                                                # variables
    return False
