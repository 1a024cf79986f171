"""Package: drop primal computations whose values nobody reads.

``tc.grad`` returns the gradient only: a running ``cost = cost + np.sum(e ** 2)``
computes a value that neither the reverse sweep nor the return statement reads
(its adjoint is ``bcost``, which needs no ``cost``).  Such statements go from
the primal sweep when they are plain computations: ``name = expression`` where
the expression is names, numbers, arithmetic operators and calls of NumPy
functions whose row in the rule registry says ``pure=`` (every rule's default:
``np.tanh``, ``np.sum``), which change nothing but their result.  A call of anything else (a user function, ``np.random``, a
method), a subscript and every statement that is not a plain assignment
(tape pushes and pops, writes ``x[i] = v``, ``print``) stay.

A checkpointed loop's state may hold such a value too (the running ``cost``
of ``tc.grad``): when nothing after ``T, cost = loop.forward(loop_step, ...)``
reads ``cost`` and the adjoint step never reads it, the step stops computing
it and hands on the value it was given (:func:`drop_dead_state`).

Liveness runs backwards over the generated items; a loop's body is passed
until the names live at its top no longer grow (a value read by the next
iteration is live), and ``break``/``continue`` see what is live after the loop
and at its top.  An ``if``/``else`` arm may not run: what is live after it
stays live before it.

A dropped line may have been the read of a name a path leaves unbound
(``return total + k`` after ``for k in range(m)`` that made no trip): the
``rt.check_bound(k, 'k')`` that guarded it (``code.BoundCheck``, ``natural``)
stays in its place, so the gradient raises Python's ``UnboundLocalError``
there as the function does; where the read stays, the check goes.
"""

import ast
import dataclasses

import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.code import (
    Block, BoundCheck, Line, Restore, line_reads, line_target, trees,
)
from tangent_ckpt.compiler.naming import NUMPY


def _pure_function(fn):
    """Whether a call of ``fn`` only computes its result: its row says ``pure=``
    (the rule registry); a ufunc without a row computes its result too."""
    facts = registry.facts(fn)
    if facts is None:
        return isinstance(fn, np.ufunc)
    return bool(facts.pure)


def drop_dead_primal(items, live_after, seen=None):
    """``items`` (a primal sweep: lines and blocks, saves already resolved)
    without the pure assignments whose value is not read before it is
    overwritten or the sweep ends; ``live_after``: the names read after it.
    ``seen``: {id(line): names live after it} is filled for the lines that run
    a checkpointed loop forward."""
    return _drop(items, set(live_after), None, seen)[0]


def drop_dead_state(primal, definitions, live_after):
    """The step functions of ``definitions`` (the packaged helpers, lists of
    blocks) without the computations of state parts nobody reads: a part of
    ``a, b = loopN.forward(loopN_step, (a, b), ...)`` that is not live after
    that line, that the adjoint step ``loopN_adjoint`` does not read, and that
    the step returns where it unpacked it.  Only for loops whose helpers are
    the step and the adjoint step alone (no condition, segment or probe that
    could read the state)."""
    seen = {}
    drop_dead_primal(primal, live_after, seen)
    functions = {block.head.name: (k, i) for k, definition in enumerate(definitions)
                 for i, block in enumerate(definition)
                 if isinstance(block, Block) and isinstance(block.head, ast.FunctionDef)}
    definitions = [list(d) for d in definitions]
    for item in _lines(primal):
        call = _forward_call(item.stmt)
        if call is None or id(item) not in seen:
            continue
        loop, targets = call
        dead = [k for k, name in enumerate(targets) if name not in seen[id(item)]]
        helpers = {name for name in functions if name.startswith(loop + "_")}
        if not dead or helpers != {loop + "_step", loop + "_adjoint"}:
            continue
        k, i = functions[loop + "_adjoint"]
        if not _ignores_state(definitions[k][i], dead):
            continue
        k, i = functions[loop + "_step"]
        dead = _unread_by_step(definitions[k][i], dead)
        if dead:
            definitions[k][i] = _without_parts(definitions[k][i], dead)
    return definitions


def _unread_by_step(step, dead):
    """The parts of ``dead`` that the step itself does not need: the step runs
    again on what it returns, so a part it reads (``if t < 0.05`` with ``t``
    carried) feeds the parts that stay, and must be computed like them."""
    names = _unpacked_state(step.body, "state")
    if names is None:
        return []
    body = [item for item in step.body if not (isinstance(item, Line) and (
        isinstance(item.stmt, ast.Return) or item.stmt is not None and
        isinstance(item.stmt, ast.Assign) and isinstance(item.stmt.value, ast.Name) and
        item.stmt.value.id == "state"))]
    dead = list(dead)
    while dead:
        returned = set(names) - {names[k] for k in dead if k < len(names)}
        _, live = _drop(body, returned, None)
        read = [k for k in dead if k < len(names) and names[k] in live]
        if not read:
            return dead
        dead = [k for k in dead if k not in read]
    return dead


def _lines(items):
    for item in items:
        if isinstance(item, Line) and item.stmt is not None:
            yield item
        elif isinstance(item, Block):
            yield from _lines(item.body)


def _forward_call(stmt):
    """(loop name, target names) of ``a, b = loopN.forward(loopN_step, (a, b), ...)``."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], ast.Tuple) and isinstance(stmt.value, ast.Call)):
        return None
    func, targets = stmt.value.func, stmt.targets[0].elts
    if not (isinstance(func, ast.Attribute) and func.attr == "forward" and
            isinstance(func.value, ast.Name) and all(isinstance(t, ast.Name) for t in targets)):
        return None
    return func.value.id, [t.id for t in targets]


def _unpacked_state(body, param):
    """The names of ``a, b = <param>`` among the first lines of a step function."""
    for item in body:
        if isinstance(item, Line) and item.stmt is not None:
            stmt = item.stmt
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Tuple) and \
                    isinstance(stmt.value, ast.Name) and stmt.value.id == param and \
                    all(isinstance(t, ast.Name) for t in stmt.targets[0].elts):
                return [t.id for t in stmt.targets[0].elts]
            return None
    return None


def _ignores_state(adjoint, dead):
    """Whether the adjoint step reads none of the ``dead`` parts of its state
    (``state``, unpacked first) and of the state after the step (``next_state``,
    read only as ``next_state[k]``)."""
    names = _unpacked_state(adjoint.body, "state")
    if names is None:
        return False
    loads = [n for tree in trees(adjoint.body) for n in ast.walk(tree)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    if any(n.id in {names[k] for k in dead if k < len(names)} for n in loads):
        return False
    if any(n.id == "state" for n in loads[1:]):
        return False   # the state read again, not only unpacked
    for tree in trees(adjoint.body):
        for node in ast.walk(tree):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                    node.value.id == "next_state" and not (
                        isinstance(node.slice, ast.Constant) and node.slice.value not in dead):
                return False
    next_loads = sum(isinstance(n, ast.Name) and n.id == "next_state" for n in loads)
    next_reads = sum(isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and
                     node.value.id == "next_state"
                     for tree in trees(adjoint.body) for node in ast.walk(tree))
    return next_loads == next_reads


def _without_parts(step, dead):
    """The step function without what only the ``dead`` parts of its state need:
    it returns those parts as it received them."""
    names = _unpacked_state(step.body, "state")
    last = step.body[-1] if step.body else None
    if names is None or not isinstance(last, Line) or not isinstance(last.stmt, ast.Return) or \
            not isinstance(last.stmt.value, ast.Tuple) or \
            [getattr(e, "id", None) for e in last.stmt.value.elts] != names:
        return step
    returned = set(names) - {names[k] for k in dead}
    return step.with_body(drop_dead_primal(step.body[:-1], returned) + [last])


def _drop(items, live, jump, seen=None):
    """(kept items, names live before them).  ``jump``: the names live where a
    ``break`` or ``continue`` of the enclosing loop goes.  ``live`` is updated in
    a private copy, statement by statement: a new set per statement made a long
    function quadratic (benchmarks/compile_time.py)."""
    kept = []
    live = set(live)
    dropped, read = {}, {}  # line number -> names read by the lines dropped / kept
    for item in reversed(items):
        if isinstance(item, BoundCheck) and item.natural:
            # kept where the read it guards was dropped, and no line kept reads it
            if item.name not in dropped.get(item.line, ()) or \
                    item.name in read.get(item.line, ()):
                continue
            item = dataclasses.replace(item, natural=False)
        if isinstance(item, Line):
            if seen is not None and _forward_call(item.stmt) is not None:
                seen[id(item)] = set(live)
            target = line_target(item)
            if target is not None and target not in live and _pure(item.stmt.value):
                dropped.setdefault(item.line, set()).update(line_reads(item))
                continue
            read.setdefault(item.line, set()).update(line_reads(item))
            if isinstance(item.stmt, (ast.Break, ast.Continue)) and jump is not None:
                live |= jump
            if target is not None:
                live.discard(target)
            live |= line_reads(item)
        elif isinstance(item, Block) and item.is_loop:
            after = live | item.reads()
            top = set()
            while True:   # the body's end also flows to its top (next iteration)
                end = after | top
                body, new_top = _drop(item.body, end, end, seen)
                if new_top <= top:
                    break
                top |= new_top
            item = item.with_body(body)
            live = after | top
        elif isinstance(item, Block):   # if / else / def: the arm may not run
            body, inside = _drop(item.body, live, jump, seen)
            item = item.with_body(body)
            live |= inside
            live |= item.reads()
        elif isinstance(item, Restore):
            if item.index is None:
                live.discard(item.var)
            live |= item.reads()
        kept.append(item)
    kept.reverse()
    return kept, live


def _pure(node):
    """Whether evaluating ``node`` only computes a value (see the module docstring)."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.BinOp):
        return _pure(node.left) and _pure(node.right)
    if isinstance(node, ast.UnaryOp):
        return _pure(node.operand)
    if isinstance(node, ast.Call):
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and
                func.value.id == NUMPY):
            return False
        if not _pure_function(getattr(np, func.attr, None)):
            return False
        return all(_pure(a) for a in node.args) and \
            all(k.arg not in (None, "out") and _pure(k.value) for k in node.keywords)
    return False
