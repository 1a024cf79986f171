"""Desugar: writes through views and aliases, made explicit before lowering.

NumPy arrays are references: after ``v = V[1:3]`` a write ``v += x`` changes
``V``.  The rest of the compiler gives each assignment a new value, so this pass
rewrites the user's syntax tree until value semantics compute what NumPy
computes.  For a *group* (a root array and the names that are views or aliases
of it, each bound once by a view the pass can take again), after every write
into one of its names:

- the write is carried up to the root: ``V[1:3] = v`` (``A = At.T``,
  ``A = B.reshape(A.shape)``, ``a = b``);
- every other name of the group is taken again from its parent: ``w = V[2:]``;
- a loop that writes into the group starts its body by taking the views again,
  so that a checkpointed loop carries the root arrays only.

Where whether a value is a view depends on a type the compiler cannot see
(``b = a`` with ``a`` perhaps a float, ``row = S[1]`` with ``S`` perhaps one
dimensional), the pass tests it once, where the view is taken
(``b_shares = isinstance(a, np.ndarray)``), and makes each follow-up
conditional on it: what NumPy does, for either type (a list or dict the
function makes always shares: ``b = a; b += [y]`` grows the one list, untested).  Where the type alone
stops a group (``U[0, :] = U[1, :]`` with ``U`` a parameter: an array copies
the row, a list keeps a reference), the root is followed as an array and
checked to be one when the function starts (``array_roots.py``).

A helper that writes into its parameters (``def step(H): H[1:-1] += ...``)
changes its caller's arrays: the call is marked (``written_arguments`` of the
pass's :class:`~.node_facts.ViewMarks`) and the inliner assigns the
parameter's final value back to the caller's name, which this pass then treats
as a write there.

A group the pass cannot follow exactly is left as it is, and the aliasing
fence (``aliasing.py``) refuses its writes, naming both names; docs/inplace.md
lists those forms and why.
"""

import contextlib
import threading

import gast

from tangent_ckpt.compiler.node_facts import ViewMarks
from tangent_ckpt.compiler.desugar.array_roots import check_parameters, roots_taken_as_arrays
from tangent_ckpt.compiler.desugar.view_facts import ArrayFacts, basic_index, view_link
from tangent_ckpt.compiler.memory_sharing import unbuffered_write
from tangent_ckpt.compiler.desugar.view_groups import Group
from tangent_ckpt.compiler.desugar.view_shape import FunctionShape


def follow_views(parsed, helper, writers):
    """Rewrite ``parsed.node`` in place so that writes through views and aliases
    reach every name that shares their memory.  Returns what it follows
    (:class:`Followed`), for the fence.  ``helper``:
    ``parsed`` is inlined, so views of its parameters are followed too (their
    writes go back to the caller's arrays through the inliner); ``writers``:
    ``fn -> {parameter: how}``, the parameters a user helper writes into
    (``passes.writer_parameters``)."""
    shape = FunctionShape(parsed, helper, writers)
    _mark_unbuffered_views(shape)
    facts = ArrayFacts(shape.bindings, parsed.resolve, shape.local, items=shape.held)
    links = {}
    for name, binders in shape.binders.items():
        if len(binders) == 1 and binders[0][1] is not None:
            stmt, value = binders[0]
            link = view_link(name, value, stmt, parsed.resolve, shape.local,
                             shape.integer_names())
            if link is not None and link.parent != name and \
                    not (link.kind == "index" and _surely_container(shape, link.parent)):
                links[name] = link  # an item of a list, tuple or dict is no view of it
    groups = _groups(links)
    _require_arrays_for_augmented_calls(shape, facts, set(links) | set(groups))
    checked, facts = roots_taken_as_arrays(shape, facts, groups)  # U[0] = U[1], U a parameter
    followed = Followed()
    followed.marks = shape.marks
    followed.facts, followed.counters = facts, shape.integer_names()
    followed.bindings, followed.held = shape.bindings, shape.held
    grouped = set()  # the names of the groups followed (their calls are marked there)
    for root, members in groups.items():
        group = Group(shape, facts, root, members)
        if group.followable():
            grouped |= group.names
            group.rewrite()
            followed |= {id(link.value) for link in members} | group.followed
            followed.groups.append(frozenset(group.names))
            if group.followed_up:  # (writes into a root no view outlives share nothing)
                _note_shared_writes(parsed, group)
    for stmt, name, kind in list(shape.writes):
        if kind.endswith("-call") and name not in grouped:
            Group(shape, facts, name, []).mark_calls()
    check_parameters(shape, checked, groups)
    return followed


_CONTAINER_DISPLAYS = (gast.List, gast.Tuple, gast.Dict, gast.ListComp, gast.DictComp)


def _mark_unbuffered_views(shape):
    """``np.add.at(U[:, d], i, v)`` with ``d`` a ``range`` counter: a view of ``U``
    whatever ``d`` is (an integer), which the lowering writes into
    (``ViewMarks.unbuffered_views``)."""
    counters = None
    for stmt, _, kind in shape.writes:
        call = stmt.value if isinstance(stmt, gast.Expr) else None
        if kind != "item" or not isinstance(call, gast.Call) or \
                not isinstance(call.args[0], gast.Subscript) or \
                not unbuffered_write(shape.resolve(call.func)):
            continue
        counters = shape.integer_names() if counters is None else counters
        basic = basic_index(call.args[0].slice, counters)
        if basic is not None and basic[1]:
            shape.marks.unbuffered_views[call] = True


def _surely_container(shape, name):
    """Whether every binding of ``name`` is a list, tuple or dict display or
    comprehension: ``lst[0]`` is then the object the container holds (``b =
    lst[0]; b += y`` writes into that object, which the aliasing fence judges),
    never a view of an array."""
    binders = shape.binders.get(name)
    return bool(binders) and all(isinstance(value, _CONTAINER_DISPLAYS)
                                 for _, value in binders)


class Followed(set):
    """The ids of the view expressions the pass follows (the fence treats them
    as new arrays), ``groups``: the sets of names it keeps consistent (the
    fence does not compare a write with the names of its own group), and
    ``marks``: what it declares about the statements and calls of the tree
    (:class:`~.node_facts.ViewMarks`); ``facts``: which names surely hold arrays
    (:class:`~.view_facts.ArrayFacts`), ``bindings``: what each name is bound to
    (a loop variable over a list the function holds: ``view_facts.ItemOf``),
    ``held``: those lists, with what may become their items (``held_lists.py``),
    and ``counters``: the names surely bound to integers (``range`` counters,
    ``p = i + int(...)``: ``view_shape.integer_names``; the fence tells an element
    ``r[0]`` from a view by them)."""

    def __init__(self):
        super().__init__()
        self.groups = []
        self.marks = ViewMarks()
        self.facts, self.counters, self.bindings, self.held = None, frozenset(), {}, {}

    def same_group(self, a, b):
        return any(a in g and b in g for g in self.groups)


def _require_arrays_for_augmented_calls(shape, facts, grouped):
    """``H += ...`` in a helper changes the caller's ``H`` only if it is an array:
    in a group, followed only when the compiler knows it is one; alone, the
    inliner tests it (``ViewMarks.in_place_if_array``)."""
    writes = []
    for s, name, kind in shape.writes:
        if kind == "aug-call" and facts.array(name) is None:
            if name in grouped:
                kind = "other"
            elif id(s) in shape.call_writes:
                call, params = shape.call_writes[id(s)]
                shape.marks.in_place_if_array[call] = {p for p, a in params.items()
                                                       if a == name}
        writes.append((s, name, kind))
    shape.writes = writes


def _groups(links):
    """root -> the links of the names that are views of it (directly or not)."""
    groups = {}
    for name in links:
        root, seen = name, set()
        while root in links and root not in seen:
            seen.add(root)
            root = links[root].parent
        if root not in links:  # else a cycle: a = b; b = a
            groups.setdefault(root, []).append(links[name])
    return groups


_SHARED_WRITES = threading.local()  # the lists recording_shared_writes() fills


@contextlib.contextmanager
def recording_shared_writes():
    """Collect, while compiling, every write this pass carries to other names
    that share the written memory: a list of :class:`SharedWrite`.  NumPy and
    CuPy arrays have views, and the gradient follows them; an array library
    without views (Dask: a slice is a copy) computes something else for such
    code, which the caller refuses."""
    found = []
    stack = getattr(_SHARED_WRITES, "stack", None)
    if stack is None:
        stack = _SHARED_WRITES.stack = []
    stack.append(found)
    try:
        yield found
    finally:
        stack.remove(found)


class SharedWrite(tuple):
    """(filename, line, names): a write at the user's line into one of
    ``names``, which share memory (views or aliases of one array)."""

    __slots__ = ()

    def __new__(cls, filename, line, names):
        return super().__new__(cls, (filename, line, tuple(sorted(names))))


def _note_shared_writes(parsed, group):
    for found in getattr(_SHARED_WRITES, "stack", ()):
        stmt = min((w[0] for w in group.writes), key=lambda s: getattr(s, "lineno", 0))
        found.append(SharedWrite(parsed.origin(stmt).filename, getattr(stmt, "lineno", None),
                                 group.names))
