"""Reverse a loop step from the states before *and after* it.

When the schedule reverses step i, the driver still holds the state after it
(the state the reversal of step i + 1 started from, or the loop's result).
An adjoint step that takes that state need not re-run the whole iteration:

- the last unconditional assignment of each carried variable in the recorded
  iteration is replaced by the state after the step (``h = h_next``);
- the statements of the recorded iteration whose values the reverse sweep then
  no longer reads are dropped;
- a value the reverse sweep reads only for its shape (the second argument of
  ``rt.unbroadcast``) is replaced by its shape, computed from the shapes of its
  operands (``rt.matmul_shape(h, W)``) when a shape rule covers the operation.

For ``h = np.tanh(h @ W + b)`` nothing of the iteration is recomputed: the
adjoint of ``tanh`` reads its result, which is the state after the step.

This pass works on the generated lines of one adjoint step (after
:func:`~tangent_ckpt.compiler.code.finish_saves`), the last stage before
printing, and only removes statements it knows to be free of side effects.
"""

import ast

import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import (
    Block, Line, all_names, line_reads, line_target as _target, names_read, trees,
)
from tangent_ckpt.compiler.naming import MODULES, NUMPY, Namer
from tangent_ckpt.compiler.package.saves import shape_only

#: array methods that read their object and return a new value
_PURE_METHODS = registry.pure_methods()

_ELEMENTWISE_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)


def use_next_state(primal, adjoint, ret, carried, reserved=()):
    """Rewrite the recorded iteration ``primal`` of an adjoint step to start from
    the state after the step.  Returns ``(primal, next_names)``: ``next_names``
    maps each carried variable that is replaced to the parameter holding its
    value after the step; it is empty when no carried variable could be, or
    when the reverse sweep never reads the values that would take it (the
    caller then needs no state after the step).  Either way, statements whose
    values nobody reads are dropped.  ``reserved``: names the new parameters
    must not take (the function's other parameters)."""
    namer = Namer(all_names(primal + adjoint + [ret]) | set(reserved))
    replaced = {}
    primal = list(primal)
    for var in carried:
        at = _last_plain_assignment(primal, var)
        if at is None:
            continue
        name = namer.fresh(f"{var}_next")
        replaced[var] = name
        primal[at] = Line(sx.assign(var, name), primal[at].line, primal[at].adjoint)
    primal = prune_recording(primal, adjoint + [ret])
    read = all_names(primal)
    return primal, {var: name for var, name in replaced.items() if name in read}


def drop_idle_saves(primal, adjoint):
    """``x_old = x`` in the recording and ``x = x_old`` in the reverse sweep go
    when nothing between them writes ``x`` any more (its assignment was
    dropped): both are no-ops then.  Returns ``(primal, adjoint)``."""
    primal, adjoint = list(primal), list(adjoint)
    for i in range(len(primal) - 1, -1, -1):
        pair = _name_copy(primal[i])
        if pair is None or pair[1] in _written(primal[i + 1:]):
            continue
        slot, var = pair
        for j, item in enumerate(adjoint):
            if var in _written([item]):
                if _name_copy(item) == (var, slot) and \
                        slot not in names_read(adjoint[:j] + adjoint[j + 1:]):
                    del adjoint[j]
                    del primal[i]
                break
    return primal, adjoint


def _name_copy(item):
    """``(a, b)`` for a top-level line ``a = b`` between two names."""
    node = item.stmt if isinstance(item, Line) else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
            isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Name):
        return node.targets[0].id, node.value.id
    return None


def _last_plain_assignment(items, var):
    """Index of the top-level ``var = <expr>`` after which nothing writes ``var``,
    where evaluating ``<expr>`` has no side effect (a nested checkpointed loop's
    ``forward`` must still run: its ``reverse`` follows)."""
    for k in range(len(items) - 1, -1, -1):
        item = items[k]
        if isinstance(item, Line) and _target(item) == var:
            return k if _pure(item.stmt.value) else None
        if var in _written([item]):
            return None  # a later write in a branch, a loop or through a subscript
    return None


def _written(items):
    """Every name the code assigns, binds or mutates through a subscript."""
    names = set()
    for tree in trees(items):
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Subscript, ast.Attribute)) and \
                    isinstance(node.ctx, ast.Store):
                base = node.value
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if isinstance(base, ast.Name):
                    names.add(base.id)
    return names


def prune_recording(primal, after):
    """Drop the statements of ``primal`` whose values neither the rest of
    ``primal`` nor ``after`` reads (an ``if``/``else`` whose branches only assign
    such values goes whole); compute only the shape of a value ``after`` reads
    only for its shape, where a shape rule allows."""
    live = _live_in(after)
    shape_wanted = shape_only(after) & live
    value_wanted = live - shape_wanted
    kept = []
    units = _units(primal)
    for at in range(len(units) - 1, -1, -1):
        unit = units[at]
        item = unit[0]
        written = _subscript_write(item)
        if written is not None and written not in value_wanted | shape_wanted and \
                _private_copy(units[:at], written):
            continue  # a write into a copy nobody reads (the copy goes too)
        if isinstance(item, Line):
            node = item.stmt
            target = _target(item)
            if target is not None and _pure(node.value):
                if target in value_wanted:
                    value_wanted.discard(target)
                    shape_wanted.discard(target)
                    value_wanted |= line_reads(item)
                elif target in shape_wanted:
                    shape_wanted.discard(target)
                    rule = _shape_rule(node.value)
                    if rule is None:
                        value_wanted |= line_reads(item)
                    else:
                        shape, operands = rule
                        item = Line(sx.assign(target, shape), item.line, item.adjoint)
                        shape_wanted |= operands - value_wanted
                else:
                    continue  # nobody reads it
                kept.append(item)
                continue
        elif isinstance(item, Block) and _dead_branches(unit, value_wanted | shape_wanted):
            continue
        # anything else stays, and so does everything it reads
        value_wanted |= names_read(list(unit))
        shape_wanted -= value_wanted
        kept.extend(reversed(unit))
    kept.reverse()
    return kept


def _subscript_write(item):
    """``x`` for a top-level line ``x[index] = value``, else None."""
    node = item.stmt if isinstance(item, Line) else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
            isinstance(node.targets[0], ast.Subscript) and \
            isinstance(node.targets[0].value, ast.Name):
        return node.targets[0].value.id
    return None


def _private_copy(units, var):
    """True when ``var`` was last bound to a copy (``var = var.copy()``, the
    recording of a subscript assignment) and since then only written into
    through subscripts: no other name can see that array."""
    for unit in reversed(units):
        item = unit[0]
        if _subscript_write(item) == var and var not in sx.loads(item.stmt.value) and \
                var not in sx.loads(item.stmt.targets[0].slice):
            continue
        if isinstance(item, Line) and _target(item) == var:
            value = item.stmt.value
            return isinstance(value, ast.Call) and not value.args and \
                isinstance(value.func, ast.Attribute) and value.func.attr == "copy" and \
                isinstance(value.func.value, ast.Name)
        if var in all_names(list(unit)):
            return False
    return False


def _live_in(items):
    """Names ``items`` read before assigning them (a plain ``x = ...`` at the top
    level ends ``x``'s liveness; anything in a block counts as read)."""
    live = set()
    for item in reversed(items):
        if isinstance(item, Line):
            target = _target(item)
            if target is not None:
                live.discard(target)
            live |= line_reads(item)
        else:
            live |= names_read([item])
    return live


def _units(items):
    """``items`` grouped so that an ``if`` block and its ``else`` are one unit."""
    units = []
    for item in items:
        if isinstance(item, Block) and item.is_else and units and \
                isinstance(units[-1][0], Block) and units[-1][0].is_if:
            units[-1] = units[-1] + (item,)
        else:
            units.append((item,))
    return units


def _dead_branches(unit, wanted):
    """True when the ``if``/``else`` ``unit`` only assigns, without effects, names
    nobody reads (its condition is then not needed either)."""
    if not unit[0].is_if:
        return False

    def dead(items):
        for item in items:
            if isinstance(item, Line):
                target = _target(item)
                if target is None or target in wanted or not _pure(item.stmt.value):
                    return False
            elif isinstance(item, Block):
                if not (item.is_if or item.is_else) or \
                        not dead(item.body):
                    return False
        return True

    return all(dead(block.body) for block in unit)


def _pure(expr):
    """True when evaluating ``expr`` has no effect beyond its value: names,
    constants, operators, subscripts, and calls of NumPy functions (not
    ``np.random``) or of array methods that return new values."""
    for node in ast.walk(expr):
        if isinstance(node, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, ast.Call):
            path = _dotted(node.func)
            if path is None:
                return False
            if path[0] == NUMPY and "random" not in path:
                continue
            if len(path) == 2 and path[1] in _PURE_METHODS and path[0] not in MODULES:
                continue
            return False
    return True


def _dotted(func):
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    parts.append(func.id)
    return tuple(reversed(parts))


def _shape_rule(expr):
    """``(call, operands)``: a call computing the shape of ``expr`` (an
    ``rt.ShapeOf``) from its operands' shapes, or None when no rule covers it."""
    if isinstance(expr, ast.BinOp):
        operands = [expr.left, expr.right]
        if not all(_simple(o) for o in operands):
            return None
        fn = "matmul_shape" if isinstance(expr.op, ast.MatMult) else \
            "broadcast_shape" if isinstance(expr.op, _ELEMENTWISE_BINARY) else None
    elif isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        operands, fn = [expr.operand], "broadcast_shape"
    elif isinstance(expr, ast.Call) and not expr.keywords and \
            all(not isinstance(a, ast.Starred) for a in expr.args):
        operands = list(expr.args)
        fn = _call_shape_rule(expr.func, len(operands))
    else:
        return None
    if fn is None or not all(_simple(o) for o in operands):
        return None
    return sx.rt(fn, *[sx.copy_tree(o) for o in operands]), \
        {o.id for o in operands if isinstance(o, ast.Name)}


def _call_shape_rule(func, nargs):
    path = _dotted(func)
    if path is None or len(path) != 2 or path[0] != NUMPY:
        return None
    fn = getattr(np, path[1], None)
    if fn is np.matmul and nargs == 2:
        return "matmul_shape"
    if isinstance(fn, np.ufunc) and fn.nout == 1 and fn.nin == nargs:
        return "broadcast_shape"
    return None


def _simple(node):
    return isinstance(node, ast.Name) or \
        (isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex))
         and not isinstance(node.value, bool))
