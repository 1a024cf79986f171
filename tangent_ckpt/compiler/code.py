"""Generated code as data: lines, blocks and comments holding syntax trees.

The transform and package stages build and rewrite these items; only the emit
stage prints them.  A ``Line`` holds one stdlib ``ast`` statement, a ``Block``
its header node and its items.  ``Save``/``Restore`` mark where the transform
keeps an overwritten value for the reverse sweep; ``package/saves.py`` turns
them into statements or drops them.

What the transform hands packaging for a checkpointed loop or segment is
declared here too (``CheckpointedLoop``, ``CheckpointedSegment``: the bodies
of their functions, saves still marked), with the markers ``DriverCall`` /
``SegmentCall`` where their calls go; ``package/checkpointed_loops.py`` and
``package/checkpointed_segments.py`` write them out.
"""

import ast
from dataclasses import dataclass, field
from typing import Any, List, Optional

from tangent_ckpt.compiler import syntax as sx


@dataclass
class Line:
    """One generated statement (a stdlib ``ast`` statement).  A line without a
    statement prints its ``comment`` in its place (a segment's constructor
    before the reverse sweep decides it); with one, ``comment`` follows it."""
    stmt: Optional[ast.stmt]
    line: Optional[int] = None
    adjoint: bool = False
    comment: str = ""


@dataclass
class BoundCheck(Line):
    """``rt.check_bound(x, 'x')`` before a read of ``name`` that a path may reach
    unbound; packaging keeps it where the function binds ``name`` to
    ``rt.UNBOUND`` on entry, and (``natural``: elsewhere Python raises by itself
    at the read) where the read it guards is dropped as dead."""
    name: str = ""
    natural: bool = False


@dataclass
class Block:
    """A compound statement: ``head`` is an ``ast.If``/``For``/``While``/
    ``FunctionDef`` whose own body is unused (``body`` holds the items), or
    None for the ``else:`` of the ``if`` block before it."""
    head: Any
    body: List = field(default_factory=list)
    line: Optional[int] = None
    adjoint: bool = False

    @property
    def is_if(self):
        return isinstance(self.head, ast.If)

    @property
    def is_else(self):
        return self.head is None

    @property
    def is_loop(self):
        return isinstance(self.head, (ast.For, ast.While))

    def reads(self):
        """Names the header reads (a loop's iterable, a condition)."""
        if isinstance(self.head, (ast.If, ast.While)):
            return sx.loads(self.head.test)
        if isinstance(self.head, ast.For):
            return sx.loads(self.head.iter)
        return set()

    def with_body(self, body):
        return Block(self.head, body, self.line, self.adjoint)


@dataclass
class Comment:
    text: str


@dataclass
class Blank:
    pass


@dataclass
class Save:
    """Keep ``var`` (or, with ``index``, the elements ``var[index]`` an in-place
    write is about to overwrite) in ``slot`` for the reverse sweep."""
    var: str
    slot: str  # local variable name, or the tape's name when tape=True
    tape: bool = False
    line: Optional[int] = None
    index: Any = None  # a syntax tree: only var[index] is kept (and put back)
    recorded: bool = False  # the slot is a local that its block's TapeRecord pushes


@dataclass
class Restore:
    """Put back what the matching :class:`Save` kept (``var[index] = ...`` with an index)."""
    var: str
    slot: str
    tape: bool = False
    line: Optional[int] = None
    index: Any = None
    recorded: bool = False

    def reads(self):
        """Names the restore reads: an in-place restore evaluates its index again."""
        return sx.loads(self.index) | {self.var} if self.index is not None else set()


@dataclass
class TapeRecord:
    """One tape entry per run of a block inside a taped loop (a loop body, a
    branch): the values of ``names``, which the block makes before any read and
    nothing outside it reads.  The primal side (``pop=False``) pushes them once
    at the block's end (``tape.extend((a, b))``); the reverse side takes them
    back at the start of the block's reverse (``a, b = tape[-2:]``,
    ``del tape[-2:]``).  The two sides
    share ``key``: ``package/saves.py`` keeps, on both, the names the reverse
    sweep reads, and drops a push whose pop is gone.  ``slots`` ({slot: var}):
    names among ``names`` that hold the value a write in the block overwrote
    (``T_old = T`` before ``T = ...``), kept when ``var``'s save is (``var``
    None: always, the elements an in-place write overwrites)."""
    names: list
    tape: str
    key: int
    pop: bool = False
    line: Optional[int] = None
    slots: dict = field(default_factory=dict)

    def kept(self, needed):
        """The names pushed and popped when the reverse sweep reads ``needed``."""
        return [n for n in self.names if self.slots.get(n, n) in needed or
                (n in self.slots and self.slots[n] is None)]


def line_reads(item):
    """Names the line reads (a frozenset, computed once per statement: the
    packaging passes ask for it several times per line)."""
    cached = item.__dict__.get("_reads")
    if cached is not None and cached[0] is item.stmt:
        return cached[1]
    reads = frozenset(sx.loads(item.stmt)) if item.stmt is not None else frozenset()
    item._reads = (item.stmt, reads)
    return reads


def line_target(item):
    """The name a line ``name = value`` assigns, else None."""
    return sx.single_target(item.stmt)


def names_read(items):
    """Every name loaded by the code (Save/Restore excluded, but for the index and
    the array an in-place restore ``S[t] = ...`` reads)."""
    names = set()
    for item in items:
        if isinstance(item, Line):
            names |= line_reads(item)
        elif isinstance(item, Restore):
            names |= item.reads()
        elif isinstance(item, Block):
            names |= item.reads()
            names |= names_read(item.body)
    return names


def uses_tape(item):
    """True when a line pushes to or pops from a tape (``tape.append(x)``,
    ``tape.extend(...)``, ``tape.pop()``, ``del tape[-2:]``)."""
    return item.stmt is not None and (isinstance(item.stmt, ast.Delete) or any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
        n.func.attr in ("pop", "append", "extend") for n in ast.walk(item.stmt)))


def flat_lines(items):
    """Every Line of ``items``, nested blocks included."""
    for item in items:
        if isinstance(item, Line):
            yield item
        elif isinstance(item, Block):
            yield from flat_lines(item.body)


def trees(items):
    """The syntax tree of every statement and block header in ``items``, nested
    blocks included."""
    for item in items:
        if isinstance(item, Line) and item.stmt is not None:
            yield item.stmt
        elif isinstance(item, Block):
            if item.head is not None:
                yield item.head
            yield from trees(item.body)


def all_names(items):
    """Every name the code mentions (read, written or defined)."""
    return {n for tree in trees(items) for n in sx.all_names(tree)}


def renamed(items, renames):
    """``items`` with the names in ``renames`` ({old: new}) replaced."""
    out = []
    for item in items:
        if isinstance(item, Line) and item.stmt is not None:
            out.append(Line(sx.renamed(item.stmt, renames), item.line, item.adjoint,
                            item.comment))
        elif isinstance(item, Block):
            head = sx.renamed(item.head, renames) if item.head is not None else None
            out.append(Block(head, renamed(item.body, renames), item.line, item.adjoint))
        else:
            out.append(item)
    return out


# --- transform -> package: checkpointed loops and segments ---------------------
@dataclass
class ReversedBody:
    """A body run forward and then in reverse in a generated function of its own
    (a loop's adjoint step, a taped run of steps, a segment's adjoint), as the
    transform made it: code items with the saves still marked."""
    primal: list
    adjoint: list
    seeds: list  # the adjoints it starts from
    results: list  # what it returns: the adjoints of its inputs (syntax trees)
    saves: Any  # its ``save_points.SavePoints``: ``tape``, ``entry_lines``


@dataclass
class CheckpointedLoop:
    """One checkpointed loop as the reverse transform made it
    (``transform/checkpointed_bodies.py``).  ``package/checkpointed_loops.py``
    reads it and writes the step functions and, where the sweeps hold a
    ``DriverCall(node)``, the driver calls."""
    loop: Any  # the For or While
    name: str  # ``loopN``: the driver object, and the prefix of its functions
    index: str  # the step functions' first parameter
    params: dict  # {"state": the name the step functions give it, ...}
    carried: list
    invariants: list
    active_carried: list
    active_invariants: list
    empty: set  # carried names first bound inside the loop: the state starts rt.UNBOUND
    in_place: list  # carried arrays the steps write in place (the driver's journal)
    private: list  # carried arrays whose adjoints stay one private buffer
    steps: Any  # what the driver iterates over (a tree), None: the loop's own range
    enter: list  # before the driver is made: rt.UNBOUND for names first bound, saves
    step: list  # the primal step's body (no tape)
    adjoint_step: ReversedBody
    taped_segment: Optional[ReversedBody]  # the plan's taped run of steps, or None
    target_saves: list  # after the forward call: the save of the loop variable,
    rebind_target: bool  # ... which is then given the index of the last step
    adjoint_names: list  # the adjoints ``loopN.reverse`` takes and gives back
    carried_saves: list = field(default_factory=list)  # the saves ``enter`` and
    # ``target_saves`` made, put back after the reverse call
    # carried names unbound before the loop: the primal step checks its reads of
    # them before it binds them (code.BoundCheck)
    unsure: frozenset = frozenset()


@dataclass
class DriverCall:
    """Where packaging writes a checkpointed loop's driver calls: the forward call
    in the primal sweep, the reverse call (``reverse``) in the adjoint sweep."""
    node: Any  # a CheckpointedLoop
    reverse: bool = False


@dataclass
class CheckpointedSegment:
    """One ``ir.Segment`` as the reverse transform made it
    (``transform/segment_bodies.py``); ``package/checkpointed_segments.py``
    writes its two functions and, where the sweeps hold a ``SegmentCall``, the
    calls of ``rt.Segment``."""
    segment: Any  # the ir.Segment
    base: str  # ``segment12``: the runtime object's name, and its functions' prefix
    inputs: list
    outputs: list
    active_inputs: list
    active_outputs: list
    primal: str  # the name of its primal function
    adjoint: str  # the name of its adjoint function (a generator)
    primal_body: list = field(default_factory=list)  # saves marked
    adjoint_body: Optional[ReversedBody] = None
    object_named: bool = False  # transform: its rt.Segment object has been named once

    @property
    def plain(self):
        """Nothing to differentiate through it: ordinary code, no functions."""
        return not self.active_outputs or not self.active_inputs


@dataclass
class SegmentCall:
    """Where packaging writes a segment's call: the forward call in the primal
    sweep, the reverse call (``reverse``) in the adjoint sweep."""
    node: CheckpointedSegment
    obj: str  # the rt.Segment object's name
    targets: list  # the names the call assigns: the outputs, or the inputs' adjoints
    reverse: bool = False
    adjoints: list = field(default_factory=list)  # reverse: the outputs' adjoints it takes
    top: bool = False  # forward: in the gradient function itself (the auto plan lives there)
    reversed: bool = False  # forward: its reverse sweep reaches it (else a plain call)
    saves: list = field(default_factory=list)  # forward: the saves of the object and outputs
