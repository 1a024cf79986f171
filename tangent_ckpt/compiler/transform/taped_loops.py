"""An ordinary (taped) loop in reverse mode: its primal loop and its reverse loop.

The primal loop runs the body with its values on the tape (one TapeRecord per
block run, ``save_points.py``); a ``while`` loop or a loop with ``break``
counts its iterations (``steps``), which the reverse loop runs again.  Adjoints
that only accumulate across iterations are private buffers added to in place.
Called through ``Reverser.primal_loop`` / ``Reverser.adjoint_loop``.
"""

import ast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line, Restore
from tangent_ckpt.compiler.ir import operand_node


def primal_loop(rev, loop, defined, possibly, in_loop):
    """The primal code of ``loop`` (``defined``/``possibly`` updated in place);
    ``in_loop``: it runs inside another taped loop."""
    out = []
    counter = None
    if isinstance(loop, ir.While) or loop.break_flag:
        counter = rev.namer.fresh("steps")
        loop.record.counter = counter
        fake = ir.Assign(counter, ir.Copy(ir.Const(0)), loop.line)
        rev.save(out, fake, counter, defined, possibly, in_loop)
        loop.record.counter_save = rev.saves.slots.get(id(fake))
        out.append(Line(sx.assign(counter, sx.const(0)), loop.line))
        defined.add(counter)
        possibly.add(counter)
    loop.record.target_save = None
    if isinstance(loop, ir.For) and _read_outside(rev, loop.target):
        # the reverse loop runs the loop variable down to the first index: the
        # code before the loop gets back the value it had
        loop.record.target_save = ir.Assign(loop.target, ir.Copy(ir.Const(None)), loop.line)
        rev.save(out, loop.record.target_save, loop.target, defined, possibly, in_loop)
    inner_defined = set(defined)
    inner_possibly = set(possibly)
    if isinstance(loop, ir.For):
        inner_defined.add(loop.target)
        inner_possibly.add(loop.target)
    read_after = rev.top and not in_loop
    restored = _zeroed_at_head(rev, loop) if read_after else frozenset()
    body = rev.primal(loop.body, inner_defined, inner_possibly, in_loop=True,
                      read_after=read_after, restored=restored)
    if read_after:
        for save in rev.saves.carried_after(rev.saves.records[id(loop.body)]):
            # what the first step's tape entry keeps of a name unbound before the loop
            out.append(Line(sx.assign(save.slot, sx.const(None)), loop.line))
        rev.saves.keep_before_loop(loop, out, defined, possibly)
    else:
        loop.record.restores = []
    if counter:
        body.insert(0, Line(sx.assign(counter, sx.binop(counter, "+", sx.const(1))),
                            loop.line))
    if isinstance(loop, ir.For) and loop.steps_name:
        loop.record.range_node = sx.name(loop.steps_name)  # a taped run: `for t in steps`
        header = sx.for_(loop.target, sx.name(loop.steps_name))
    elif isinstance(loop, ir.For):
        bounds = sx.builtin_call("range", *[operand_node(b) for b in loop.bounds])
        assigned = set(ir.assigned_names(loop.body))
        if any(n in assigned for b in loop.bounds for n in ir.operand_names(b)):
            rng = rev.namer.fresh("loop_range")
            out.append(Line(sx.assign(rng, bounds), loop.line))
            loop.record.range_node = sx.name(rng)
        else:
            loop.record.range_node = bounds
        header = sx.for_(loop.target, sx.copy_tree(loop.record.range_node))
    else:
        header = sx.while_(sx.copy_tree(loop.test.node))
    out.append(Block(header, body, loop.line))
    possibly |= inner_possibly
    return out


def _zeroed_at_head(rev, loop):
    """Names ``loop``'s body rebinds that the code after it reads (before it
    rebinds them), whose shape may differ from one step to the next: their
    adjoints reach the loop's head, where the reverse loop writes a zero shaped
    like the value the name had before the iteration -- the previous step's
    (``t = rows[:i + 1] * x``: one row more each step), or after the last
    reversed iteration the value from before the loop, of any shape (``t = 0.5
    * s`` then ``for t in M``).  The reverse must put that value back, as a
    checkpointed loop's step does (``t = t_old``; None where the name was
    unbound before the loop: ``SavePoints.carry_to_record``), not leave the
    one the iteration made, whose shape a zero added to the previous step's
    adjoint would broadcast to.  A name to which every assignment of the body
    gives the shape it has at the loop's top (``known_shapes.py``, for the
    call's arguments: the loop's ``steady_shapes``) needs none of it."""
    if rev.live_after is None:
        rev.live_after = live_after_loops(rev.function.body, ir.returned_names(rev.function))
    live = rev.live_after.get(id(loop), rev.reads)  # (every loop outside loops is found)
    return frozenset(name for name in set(ir.assigned_names(loop.body))
                     if name in rev.active and name in live and
                     name not in loop.steady_shapes)


def live_after_loops(body, live):
    """{id(loop): the names live after it} for the loops of ``body`` outside
    every loop (``live``: the names live after ``body``): the names some path
    reads before it rebinds them.  One backward walk of the function; a loop's
    body is walked until the names live at its head settle."""
    found = {}
    _live_before(body, set(live), found, True)
    return found


def _live_before(body, live, found, outer):
    live = set(live)
    for stmt in reversed(body):
        if isinstance(stmt, ir.Assign):
            live.discard(stmt.target)
            live.update(ir.expr_reads(stmt.expr))
        elif isinstance(stmt, (ir.For, ir.While)):
            if outer:
                found[id(stmt)] = frozenset(live)
            head = live | set(ir.read_names([_header(stmt)]))  # it may run no step
            while True:
                start = _live_before(stmt.body, head, found, False)
                if isinstance(stmt, ir.For):
                    start.discard(stmt.target)
                if start <= head:
                    break
                head |= start
            live = head
        elif isinstance(stmt, ir.If):
            live = _live_before(stmt.body, live, found, outer) | \
                _live_before(stmt.orelse, live, found, outer) | {stmt.test}
        elif isinstance(stmt, ir.Segment):
            live = _live_before(stmt.body, live, found, outer)
        else:  # a subscript write, a break: read, rebind nothing
            live.update(ir.read_names([stmt]))
    return live


def _read_outside(rev, name):
    """:func:`read_outside_its_loops` over the function, once per loop variable (a
    walk of the whole function for every loop made compile time quadratic)."""
    if name not in rev.read_outside:
        rev.read_outside[name] = read_outside_its_loops(rev.function.body, name)
    return rev.read_outside[name]


def read_outside_its_loops(body, name):
    """Whether a statement of ``body`` reads ``name`` outside every loop over it:
    in such a loop (``for name in ...``) every read follows the loop's own
    binding, in the reverse loop too, so only a read elsewhere needs the value
    from before a loop."""
    for stmt in body:
        if isinstance(stmt, ir.For) and stmt.target == name:
            if any(name in ir.operand_names(b) for b in stmt.bounds):
                return True
            continue
        if isinstance(stmt, ir.If):
            if stmt.test == name or read_outside_its_loops(stmt.body, name) or \
                    read_outside_its_loops(stmt.orelse, name):
                return True
        elif isinstance(stmt, (ir.For, ir.While, ir.Segment)):
            if name in ir.read_names([_header(stmt)]) or \
                    read_outside_its_loops(stmt.body, name):
                return True
        elif name in ir.read_names([stmt]):
            return True
    return False


def _header(stmt):
    """A compound statement without its body (what its header reads)."""
    if isinstance(stmt, ir.For):
        return ir.For(stmt.target, stmt.bounds, [], stmt.line)
    if isinstance(stmt, ir.While):
        return ir.While(stmt.test, [], stmt.line)
    return ir.Segment(stmt.kind, stmt.name, [], stmt.line, min_bytes=stmt.min_bytes,
                      enabled=stmt.enabled)


def accumulators(rev, loop):
    """Adjoints of active variables the loop body reads and never assigns: they
    only accumulate across iterations, so they can be private and in place."""
    assigned = set(ir.assigned_names(loop.body))
    if isinstance(loop, ir.For):
        assigned.add(loop.target)
    return {rev.adj(n) for n in ir.read_names(loop.body)
            if n in rev.active and n not in assigned}


def _written_in_place(rev, loop):
    """Adjoints of active arrays the loop changes only by in-place subscript
    writes: private buffers, zeroed and added to in place (O(row) per step)."""
    rebound = {s.target for s in ir.walk(loop.body) if isinstance(s, ir.Assign)}
    return {rev.adj(s.target) for s in ir.walk(loop.body)
            if rev.writes_in_place(s) and s.target in rev.active
            and s.target not in rebound}


def adjoint_loop(rev, loop, nonzero):
    """The reverse loop of ``loop``; ``nonzero``: adjoints that may hold a value
    after the loop.  Returns (code, nonzero before the loop)."""
    n0 = set(nonzero)
    private = accumulators(rev, loop) | _written_in_place(rev, loop)
    outer_owned = rev.owned
    rev.owned = outer_owned | private
    head = set(n0) | private
    try:
        while True:  # the adjoints live at the loop head: a fixed point
            code, n_start = rev.adjoint(loop.body, head)
            new_head = head | n_start
            if new_head == head:
                break
            head = new_head
    finally:
        rev.owned = outer_owned
    out = rev.make_private(private - outer_owned, n0, loop.line)
    out += rev.materialize(head - n0 - private, loop.line)
    code += rev.materialize(head - n_start, loop.line)
    if isinstance(loop, ir.For):
        rng = sx.copy_tree(loop.record.range_node)
        if loop.break_flag:
            rng = sx.subscript(rng, ast.Slice(lower=None, upper=sx.name(loop.record.counter),
                                              step=None))
        header = sx.for_(loop.target, sx.builtin_call("reversed", rng))
    else:
        header = sx.for_("_", sx.builtin_call("range", loop.record.counter))
    if code:
        out.append(Block(header, code, loop.line, True))
    for b in sorted(rev.batched & (private - outer_owned)):
        out.append(Line(sx.assign(b, sx.rt("settled", b)), loop.line, True))
        rev.batched.discard(b)
    out.extend(loop.record.restores)
    if loop.record.target_save is not None:
        rev.restore(loop.record.target_save, out)
    if loop.record.counter_save:
        slot, tape = loop.record.counter_save
        out.append(Restore(loop.record.counter, slot, tape, loop.line))
    return out, head
