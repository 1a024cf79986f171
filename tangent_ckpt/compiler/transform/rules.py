"""Transform: adjoint rules applied to one primitive application.

A rule's expressions (``adjoints/numpy_rules.py``) are read once into syntax
trees (``adjoints/rule_text.py``) and instantiated with the operands of each
call: ``g`` the output's adjoint, ``ans`` the output, each parameter the argument bound to it; a free
name that is neither NumPy nor a builtin is a runtime helper, called through a
:class:`~tangent_ckpt.compiler.syntax.HelperCall` that keeps which helper it is.
"""

import ast
import builtins
import operator

from tangent_ckpt import runtime
from tangent_ckpt.adjoints import registry
from tangent_ckpt.adjoints.rule_text import guarded_expression, rule_expression
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.analyze.complex_values import takes_real_part
from tangent_ckpt.compiler.ir import operand_node
from tangent_ckpt.compiler.transform.owned_adjoints import basic_index
from tangent_ckpt.compiler.naming import NUMPY, builtin
from tangent_ckpt.compiler.transform.black_box_calls import no_rule, refuse_black_box_result
from tangent_ckpt.errors import UnsupportedFunctionError


class _Instantiate(ast.NodeTransformer):
    """Names of a rule expression -> the operands bound to them; other free names
    are NumPy (``np``), builtins, or runtime helpers (``rt.unbroadcast``)."""

    def __init__(self, mapping):
        self.mapping = mapping

    def _free(self, identifier):
        return identifier not in self.mapping and identifier != "np" and \
            not hasattr(builtins, identifier)

    def visit_Call(self, node):  # noqa: N802
        self.generic_visit_children(node)
        if isinstance(node.func, ast.Name) and self._free(node.func.id):
            return sx.rt(node.func.id, *node.args,
                         **{k.arg: k.value for k in node.keywords})
        node.func = self.visit(node.func)
        return node

    def visit_Compare(self, node):  # noqa: N802
        """``stop is not None`` with ``stop`` bound to a constant is decided here:
        ``(4.0 is not None)`` in generated code is a SyntaxWarning."""
        self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) and \
                isinstance(node.left, ast.Constant) and \
                isinstance(node.comparators[0], ast.Constant) and \
                node.comparators[0].value is None:
            return sx.const((node.left.value is None) == isinstance(node.ops[0], ast.Is))
        return node

    def visit_BinOp(self, node):  # noqa: N802
        """``x * True`` (a condition decided above) is ``x``."""
        self.generic_visit(node)
        if isinstance(node.op, ast.Mult) and isinstance(node.right, ast.Constant) and \
                node.right.value is True:
            return node.left
        return node

    def generic_visit_children(self, node):
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            k.value = self.visit(k.value)

    def visit_Name(self, node):  # noqa: N802
        if node.id in self.mapping:
            return sx.copy_tree(self.mapping[node.id])
        if node.id == "np":
            return sx.numpy_module()
        if self._free(node.id):
            return sx.dotted(f"rt.{node.id}")
        return sx.name(builtin(node.id))


def instantiate(expression, mapping, guard=None):
    """An adjoint rule's expression with its names bound: ``mapping`` maps names
    (``g``, ``ans``, parameters) to expression nodes.  Returns a new tree.
    ``guard``: ``"g"`` (``"t"``) keeps the expression 0 where that name is 0
    (a singular rule's, see :func:`singular_guard`)."""
    tree = rule_expression(expression) if guard is None else \
        guarded_expression(expression, guard)
    return _Instantiate(mapping).visit(sx.copy_tree(tree))


def singular_guard(rule, bound, zero):
    """``zero`` (``"g"`` or ``"t"``) when the call of a singular rule needs its
    products kept 0 where ``zero`` is 0 (``rt.where_nonzero``), else None: a
    regular rule, or a call whose constant arguments rule the singularity out
    (``x / 2.0``, ``x ** 3``)."""
    if not rule.singular:
        return None
    known = {}
    for param, op in bound.items():
        if isinstance(op, ir.Const):
            known[param] = op.value
        elif not isinstance(op, (ir.Name, ir.Seq, ir.Index, tuple)):
            known[param] = op   # a default
    return zero if rule.singular_for(known) else None


def adjoint_of_primitive(rev, stmt, prim, g, out, nonzero):
    """Add to ``out`` the adjoint of ``stmt.target = prim(...)`` given ``g``, the
    target's adjoint: the primitive's rule instantiated for each active argument."""
    rule = registry.lookup(prim.fn)
    active_args = [n for a in list(prim.args) + list(prim.kwargs.values())
                   if not isinstance(a, ir.Index)
                   for n in ir.operand_names(a) if n in rev.active]
    if rule is None:
        if active_args and prim.render.startswith("attr:"):  # params.W, params in wrt
            refuse_black_box_result(rev, prim)  # sol.y of sol = solve_ivp(...)
            raise rev.error(UnsupportedFunctionError, f"the attribute {prim.ref} of a "
                            "differentiated value has no derivative", stmt.line,
                            construct=prim.ref, hint="differentiate with respect to the "
                            "arrays themselves: pass them as arguments and build the object "
                            "inside the function")
        if active_args:
            raise no_rule(rev, prim, stmt.line)
        return
    if rule.constant:
        return
    try:
        bound = rule.bind(prim.args, prim.kwargs)
    except TypeError as exc:
        if not active_args:
            return
        raise rev.error(UnsupportedFunctionError,
                         f"the call does not fit the adjoint rule of {rule.name}: {exc}",
                         stmt.line, construct=rule.name,
                         hint="pass the arguments the rule's signature names, or register "
                              "your own adjoint with tangent_ckpt.register_adjoint") from None
    if rule.vjp is not None:
        _adjoint_callable(rev, stmt, prim, rule, bound, g, out, nonzero)
        return
    check_static(rev, stmt, rule, bound)
    if prim.fn is operator.getitem and _accumulate_read(rev, stmt, bound, g, out, nonzero):
        return
    mapping = {"g": sx.name(g), "ans": sx.name(stmt.target)}
    for param, op in bound.items():
        mapping[param] = _bound_node(rev, op)
    guard = singular_guard(rule, bound, "g")
    for param, expression in rule.templates.items():
        op = bound.get(param)
        if param in rule.sequence_params and isinstance(op, (ir.Seq, tuple)):
            for k, item in enumerate(op.items if isinstance(op, ir.Seq) else op):
                if isinstance(item, ir.Name) and item.id in rev.active:
                    m = dict(mapping, i=sx.const(k))
                    rev.accumulate(item.id, instantiate(expression, m), out, nonzero,
                                   stmt.line)
        elif param in rule.sequence_params and isinstance(op, ir.Name) and \
                op.id in rev.active:   # one array passed for the sequence: np.vstack(x)
            rev.accumulate(op.id, _whole_sequence(rev, rule, param, op, mapping), out,
                           nonzero, stmt.line)
        elif isinstance(op, ir.Name) and op.id in rev.active:
            contribution = _folded(_squared_base(
                _without_unbroadcast(instantiate(expression, mapping, guard), op.id, stmt)))
            if takes_real_part(prim, op.id, rev.complex_values, rev.bindings):
                contribution = sx.rt("real_part", contribution)  # w.astype(float)
            rev.accumulate(op.id, contribution, out, nonzero, stmt.line)
        elif isinstance(op, ir.Seq):
            if any(n in rev.active for n in ir.operand_names(op)):
                raise rev.error(UnsupportedFunctionError,
                                f"{rule.name}: a list of differentiated values passed "
                                f"as '{param}', which takes one array", stmt.line,
                                construct=f"{rule.name}([...])",
                                hint=f"for a list of arrays use {rule.name}(np.stack([...]))")


def _whole_sequence(rev, rule, param, op, mapping):
    """The adjoint of one array ``x`` passed where the rule takes a sequence
    (``np.vstack(x)`` iterates over ``x``'s rows): the rule's ``whole`` expression,
    else its items' adjoints stacked, ``np.stack([... for k in range(len(x))])``."""
    if param in rule.whole:
        return instantiate(rule.whole[param], mapping)
    k = rev.namer.fresh("k")
    item = instantiate(rule.templates[param], dict(mapping, i=sx.name(k)))
    return sx.call("np.stack", sx.list_comp(item, k, sx.call("range", sx.call("len", op.id))))


def check_static(rev, stmt, rule, bound):
    """Refuse what the rule's expressions would get wrong: a differentiated value
    where the rule has no adjoint (``np.sum(x, initial=y)``, an index computed
    from ``y``), or a value outside the rule's ``only=``."""
    for param in rule.static_params():
        op = bound.get(param)
        items = op if isinstance(op, tuple) else (op,)
        names = [n for item in items if isinstance(item, (ir.Name, ir.Seq, ir.Index))
                 for n in (item.names if isinstance(item, ir.Index)
                           else ir.operand_names(item))]
        # flow-sensitive: a name rebound to a differentiated value only after this
        # statement (j = i; a[j]; j = x * 2) holds no derivative here
        known = rev.function.varied_on_entry.get(id(stmt))
        varied = known[1] if known is not None and known[0] is stmt else None
        active = [n for n in names if n in rev.active and (varied is None or n in varied)]
        if active:
            index = isinstance(op, ir.Index)
            what = "an index" if index else f"argument '{param}'"
            raise rev.error(UnsupportedFunctionError,
                            f"{rule.name}: {what} depends on the differentiated input "
                            f"({active[0]}), and the rule has no derivative for it",
                            stmt.line,
                            construct="index" if index else f"{rule.name}(..., {param}=...)",
                            hint="compute it from constants, or register your own adjoint "
                                 "with tangent_ckpt.register_adjoint")
    for param, allowed in rule.only.items():
        op = bound.get(param)
        value = op.value if isinstance(op, ir.Const) else op
        if isinstance(op, (ir.Seq, ir.Name, ir.Index)) or \
                not any(value is a or (type(value) is type(a) and value == a)
                        for a in allowed):
            shown = _shown(op)
            raise rev.error(UnsupportedFunctionError,
                            f"{rule.name}(..., {param}={shown}): the adjoint is written "
                            f"for {param} in {', '.join(map(repr, allowed))} only",
                            stmt.line, construct=f"{rule.name}(..., {param}={shown})",
                            hint=f"pass {param} as a constant among those, or register "
                                 "your own adjoint with tangent_ckpt.register_adjoint")


def _shown(op):
    """How an error message names an argument: ``mode='complete'``, ``y``."""
    if isinstance(op, ir.Const):
        return repr(op.value)
    if isinstance(op, ir.Name):
        return op.id
    if isinstance(op, ir.Seq):
        return "[...]" if op.kind == "list" else "(...)"
    if isinstance(op, ir.Index):
        return "an index"
    return repr(op)


def _accumulate_read(rev, stmt, bound, g, out, nonzero):
    """``x[i]`` read where the adjoint ``bx`` is a private accumulator (a loop's)
    or an array just made for it (see :func:`track_fresh`): add ``g`` into
    ``bx[i]`` in place, O(size of x[i]) instead of a full-size array per read
    (``price[t]``, ``for row in data``, the heat equation's ``u[2:]``)."""
    base = bound.get("a")
    if not isinstance(base, ir.Name) or base.id not in rev.active:
        return False
    b = rev.adj(base.id)
    if b not in nonzero or (b not in rev.owned and b not in rev.fresh):
        return False
    if b in rev.owned and base.id in rev.facts.arrays and not rev.may_gather(base.id) and \
            basic_index(bound["index"], rev.facts) and g not in rev.complex_values:
        # a private array, each element named once: bu[2:] += g
        item = sx.subscript(b, sx.copy_tree(bound["index"].node))
        out.append(Line(sx.add_to(item, g), stmt.line, True))
        return True
    index = _bound_node(rev, bound["index"])
    out.append(Line(sx.assign(b, sx.rt("accumulate_at", b, base.id, index, g)), stmt.line,
                    True))
    return True


# helpers whose result is a new array nothing else refers to (or the symbolic
# zero, which rt.accumulate_at replaces by a new array)
_FRESH_HELPERS = (runtime.setitem_adjoint_array, runtime.zeros_like,
                  runtime.append_row_adjoint_rows)


def track_fresh(fresh, lines):
    """Update ``fresh``, the adjoints known to hold an array no other name refers
    to, after the adjoint ``lines`` of one statement (in the order they run).

    ``b = rt.setitem_adjoint_array(b, i)`` makes ``b`` fresh;
    ``b = rt.accumulate_at(b, ...)`` and ``b += ...`` keep it so; any other read
    of ``b`` may alias it (helpers return their argument or a view of it) and
    any other assignment rebinds it, so both end its freshness.  Only a fresh
    (or privately accumulated) adjoint is ever updated in place."""
    for item in lines:
        if isinstance(item, Block):
            fresh.clear()   # conservatively, nothing is fresh after a block
            continue
        stmt = getattr(item, "stmt", None)
        if not isinstance(item, Line) or stmt is None:
            continue   # saves and restores move primal values only
        target = sx.single_target(stmt)
        value = getattr(stmt, "value", None)
        if target is not None and isinstance(value, sx.HelperCall) and \
                value.helper in _FRESH_HELPERS:
            fresh.difference_update(sx.loads(value))
            fresh.add(target)
        elif target is not None and sx.calls_helper(value, runtime.accumulate_at) and \
                isinstance(value.args[0], ast.Name) and value.args[0].id == target:
            fresh.difference_update(sx.loads(ast.Tuple(elts=value.args[1:], ctx=ast.Load())))
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            fresh.difference_update(sx.loads(stmt.value))
        else:
            fresh.difference_update(sx.all_names(stmt))


def _bound_node(rev, op):
    """The expression of a rule's argument: an operand, a tuple of them, or a
    default value (bound in the namespace when it is not a literal)."""
    if isinstance(op, (ir.Name, ir.Const, ir.Seq, ir.Index)):
        return operand_node(op)
    if isinstance(op, tuple):
        return sx.tuple_([_bound_node(rev, o) for o in op])
    if op is None or isinstance(op, (bool, int, float, str)):
        return sx.const(op)
    name = rev.namer.fresh("default")
    rev.bindings[name] = op
    return sx.name(name)

def _adjoint_callable(rev, stmt, prim, rule, bound, g, out, nonzero):
    rule_name = rev.namer.fresh(f"{getattr(prim.fn, '__name__', 'fn')}_adjoint")
    rev.bindings[rule_name] = rule.vjp
    user_call = sx.call(rule_name, g, stmt.target, *[operand_node(a) for a in prim.args],
                        **{k: operand_node(v) for k, v in prim.kwargs.items()})
    parts = rev.namer.fresh(f"{rev.adj(stmt.target)}_parts")
    out.append(Line(sx.assign(parts, sx.rt("adjoint_parts", user_call,
                                           sx.const(len(prim.args)))), stmt.line, True))
    for k, a in enumerate(prim.args):
        for name in ir.operand_names(a):
            if name in rev.active:
                rev.accumulate(name, sx.subscript(parts, sx.const(k)), out, nonzero,
                                 stmt.line)


def _without_unbroadcast(contribution, name, stmt):
    """``rt.unbroadcast(e, x)`` -> ``e`` where the analysis proved that ``x`` has the
    shape of the result (``stmt.same_shape``), so ``e`` has ``x``'s shape already."""
    if sx.calls_helper(contribution, runtime.unbroadcast) and len(contribution.args) == 2 \
            and isinstance(contribution.args[1], ast.Name) \
            and contribution.args[1].id == name and name in stmt.same_shape:
        return contribution.args[0]
    return contribution


def _squared_base(contribution):
    """``rt.power_adjoint_base(g, x, 2)`` -> ``g * (2 * x)``: the helper's own
    arithmetic for the exponent 2 (the common ``x ** 2``), without its call and tests;
    also inside ``rt.unbroadcast(..., x)``."""
    if sx.calls_helper(contribution, runtime.unbroadcast) and contribution.args:
        contribution.args[0] = _squared_base(contribution.args[0])
        return contribution
    if sx.calls_helper(contribution, runtime.power_adjoint_base) and \
            len(contribution.args) == 3 and not contribution.keywords and \
            isinstance(contribution.args[2], ast.Constant) and \
            type(contribution.args[2].value) in (int, float) and contribution.args[2].value == 2:
        g, x, _ = contribution.args
        return sx.binop(g, "*", sx.binop(sx.const(2), "*", x))
    return contribution


def _number(node):
    """The value of a number written as a constant (``2``, ``-1``), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _folded(contribution):
    """``np.negative(1)`` -> ``-1`` in a rule's expression (the shift of
    ``np.roll``'s adjoint), and ``np.roll(g, s, None)`` -> ``np.roll(g, s)``."""
    for node in list(sx.walk(contribution)):
        if not isinstance(node, ast.Call):
            continue
        for k, arg in enumerate(node.args):
            if _is_numpy(arg, "negative") and len(arg.args) == 1 and not arg.keywords and \
                    _number(arg.args[0]) is not None:
                node.args[k] = sx.const(-_number(arg.args[0]))
        if _is_numpy(node, "roll") and len(node.args) == 3 and \
                isinstance(node.args[2], ast.Constant) and node.args[2].value is None:
            del node.args[2]
    return contribution


def _is_numpy(node, function):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        node.func.attr == function and isinstance(node.func.value, ast.Name) and \
        node.func.value.id == NUMPY


def negated(contribution):
    """``x`` for a contribution ``-x``, ``a * b / c`` for ``-a * b / c`` (a
    negation commutes exactly with rounded products, quotients and sums) and
    ``rt.unbroadcast(x, y)`` for ``rt.unbroadcast(-x, y)``, so that it
    is subtracted (``b - x``, ``b -= x``: one NumPy call less, and the same
    bits as adding the negation).  None for anything else."""
    if isinstance(contribution, ast.UnaryOp) and isinstance(contribution.op, ast.USub):
        return contribution.operand
    if sx.calls_helper(contribution, runtime.where_nonzero) and len(contribution.args) == 2:
        inner = negated(contribution.args[1])   # kept 0 where g is 0, either sign
        if inner is not None:
            return sx.rt("where_nonzero", contribution.args[0], inner)
    if isinstance(contribution, ast.BinOp) and isinstance(contribution.op, (ast.Mult, ast.Div)):
        left = negated(contribution.left)
        if left is not None:
            return ast.BinOp(left=left, op=contribution.op, right=contribution.right)
    if sx.calls_helper(contribution, runtime.unbroadcast) and len(contribution.args) == 2:
        inner = negated(contribution.args[0])   # a sum of negations: the negated sum
        if inner is not None:
            return sx.rt("unbroadcast", inner, contribution.args[1])
    return None
