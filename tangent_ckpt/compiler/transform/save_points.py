"""Where the reverse transform keeps what a write overwrites, and how it gets it back.

Outside loops a value about to be overwritten is kept in a local
(``h_old = h``) and put back in the reverse sweep (``h = h_old``).  Inside a
taped loop each block (the loop body, a branch) adds ONE entry per run to the
tape, at its end, and its reverse takes it back first (``code.TapeRecord``):

- the values the block makes afresh each run (assigned at its top level before
  any read: the A-normal form's temporaries, a step's new state) go in as they
  are -- the reverse reads the same values, and nothing needs a value before
  the first run, so no ``x = rt.UNBOUND`` placeholder;
- what its other top-level writes overwrite goes to a local slot first
  (``T_old = T`` before ``T = ...``), which joins the same entry.

An in-place write into an owned array keeps what it overwrites the same way
(``S_old = rt.overwritten(S[t])``).  The markers (``Save``, ``Restore``,
``TapeRecord``) become statements, or go, in ``package/saves.py``.
"""

import itertools
from collections import Counter

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Line, Restore, Save, TapeRecord

_RECORD_KEYS = itertools.count()


def read_counts(function):
    """How many places read each name of ``function`` (its result counts once)."""
    counts = Counter(ir.read_names(function.body))
    counts.update(ir.returned_names(function))
    return counts


class SavePoints:
    """The saves of one generated function (a Reverser's ``saves``).

    ``counts``/``reads``: how many places of the user's function assign / read
    each name.  After the transform ran, ``tape`` (the tape's name, or None) and
    ``entry_lines(needed)`` say what the generated function sets up on entry;
    ``unbound`` lists the names a checkpointed loop carries that may be unbound
    when it starts (``checkpointed_bodies.py`` appends to it); ``maybe_unbound``,
    the names bound to ``rt.UNBOUND`` whose reads check it."""

    def __init__(self, namer, counts, reads):
        self.namer = namer
        self.counts = counts
        self.reads = reads
        self.tape = None
        self.unbound = []
        self.started_unbound = set()  # carried from rt.UNBOUND by a checkpointed loop
        self.slots = {}  # id(stmt) -> (slot name, is tape)
        self.predeclare = []  # (name, slot): saved where it may be unbound (None if kept)
        self.records = {}  # id(block body) -> its TapeRecord (block_record)
        self.recorded = set()  # slots a TapeRecord keeps
        self.first_writes = set()  # id(stmt): writes whose value a TapeRecord keeps, unsaved
        self.branch_restores = {}  # id(branch body) -> Restores at its reverse's start
        self.carried = {}  # record key -> Saves after its push (carry_to_record)

    def tape_name(self):
        if self.tape is None:
            self.tape = self.namer.fresh("tape")
        return self.tape

    # --- the primal side ---------------------------------------------------------
    def block_record(self, body, read_after=False, restored=frozenset()):
        """The TapeRecord of a block that runs inside a taped loop (a loop body, a
        branch): first the names the block's top level assigns before anything in
        it reads or assigns them, that nothing outside the block reads or assigns
        -- or, for the body of a loop no other loop encloses (``read_after``), that
        the code before and after the loop may read and assign too
        (:meth:`keep_before_loop`), except the names of ``restored``, whose value
        from before each run the reverse needs back (``taped_loops.py``).  Each
        run of the block makes them afresh, so the block pushes their values
        once, at its end, and its reverse pops them first (the block's later
        writes of them are saved as usual); the slots of :meth:`save_to_record`
        join."""
        inside = Counter(ir.read_names(body))
        writes = Counter(ir.assigned_names(body))
        seen, names = set(), []  # seen: the names read or assigned so far
        for stmt in body:
            if isinstance(stmt, ir.Break):
                break
            seen.update(ir.read_names([stmt]))
            target = getattr(stmt, "target", None)
            if isinstance(stmt, ir.Assign) and not stmt.observes and target not in seen and \
                    ((read_after and target not in restored) or
                     (self.counts.get(target) == writes[target] and
                      self.reads.get(target, 0) == inside[target])):
                names.append(target)
                self.first_writes.add(id(stmt))
            seen.update(ir.assigned_names([stmt]))
        record = TapeRecord(names, self.tape_name(), next(_RECORD_KEYS))
        self.records[id(body)] = record
        return record

    def save_to_record(self, out, stmt, record, in_place=False):
        """A write at the top level of a recorded block, to a name bound before it:
        the overwritten value goes to a local slot (``T_old = T``; ``in_place``:
        ``S_old = rt.overwritten(S[t])``) that the block's TapeRecord pushes, and
        comes back from it (``T = T_old``, ``S[t] = S_old``)."""
        slot = self.namer.fresh(f"{stmt.target}_old")
        index = stmt.index.node if in_place else None
        out.append(Save(stmt.target, slot, False, stmt.line, index, recorded=True))
        self.slots[id(stmt)] = (slot, False)
        record.names.append(slot)
        record.slots[slot] = None if in_place else stmt.target  # None: always kept
        self.recorded.add(slot)

    def carry_to_record(self, stmt, record):
        """The first write in a loop body of a name unbound before the loop
        whose value from before each run the reverse needs back
        (``taped_loops.py``): the run's TapeRecord pushes the previous run's
        value, which a local slot carries from the end of each run to the next
        (``t_old = t`` after the push; ``t_old = None`` before the loop, where
        ``t`` itself stays unbound, as Python leaves it when the loop runs no
        step); it comes back as the other slots do (``t = t_old``).  Returns
        the slot."""
        slot = self.namer.fresh(f"{stmt.target}_old")
        self.slots[id(stmt)] = (slot, False)
        record.names.append(slot)
        record.slots[slot] = stmt.target
        self.recorded.add(slot)
        self.carried.setdefault(record.key, []).append(
            Save(stmt.target, slot, False, None, recorded=True))  # (after the push)
        return slot

    def carried_after(self, record):
        """What follows the push of ``record``: the slots :meth:`carry_to_record`
        made take the run's values (``t_old = t``)."""
        return list(self.carried.get(record.key, ()))

    def keep_branch_values(self, branch, code, bound, other, before, following):
        """A name only this branch binds (``bound``; not bound ``before`` the
        ``if``, nor possibly by the ``other`` branch) that the code after the
        ``if`` (``following``) next assigns before any mention: its value is kept
        at the branch's end (``code``) and put back at the start of the branch's
        reverse, where it is surely bound, instead of being saved where the later
        write overwrites it (which needs ``x = rt.UNBOUND`` for the paths that did not
        bind it)."""
        for name in sorted(bound - before - other):
            write = _next_write(following, name)
            if write is None:
                continue
            self.first_writes.add(id(write))
            record = self.records.get(id(branch))
            if record is not None:  # in a taped loop: the branch's TapeRecord keeps it
                record.names.append(name)
                continue
            slot = self.namer.fresh(f"{name}_old")
            code.append(Save(name, slot, False))
            self.branch_restores.setdefault(id(branch), []).append(Restore(name, slot, False))

    def keep_before_loop(self, loop, out, defined, possibly):
        """The names the body of an outermost taped loop records that are bound
        before the loop: kept in a local before it, put back after its reverse
        (``loop.record.restores``)."""
        record = self.records[id(loop.body)]
        loop.record.restores = []
        for name in record.names:
            if name in possibly and name not in record.slots:
                slot = self.namer.fresh(f"{name}_old")
                out.append(Save(name, slot, False, loop.line))
                if name not in defined:
                    self.predeclare.append((name, slot))
                loop.record.restores.append(Restore(name, slot, False, loop.line))

    def bind_on_entry(self, name):
        """``name = rt.UNBOUND`` on entry, where the reverse sweep reads it (a zero
        shaped like it) on paths that may not have bound it."""
        self.predeclare.append((name, name))

    def save(self, out, stmt, target, defined, possibly, in_loop, in_place=False):
        """Keep the value of ``target`` that ``stmt`` overwrites: on the tape in a
        loop, else in a local where ``target`` may hold a value; ``in_place``: a
        subscript write into an owned array keeps only the elements it overwrites."""
        if in_place:
            slot = self.tape_name() if in_loop else self.namer.fresh(f"{target}_old")
            out.append(Save(target, slot, in_loop, stmt.line, stmt.index.node))
            self.slots[id(stmt)] = (slot, in_loop)
            return
        if in_loop:
            if target not in defined:
                self.predeclare.append((target, target))
            out.append(Save(target, self.tape_name(), True, stmt.line))
            self.slots[id(stmt)] = (self.tape_name(), True)
        elif target in possibly:
            slot = self.namer.fresh(f"{target}_old")
            if target not in defined:
                self.predeclare.append((target, slot))
            out.append(Save(target, slot, False, stmt.line))
            self.slots[id(stmt)] = (slot, False)

    # --- the reverse side --------------------------------------------------------
    def restore(self, stmt, out, in_place=False):
        """Put back what :meth:`save` kept for ``stmt``, if it kept anything."""
        slot = self.slots.get(id(stmt))
        if slot is not None:
            index = stmt.index.node if in_place else None
            out.append(Restore(stmt.target, slot[0], slot[1], stmt.line, index,
                               recorded=slot[0] in self.recorded))

    def block_start(self, body):
        """What the reverse of ``body`` starts with: its TapeRecord's pop and the
        values :meth:`keep_branch_values` kept."""
        out = []
        record = self.records.get(id(body))
        if record is not None:
            out.append(TapeRecord(record.names, record.tape, record.key, pop=True,
                                  slots=record.slots))
        out.extend(self.branch_restores.get(id(body), ()))
        return out

    def entry_names(self, needed):
        """The names the generated function must bind on entry: the ones saved
        where they may be unbound whose save is kept (``needed``: the names and
        slots ``finish_saves`` keeps) and the ones a checkpointed loop carries
        that may still be unbound when it starts."""
        names = []
        for v, slot in self.predeclare:
            if v in needed and slot in needed and v not in names:
                names.append(v)
        return names + [v for v in self.unbound if v not in names]

    def entry_lines(self, needed):
        """``x = rt.UNBOUND`` for the :meth:`entry_names`."""
        return [Line(sx.assign(v, sx.dotted("rt.UNBOUND"))) for v in self.entry_names(needed)]

    def maybe_unbound(self, needed):
        """The names that may hold ``rt.UNBOUND`` where the user's code reads them
        (the ``code.BoundCheck`` packaging keeps): the :meth:`entry_names` and the
        ones a checkpointed loop's state starts with it (``started_unbound``)."""
        return set(self.entry_names(needed)) | self.started_unbound


def _next_write(following, name):
    """The first of ``following`` if it is a plain write of ``name`` and nothing
    before it mentions ``name``; else None."""
    for stmt in following:
        if isinstance(stmt, ir.Assign) and stmt.target == name and not stmt.observes and \
                name not in ir.expr_reads(stmt.expr):
            return stmt
        if name in ir.read_names([stmt]) or name in ir.assigned_names([stmt]):
            return None
    return None
