"""Package: settle the saves of one generated function.

The transform marks with ``Save``/``Restore`` where an overwritten value is kept
for the reverse sweep (a local variable outside loops, the tape inside them);
here they become real statements where the reverse sweep reads the value, and
are dropped in pairs where it does not.  Adjoint statements nobody reads and
branches left empty go too.
"""

import ast
import dataclasses
import bisect

from tangent_ckpt import runtime
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import (
    Blank, Block, BoundCheck, Comment, Line, Restore, Save, TapeRecord, all_names, flat_lines,
    line_reads, line_target, names_read, renamed, trees, uses_tape,
)


def _flatten(items, path=()):
    """(kind, payload, path): ``path`` is the chain of enclosing blocks."""
    for item in items:
        if isinstance(item, Block):
            yield ("reads", item.reads(), path)
            yield from _flatten(item.body, path + (id(item),))
        elif isinstance(item, Line):
            yield ("reads", line_reads(item), path)
        elif isinstance(item, Restore) and item.index is not None:
            yield ("reads", item.reads(), path)  # a write into var, not a new value of it
        elif isinstance(item, Restore):
            yield ("restore", item, path)
        elif isinstance(item, TapeRecord) and item.pop:
            yield ("pop", item, path)


def live_restores(items):
    """Slots of local (non-tape) restores whose value is read before the variable
    is surely restored again, in the order the reverse sweep runs (textual order;
    a restore inside one branch counts reads in the other: conservative).

    Only a later restore that runs whenever this one ran (in the same block or an
    enclosing one) ends the search: one inside an ``if`` or a loop may not run,
    and the value restored here is then the one read (found by tests/test_fuzz.py:
    dropping it gave silently wrong gradients).

    A loop body's TapeRecord pop ends it too, although the loop may run no
    iteration: the names a pop sets are bound by the loop itself, so when it ran
    none, nothing before it reads them (``reverse.py``, ``_block_record``)."""
    flat = list(_flatten(items))
    reads, restores, pops = {}, {}, {}  # var -> positions in flat (ascending)
    for k, (kind, payload, path) in enumerate(flat):
        if kind == "reads":
            for var in payload:
                reads.setdefault(var, []).append(k)
        elif kind == "pop":
            for var in payload.names:
                pops.setdefault(var, []).append(k)
        else:
            restores.setdefault(payload.var, []).append(k)
    live = set()
    for k, (kind, payload, path) in enumerate(flat):
        if kind != "restore" or payload.tape or payload.recorded:
            continue
        positions = reads.get(payload.var, [])
        i = bisect.bisect_right(positions, k)
        if i == len(positions):
            continue  # never read again
        first_read = positions[i]
        later = restores[payload.var]
        j = bisect.bisect_right(later, k)
        popped = pops.get(payload.var, [])
        if bisect.bisect_left(popped, first_read) > bisect.bisect_right(popped, k):
            continue  # set by a loop's TapeRecord before it is read
        if not any(flat[m][2] == path[:len(flat[m][2])]
                   for m in later[j:bisect.bisect_left(later, first_read)]):
            live.add(payload.slot)
    return live


# helpers that read one argument only for its shape and dtype: (helper, position, arity)
_SHAPE_ARGUMENTS = ((runtime.unbroadcast, 1, 2), (runtime.setitem_adjoint_value, 2, 3))


# and those that read it for its shape and dtype (rt.stand_in keeps both)
_STAND_IN_ARGUMENTS = _SHAPE_ARGUMENTS + ((runtime.repeat_to_match, 1, 2),
                                          (runtime.repeat_to_match, 1, 4),
                                          (runtime.private_adjoint, 1, 2),
                                          (runtime.output_adjoint, 1, 2))


def shape_only(items, arguments=_SHAPE_ARGUMENTS):
    """Variables the code reads only as the second argument of ``rt.unbroadcast``
    (or the value of ``rt.setitem_adjoint_value``): their saves keep the shape
    (``rt.shape_of(x)``), not the array.  ``arguments``: (helper, position,
    arity) of the reads that count."""
    ok, other = set(), set()

    def visit(tree):
        shape_args, loads = set(), []
        for node in sx.walk(tree):                       # one pass: ids, then sort
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    loads.append(node)
                continue
            for helper, position, arity in arguments:
                if sx.calls_helper(node, helper) and len(node.args) == arity and \
                        isinstance(node.args[position], ast.Name):
                    shape_args.add(id(node.args[position]))
        for node in loads:
            (ok if id(node) in shape_args else other).add(node.id)

    for tree in trees(items):
        visit(tree)
    return ok - other


def stand_ins(primal, adjoint, ret, params):
    """Arrays the primal sweep binds at its top level (on every path) that the
    reverse sweep reads only for their shape and dtype (the operand of a
    reduction: ``np.sum(S ** 2)``): rebound to ``rt.stand_in(x)`` before the
    reverse sweep, they do not hold their memory through it."""
    assigned = {line_target(item) for item in primal if isinstance(item, Line)} - {None}
    top = {id(item) for item in primal}
    inner = {line_target(item) for item in flat_lines(primal) if id(item) not in top}
    shapes = shape_only(adjoint + [ret], _STAND_IN_ARGUMENTS)
    return sorted((assigned & shapes) - inner - set(params) - names_read([ret]))


def resolve_saves(items, needed, live_slots=None, shapes=frozenset(), records=None):
    """Replace Save/Restore by real statements for needed variables, drop the rest.

    A tape push/pop is kept when the reverse sweep reads the variable anywhere
    (``needed``); a local save when its restore is read (``live_slots``).
    ``records`` ({key: names}): a TapeRecord's pop side writes the names it keeps
    there, and its push side pushes those (nothing when its pop is gone)."""
    out = []
    for item in items:
        if isinstance(item, TapeRecord):
            out.extend(_record_lines(item, needed, shapes, records))
        elif isinstance(item, (Save, Restore)) and item.index is not None:
            out.append(_in_place_save(item))  # always kept: views of var may be read
        elif isinstance(item, (Save, Restore)):
            if item.var not in needed:
                continue
            if live_slots is not None and not item.tape and not item.recorded and \
                    item.slot not in live_slots:
                continue
            if isinstance(item, Save):
                value = sx.rt("shape_of", item.var) if item.var in shapes else sx.name(item.var)
                stmt = sx.statement(sx.method(item.slot, "append", value)) if item.tape \
                    else sx.assign(item.slot, value)
            else:
                stmt = sx.assign(item.var, sx.method(item.slot, "pop")) if item.tape \
                    else sx.assign(item.var, item.slot)
            out.append(Line(stmt, item.line, isinstance(item, Restore)))
        elif isinstance(item, Block):
            out.append(item.with_body(resolve_saves(item.body, needed, live_slots, shapes,
                                                    records)))
        else:
            out.append(item)
    return out


def keep_bound_checks(items, maybe_unbound, natural=False):
    """``items`` with the ``code.BoundCheck`` lines of the names of
    ``maybe_unbound`` only (those the function binds to ``rt.UNBOUND``): where
    nothing binds a name in advance, its read raises by itself.  ``natural``:
    the others are kept too, marked ``natural``, for ``dead_primal.py``, which
    keeps one only where it drops the read it guards (``return total + k``
    after a loop that made no trip: no gradient needs the sum, but Python's
    ``UnboundLocalError`` is raised there)."""
    out = []
    for item in items:
        if isinstance(item, BoundCheck):
            if item.name in maybe_unbound:
                out.append(item)
            elif natural:
                out.append(dataclasses.replace(item, natural=True))
        elif isinstance(item, Block):
            out.append(item.with_body(keep_bound_checks(item.body, maybe_unbound, natural)))
        else:
            out.append(item)
    return out


def _record_lines(item, needed, shapes, records):
    """A TapeRecord's statements: ``tape.append(x)`` / ``x = tape.pop()`` for one
    name; for several, ``tape.extend((a, rt.shape_of(b)))`` and ``a, b =
    tape[-2:]`` + ``del tape[-2:]``.  The entry's values go on the list itself,
    not in a tuple: a tuple per step that holds an ``rt.ShapeOf`` stays tracked
    by the garbage collector, whose passes over 10 000 of them cost the building
    model 11% (measured)."""
    if item.pop:
        names = item.kept(needed)
        if records is not None:
            records[item.key] = names
        if len(names) == 1:
            return [Line(sx.assign(names[0], sx.method(item.tape, "pop")), item.line, True)]
        if not names:
            return []
        last = ast.Slice(lower=sx.const(-len(names)), upper=None, step=None)
        return [Line(sx.assign(names, sx.subscript(item.tape, last)), item.line, True),
                Line(ast.Delete(targets=[ast.Subscript(value=sx.name(item.tape),
                                                       slice=sx.copy_tree(last),
                                                       ctx=ast.Del())]), item.line, True)]
    names = (records or {}).get(item.key)
    if not names:
        return []
    values = [sx.rt("shape_of", n) if n in shapes else sx.name(n) for n in names]
    if len(values) == 1:
        return [Line(sx.statement(sx.method(item.tape, "append", values[0])), item.line)]
    return [Line(sx.statement(sx.method(item.tape, "extend", sx.tuple_(values))), item.line)]


def _in_place_save(item):
    """``tape.append(rt.overwritten(S[t]))`` / ``S[t] = tape.pop()``: an in-place
    write keeps only the elements it overwrites (nothing but a zero where they are
    all zero).  Never dropped: the reverse sweep must find
    the array (and any view of it a statement reads) as it was at each point."""
    region = sx.subscript(item.var, sx.copy_tree(item.index))
    if isinstance(item, Save):
        value = sx.rt("overwritten", region)
        stmt = sx.statement(sx.method(item.slot, "append", value)) if item.tape \
            else sx.assign(item.slot, value)
        return Line(stmt, item.line, False)
    value = sx.method(item.slot, "pop") if item.tape else sx.name(item.slot)
    return Line(sx.assign(sx.subscript(item.var, sx.copy_tree(item.index)), value), item.line,
                True)


def journal_saves(items, journal):
    """A checkpointed loop's primal step: an in-place write tells the driver's
    journal what it overwrites (``writes.keep(S, t)``) instead of keeping it."""
    out = []
    for item in items:
        if isinstance(item, Save) and item.index is not None:
            index = item.index if not isinstance(item.index, (ast.Slice, ast.Tuple)) or \
                not _has_slice(item.index) else sx.subscript("np.s_", sx.copy_tree(item.index))
            out.append(Line(sx.statement(sx.method(journal, "keep", item.var,
                                                   sx.copy_tree(index))), item.line))
        elif isinstance(item, Block):
            out.append(item.with_body(journal_saves(item.body, journal)))
        else:
            out.append(item)
    return out


def _has_slice(node):
    return any(isinstance(n, ast.Slice) for n in ast.walk(node))


def drop_dead_adjoints(items, live):
    """Drop adjoint assignments ``b = ...`` whose value is never read.

    ``live``: names read after ``items``.  Only single-name adjoint lines without
    side effects (no tape ``pop``/``append``) are dropped; a loop's body sees
    every name the loop reads as live (the next iteration may read it), and a
    branch sees the reads of its sibling branch (conservative).  Returns the
    kept items; Save/Restore markers stay for :func:`resolve_saves`.
    """
    kept = []
    live = set(live)
    for item in reversed(items):
        if isinstance(item, Line):
            target = line_target(item)
            if item.adjoint and target is not None and target not in live and \
                    not uses_tape(item):
                continue
            if target is not None:
                live.discard(target)
            live |= line_reads(item)
        elif isinstance(item, Block):
            inner = set(live)
            if item.is_loop:
                inner |= names_read([item])
            item = item.with_body(drop_dead_adjoints(item.body, inner))
            live |= names_read([item])
        elif isinstance(item, Restore):
            if item.index is None:
                live.discard(item.var)
            live |= item.reads()
        elif isinstance(item, TapeRecord):
            live -= set(item.names)
        kept.append(item)
    kept.reverse()
    return kept


def drop_empty_branches(items):
    """``if c: <nothing>`` (and an empty ``else:``) disappear; an empty ``if``
    with a non-empty ``else`` becomes ``if not c:``.  Run after resolve_saves."""
    out = []
    k = 0
    items = [i.with_body(drop_empty_branches(i.body)) if isinstance(i, Block) else i
             for i in items]
    while k < len(items):
        item = items[k]
        nxt = items[k + 1] if k + 1 < len(items) else None
        if isinstance(item, Block) and item.is_if and _empty(item.body):
            has_else = isinstance(nxt, Block) and nxt.is_else
            if has_else and not _empty(nxt.body):
                out.append(Block(sx.if_(sx.not_(item.head.test)), nxt.body, item.line,
                                 item.adjoint))
            k += 2 if has_else else 1
            continue
        if isinstance(item, Block) and item.is_else and _empty(item.body):
            k += 1
            continue
        out.append(item)
        k += 1
    return out


def _empty(body):
    return all(isinstance(i, (Comment, Blank)) for i in body)


def finish_saves(primal, adjoint, ret, extra_needed=()):
    """Settle the saves of one generated function: drop adjoint statements nobody
    reads, keep the saves the reverse sweep reads (shapes only where that is all
    it reads), and drop branches left empty.  Returns (primal, adjoint, needed):
    ``needed`` are the variables whose overwritten values are kept, and the
    local slots kept (``h_old``)."""
    extra_needed = set(extra_needed)
    adjoint = drop_dead_adjoints(adjoint, names_read([ret]))
    needed = names_read(adjoint + [ret]) | extra_needed
    live = live_restores(adjoint + [ret])
    shapes = shape_only(adjoint + [ret]) - _restored_in_place(adjoint)
    while True:  # a branch left empty no longer reads its condition: fewer saves
        records = {}
        resolved = drop_empty_branches(resolve_saves(adjoint, needed, live, shapes, records))
        still_needed = names_read(resolved + [ret]) | extra_needed
        if still_needed >= needed:
            break
        needed = still_needed & needed
    primal = resolve_saves(primal, needed, live, shapes, records)
    renames = _short_slot_names(primal, resolved, ret)
    if renames:
        primal, resolved = renamed(primal, renames), renamed(resolved, renames)
    return primal, resolved, needed | live


def _restored_in_place(items):
    """Arrays the reverse sweep writes back into (``f[1:-1] = f_old``): their
    save keeps the array, not only its shape, whatever else reads it."""
    names = set()
    for item in items:
        if isinstance(item, Restore) and item.index is not None:
            names.add(item.var)
        elif isinstance(item, Block):
            names |= _restored_in_place(item.body)
    return names


def _short_slot_names(primal, adjoint, ret):
    """``h_old_3`` -> ``h_old`` where this function uses no ``h_old``: save slots
    are named from one compile-wide namer, but each generated function is its
    own scope.  Returns {old: new}."""
    used = None  # every name of the function: computed for the first candidate only
    renames = {}
    for item in flat_lines(primal):
        target = line_target(item)
        if target is None:
            continue
        value = item.stmt.value
        if sx.calls_helper(value, runtime.shape_of):
            value = value.args[0]
        elif sx.calls_helper(value, runtime.overwritten) and \
                isinstance(value.args[0], ast.Subscript):
            value = value.args[0].value  # S_old = rt.overwritten(S[t])
        if not isinstance(value, ast.Name):
            continue
        base = f"{value.id}_old"
        if not (target.startswith(base + "_") and target[len(base) + 1:].isdigit()):
            continue
        if used is None:
            used = all_names(primal + adjoint + [ret])
        if base not in used and base not in renames.values():
            renames[target] = base
    return renames
