"""Lower: the aliasing fence's run-time guards (``compiler/fence/fence_guards.py``),
one ``rt.distinct_arrays(W, b, names=('W', 'b'), line=6)`` per guarded pair,
at the top of the function: a parameter's memory is the caller's for the whole
call, so one check when the gradient starts covers every write, loops included.
Each runs in the forward sweep only, as an ``assert`` does, at the user's line
of the write it protects (the line table places its error there).  A helper's
call is checked before it is inlined (``check_helper_call``)."""

import copy
import types

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.fence.fence_guards import DistinctItems
from tangent_ckpt.compiler.lower.container_values import leaves
from tangent_ckpt.compiler.lower.observers import emit_observation
from tangent_ckpt.compiler.frontend.reached_functions import is_library
from tangent_ckpt.compiler.lower.scopes import LocalFunction, TupleValue, to_source
from tangent_ckpt.compiler.memory_sharing import returns_new
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError


def emit_guards(lo, guards, node):
    """Emit ``guards`` (fence_guards.Guard, DistinctItems) into the statements being
    written, naming the arrays as the function's first statement sees them: a
    parameter (a container parameter followed as one variable per element: the
    tuple of those) or the bound module-level array."""
    for guard in guards:
        if isinstance(guard, DistinctItems):  # ws[k] -= v: no array at two places of ws
            if guard.param in lo.numbers_or_arrays:
                continue  # the call gives an array (x[0] += v): its rows are no objects
            held = _held(lo, lo.expressions.load_name(guard.param, node))
            if held is not None:
                check = sx.rt("distinct_items", held[0], sx.const(guard.param),
                              line=sx.const(guard.line))
                emit_observation(lo, check, held[1], guard.line)
            continue
        written = _held(lo, lo.expressions.load_name(guard.written, node))
        other = _held(lo, lo.expressions.load_name(guard.other, node))
        if written is None or other is None:
            continue
        check = sx.rt("distinct_arrays", written[0], other[0],
                      names=sx.const((guard.written, guard.other)), line=sx.const(guard.line))
        emit_observation(lo, check, tuple(dict.fromkeys(written[1] + other[1])), guard.line)


def _held(lo, value):
    """The node a guard reads for ``value`` (a variable, or the tuple of a
    container parameter's variables), and the function's own names it reads;
    None for anything else."""
    if isinstance(value, ir.Name):
        node, names = ir.operand_node(value), (value.id,)
    elif isinstance(value, TupleValue):
        items = [v for v in leaves(value) if isinstance(v, ir.Name)]
        if not items:
            return None
        node = gast.Tuple(elts=[ir.operand_node(v) for v in items], ctx=gast.Load())
        names = tuple(dict.fromkeys(v.id for v in items))
    else:
        return None
    return node, tuple(n for n in names if n not in lo.bindings)


def check_helper_call(lo, fenced, fnode, call, site=None):
    """The call ``call`` of the helper ``fnode`` (a method's: its receiver
    first; ``site``: the call as the user wrote it), whose fence found
    ``fenced`` (fence_guards.FenceFindings), before it is inlined:

    - one variable given for a parameter the helper writes and one it reads
      afterwards (``step(y, y)``): the write changes what the helper reads, which
      the inlined value semantics would not follow -- refused here; two variables
      (``step(y, z)``): ``rt.distinct_arrays`` checks at the call, each time it
      runs, that they share no memory (``z = y[1:]`` does), unless the caller's
      fence proved one of them a new array the other cannot be;
    - a subscript or ``.T`` of an array given for a parameter it writes in place
      (``bump(y[1:])``), a write the inliner does not carry back to ``y``: where
      the argument is a view of ``y`` when the code runs, ``rt.not_a_view``
      stops the gradient at the call (an element of a 1-D array, a number, or
      a copy made by a fancy index, goes on: the write cannot reach ``y``); an
      item of a list or dict (``bump(ys[0])``), an array the helper's write
      changes, stops it likewise."""
    given = _arguments(fnode, call)
    site = site if site is not None else call  # the node the caller's fence saw
    separate = lo.fenced.index.get("separate", site) or set()
    for guard in fenced.guards:
        written, other = given.get(guard.written), given.get(guard.other)
        if isinstance(written, gast.Name) and isinstance(other, gast.Name) and \
                written.id == other.id:
            raise lo.error(UnsupportedSyntaxError,
                           f"{fnode.name}() is given '{written.id}' for both '{guard.written}' "
                           f"and '{guard.other}': its write into '{guard.written}' (line "
                           f"{guard.line}) changes '{guard.other}', which it reads afterwards, "
                           f"and the compiler would differentiate the two as separate arrays",
                           call, construct=f"the same array for two parameters of "
                                           f"{fnode.name}()",
                           hint=f"let {fnode.name}() take the array once when both names are "
                                f"meant to change together")
        if isinstance(written, gast.Name) and isinstance(other, gast.Name) and \
                not {written.id, other.id} & separate:
            arrays = [lo.expressions.load_name(n.id, n) for n in (written, other)]
            if all(isinstance(a, ir.Name) for a in arrays):  # y and a view of it?
                check = sx.rt("distinct_arrays", *map(ir.operand_node, arrays),
                              names=sx.const((guard.written, guard.other)),
                              line=sx.const(guard.line), function=sx.const(fnode.name))
                emit_observation(lo, check, tuple(dict.fromkeys(
                    a.id for a in arrays if a.id not in lo.bindings)), lo.line)
        elif isinstance(written, gast.Name) and _view_root(other) is not None:
            # step(y, y[1:]): the write into y changes the view the helper reads
            array = lo.expressions.load_name(written.id, written)
            value = lo.expressions.nondiff(other)
            if isinstance(array, ir.Name):
                check = sx.rt("distinct_arrays", ir.operand_node(array), value.node,
                              names=sx.const((guard.written, guard.other)),
                              line=sx.const(guard.line), function=sx.const(fnode.name))
                emit_observation(lo, check, tuple(dict.fromkeys(
                    [n for n in value.names] +
                    ([array.id] if array.id not in lo.bindings else []))), lo.line)
    followed = lo.fenced.marks.written_arguments.get(call, {})  # written back by the inliner
    for param, line in fenced.written.items():
        argument = given.get(param)
        root = _view_root(argument)
        if root is None or param in followed:
            continue
        parent = lo.expressions.load_name(root, argument)
        value = lo.expressions.nondiff(argument)
        if isinstance(parent, ir.Name):
            whole, names = ir.operand_node(parent), list(value.names)
            if parent.id not in lo.bindings:
                names.append(parent.id)
        elif isinstance(parent, TupleValue):  # ys[0] of a list: the array it holds
            whole, names = copy.deepcopy(value.node), list(value.names)
        else:
            continue
        check = sx.rt("not_a_view", value.node, whole, names=sx.const((param, root)),
                      function=sx.const(fnode.name), line=sx.const(line))
        emit_observation(lo, check, tuple(dict.fromkeys(names)), lo.line)


def check_callable_arguments(lo, prepared, fnode, call):
    """The call ``call`` of the helper ``fnode`` whose fence took what some of its
    parameters return to be new objects (``s = step(x); x -= s`` with ``step`` a
    parameter: fence_once.py): each function given for one must return new
    objects only (a def of the user's whose returns hold nothing old, a NumPy
    function whose row says its result is new), else the helper's refusal."""
    if prepared.unless is None:
        return
    given = _arguments(fnode, call)
    for param in sorted(prepared.findings.assumed_new):
        argument = given.get(param)
        value = lo.expressions.static_value(argument) if argument is not None else None
        if isinstance(value, LocalFunction):
            known = lo.fenced.returns_new.get(id(value.node))
            new = known is not None and known[0] is value.node and known[1]
        elif isinstance(value, types.FunctionType) and not is_library(value):
            new = lo.fenced.returns_new.get(value, False)
        else:
            new = value is not None and callable(value) and returns_new(value)
        if not new:
            raise _refusal_naming(prepared.unless, param, argument)


def _refusal_naming(refusal, param, argument):
    """The helper's refusal, saying which function the call gives for ``param``."""
    if not isinstance(refusal, TransformError):
        return refusal
    given = to_source(argument) if argument is not None else "nothing"
    return type(refusal)(
        f"{refusal.message}; the function given for '{param}' here ({given}) may "
        f"return memory another name holds", refusal.filename, refusal.lineno, refusal.construct,
        hint=f"make {given} return a new array (np.array(...), .copy(), or a NumPy "
             f"function's result), or make the write's target a new array where it is "
             f"bound")


def _arguments(fnode, call):
    """Parameter name -> the argument node the call gives it."""
    args = fnode.args
    given = dict(zip([a.id for a in args.posonlyargs + args.args], call.args))
    given.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    return given


def _view_root(node):
    """``y`` of ``y[1:]``, ``y[0][2:]``, ``y.T``, ``y.real``: an expression that may
    be a view of the named array; None for anything else."""
    if not isinstance(node, (gast.Subscript, gast.Attribute)):
        return None
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        if isinstance(node, gast.Attribute) and node.attr not in ("T", "mT", "real", "imag"):
            return None
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def check_local_call(lo, fnode, call):
    """``check_helper_call`` for a function defined in the differentiated one
    (or in a helper): the enclosing function's fence fenced it.  Such a
    function's writes into its parameters are not followed back to the caller
    (the view lowering reads module-level helpers and methods only): one given
    a caller's array for a parameter it writes into in place (``m = th; m[0] =
    v``) is refused, as its item and augmented writes are where they are
    lowered."""
    fenced = lo.fenced.index.get("local", fnode)
    if fenced is None:
        return
    check_helper_call(lo, fenced, fnode, call)
    given = _arguments(fnode, call)
    for param, line in fenced.written.items():
        argument = given.get(param)
        if not isinstance(argument, gast.Name):
            continue
        value = lo.expressions.load_name(argument.id, argument)
        if not isinstance(value, ir.Name) or lo.run_time.is_rows(value) or \
                lo.run_time.is_dict(value):
            continue  # a container's items are the caller's variables already
        raise lo.error(UnsupportedSyntaxError,
                       f"{fnode.name}() writes into its parameter '{param}' in place (its "
                       f"line {line}), which changes the caller's '{argument.id}': a "
                       f"function defined inside another has its writes into its "
                       f"parameters not followed back to the caller", call,
                       construct=f"in-place write into the caller's '{argument.id}'",
                       hint=f"define {fnode.name}() at module level, where a helper's "
                            f"writes into its parameters are followed")


def emit_checks_before(lo, stmt):
    """The checks the fence asked for right before ``stmt``: a write into a name
    that may share memory with another, read later, only through what a black
    box (a function with a registered adjoint) returned."""
    for written, other, line in lo.fenced.index.get("before", stmt) or ():
        arrays = [lo.expressions.load_name(n, stmt) for n in (written, other)]
        if not all(isinstance(a, ir.Name) for a in arrays):
            continue
        check = sx.rt("distinct_arrays", *map(ir.operand_node, arrays),
                      names=sx.const((written, other)), line=sx.const(line),
                      black_box=sx.const(True))
        emit_observation(lo, check, tuple(dict.fromkeys(
            a.id for a in arrays if a.id not in lo.bindings)), line)
