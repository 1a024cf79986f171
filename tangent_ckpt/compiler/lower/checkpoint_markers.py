"""Normalize the checkpointing markers a user writes inside a differentiated function.

Recognized by object identity (any alias, ``tc.checkpoint`` or
``from tangent_ckpt import checkpoint as ckpt``):

- ``tc.checkpoint(fn, *args, min_bytes=None)`` -> the call to ``fn``, normalized
  as usual (inlined, or a registered adjoint), wrapped in an ``ir.Segment``;
- ``with tc.checkpoint_scope("name", enabled=True):`` -> the block wrapped in an
  ``ir.Segment`` (``enabled=False`` written as a constant: the plain block);
- ``tc.checkpointed_loop(step, x0, n, num_checkpoints=None)`` -> ``for k in range(n):
  state = step(state)`` marked for checkpointing with ``num_checkpoints`` snapshots.

The functions here take the :class:`~tangent_ckpt.compiler.lower.normalize.Lowering`
(``nz``) and use its parts (``nz.expressions.value``, ``nz.statements.sub_block``, ...).
"""

import inspect
import types

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.lower.scopes import TupleValue, to_source, walk_no_defs
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED
from tangent_ckpt.errors import UnsupportedSyntaxError
from tangent_ckpt.markers import checkpoint, checkpoint_scope
from tangent_ckpt.options import CheckpointOptions
from tangent_ckpt.runtime.scheduling.savings import checkpointed_loop


def lower_call(nz, fn, node, hint):
    """The normalized value of a marker call, or None when ``fn`` is no marker."""
    if fn is checkpoint:
        return lower_checkpoint(nz, node, hint)
    if fn is checkpointed_loop:
        return lower_checkpointed_loop(nz, node, hint)
    if fn is checkpoint_scope:
        raise nz.error(UnsupportedSyntaxError, "checkpoint_scope() outside a with statement",
                       node, construct="checkpoint_scope",
                       hint='write `with tangent_ckpt.checkpoint_scope("name"):` around a block')
    return None


def lower_checkpoint(nz, node, hint):
    if not node.args:
        raise nz.error(UnsupportedSyntaxError, "checkpoint() needs the function to run", node,
                       construct="checkpoint", hint="write tangent_ckpt.checkpoint(fn, *args)")
    min_bytes = None
    for k in node.keywords:
        if k.arg != "min_bytes":
            raise nz.error(UnsupportedSyntaxError, f"checkpoint() got keyword '{k.arg}'", node,
                           construct="checkpoint",
                           hint="pass fn's arguments positionally; the only keyword is min_bytes")
        min_bytes = nz.expressions.atomize(nz.expressions.value(k.value, "min_bytes"), "min_bytes")
        if isinstance(min_bytes, ir.Const) and min_bytes.value is None:
            min_bytes = None
    _borrow_lines(nz, nz.expressions.static_value(node.args[0]))
    # the arguments are evaluated by the caller (`Ws[l]` is an input, not `Ws`):
    # each becomes a private name bound to its operand
    args = []
    names = _param_names(nz, nz.expressions.static_value(node.args[0]))
    for k, a in enumerate(node.args[1:]):
        pname = names[k] if k < len(names) else f"{hint}_arg"
        v = nz.expressions.value(a, pname)
        tmp = nz.namer.fresh(f"checkpoint_arg{k}")
        if isinstance(v, TupleValue):
            nz.current_scope.tuples[tmp] = v
        else:
            nz.current_scope.rename[tmp] = nz.expressions.atomize(v, pname)
        args.append(gast.Name(id=tmp, ctx=gast.Load(), annotation=None, type_comment=None))
    call = gast.Call(func=node.args[0], args=args, keywords=[])
    gast.copy_location(call, node)
    saved = nz.out
    nz.out = []
    try:
        value = nz.expressions.value(call, hint)
        if isinstance(value, TupleValue):
            value = TupleValue([v if isinstance(v, TupleValue) else nz.expressions.atomize(v, hint)
                                for v in value.items])
        else:
            value = nz.expressions.atomize(value, hint)
        body = nz.out
    finally:
        nz.out = saved
    name = to_source(node.args[0])
    nz.emit(ir.Segment("checkpoint", name, body, node.lineno, label=to_source(node),
                       min_bytes=min_bytes))
    return value


def _param_names(nz, fn):
    """Parameter names of the checkpointed function (to name its computed arguments)."""
    node = getattr(fn, "node", None)  # a nested def (LocalFunction)
    if node is None:
        try:
            return list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            return []
    return [a.id for a in node.args.posonlyargs + node.args.args]


def _borrow_lines(nz, fn):
    """Comments in the generated segment functions quote ``fn``'s lines when it
    is defined in the same file as the differentiated function."""
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None or \
            code.co_filename != nz.parsed.filename:
        return
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return
    for k, text in enumerate(lines):
        nz.parsed.source_lines.setdefault(first + k, text.rstrip("\n"))


def _exits(stmts):
    for stmt in stmts:
        for n, in_loop in walk_no_defs(stmt):
            if isinstance(n, gast.Return):
                return n, "return"
            if isinstance(n, (gast.Break, gast.Continue)) and not in_loop and \
                    not isinstance(stmt, (gast.For, gast.While)):
                return n, "break" if isinstance(n, gast.Break) else "continue"
    return None, None


def lower_with(nz, s):
    """``with tc.checkpoint_scope(name, enabled=...):`` (the only ``with`` supported)."""
    item = s.items[0] if len(s.items) == 1 else None
    ctx = item.context_expr if item is not None else None
    if item is None or item.optional_vars is not None or not isinstance(ctx, gast.Call) or \
            nz.expressions.static_value(ctx.func) is not checkpoint_scope:
        nz.statements.unsupported_statement(s)
    args = {}
    for key, a in zip(("name", "enabled"), ctx.args):
        args[key] = a
    for k in ctx.keywords:
        if k.arg not in ("name", "enabled"):
            raise nz.error(UnsupportedSyntaxError, f"checkpoint_scope() got keyword '{k.arg}'",
                           s, construct="checkpoint_scope")
        args[k.arg] = k.value
    name_node = args.get("name")
    if not (isinstance(name_node, gast.Constant) and isinstance(name_node.value, str)
            and name_node.value):
        raise nz.error(UnsupportedSyntaxError, "checkpoint_scope() needs a literal name", s,
                       construct="checkpoint_scope",
                       hint='write checkpoint_scope("attention"): the name appears in the '
                            "generated code and the profiler")
    exit_node, what = _exits(s.body)
    if exit_node is not None:
        raise nz.error(UnsupportedSyntaxError, f"{what} inside a checkpoint_scope block",
                       exit_node, construct=f"{what} in checkpoint_scope",
                       hint="leave the with block normally; return/break after it")
    enabled = None
    if "enabled" in args:
        e = args["enabled"]
        static = e.value if isinstance(e, gast.Constant) else nz.expressions.static_value(e)
        if static is not _UNRESOLVED and isinstance(static, (bool, int, type(None))):
            if not static:
                nz.statements.block(s.body)  # switched off: the plain block
                return
        else:
            enabled = nz.expressions.atomize(nz.expressions.value(e, "enabled"), "enabled")
    body = nz.statements.sub_block(s.body)
    nz.emit(ir.Segment("scope", name_node.value, body, s.lineno, label=f"with {to_source(ctx)}",
                       enabled=enabled))


def lower_checkpointed_loop(nz, node, hint):
    """``checkpointed_loop(step, x0, n, num_checkpoints)`` -> a checkpointed For loop.

    Returns ``(final_state, None)``: the dict of checkpoints that the function
    returns outside a gradient is not available inside one."""
    names = ("func", "initial_state", "seq_length", "num_checkpoints")
    bound = dict(zip(names, node.args))
    for k in node.keywords:
        if k.arg not in names or k.arg in bound:
            raise nz.error(UnsupportedSyntaxError, f"checkpointed_loop() got keyword '{k.arg}'",
                           node, construct="checkpointed_loop")
        bound[k.arg] = k.value
    missing = [n for n in names[:3] if n not in bound]
    if missing:
        raise nz.error(UnsupportedSyntaxError, f"checkpointed_loop() missing {missing[0]}", node,
                       construct="checkpointed_loop")
    snapshots = None
    if bound.get("num_checkpoints") is not None:
        c = bound["num_checkpoints"]
        snapshots = c.value if isinstance(c, gast.Constant) else nz.expressions.static_value(c)
        if snapshots is not None and (isinstance(snapshots, bool) or not isinstance(snapshots, int)):
            raise nz.error(UnsupportedSyntaxError,
                           "checkpointed_loop(): num_checkpoints must be a constant int", node,
                           construct="checkpointed_loop",
                           hint="write the number, or use grad(..., checkpoint=True, snapshots=s)")
    state = nz.namer.fresh("state")
    nz.current_scope.locals.add(state)
    target = gast.Name(id=state, ctx=gast.Store(), annotation=None, type_comment=None)
    load = gast.Name(id=state, ctx=gast.Load(), annotation=None, type_comment=None)
    for n in (target, load):
        gast.copy_location(n, node)
    initial = nz.expressions.value(bound["initial_state"], "state")
    if not isinstance(initial, TupleValue):
        initial = nz.expressions.atomize(initial, "state")
    nz.assignments.assign_operand(target, initial, node)
    bounds = [nz.expressions.atomize(nz.expressions.value(bound["seq_length"], "n"), "n")]
    index = nz.namer.fresh("k")
    call = gast.Call(func=bound["func"], args=[load], keywords=[])
    gast.copy_location(call, node)
    saved = nz.out
    nz.out = []
    try:
        nz.assignments.assign_operand(target, nz.expressions.value(call, "state"), node)
        body = nz.out
    finally:
        nz.out = saved
    loop = ir.For(index, bounds, body, node.lineno, header=f"for {index} in range(...): "
                  f"{state} = {to_source(bound['func'])}({state})", checkpoint=True)
    loop.options = CheckpointOptions(checkpoint=True, snapshots=snapshots)
    nz.emit(loop)
    return TupleValue([nz.expressions.load_name(state, node), ir.Const(None)])
