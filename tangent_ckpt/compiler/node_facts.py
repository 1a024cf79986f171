"""Facts one pass declares about nodes of the user's syntax tree, for another
pass to read: a table keyed by the node itself, never an attribute set on it.

A pass's result carries its tables as declared fields (the view lowering's
``ViewMarks``, the fence's ``Fenced``), so what flows between passes is named
where it is made.  The table holds each node it describes, so that a node's id
is never reused by another node while the table lives."""


class NodeFacts:
    """{node: fact}, by identity (gast nodes compare by identity anyway, but are
    kept here by id so that equal-looking nodes never share a fact)."""

    __slots__ = ("_facts",)

    def __init__(self):
        self._facts = {}  # id(node) -> (node, fact)

    def __setitem__(self, node, fact):
        self._facts[id(node)] = (node, fact)

    def get(self, node, default=None):
        found = self._facts.get(id(node))
        return found[1] if found is not None and found[0] is node else default

    def __contains__(self, node):
        found = self._facts.get(id(node))
        return found is not None and found[0] is node

    def __len__(self):
        return len(self._facts)

    def update(self, other):
        """Take every fact of ``other`` (another pass over other nodes)."""
        self._facts.update(other._facts)


class ViewMarks:
    """What the view lowering (``views.py``) declares about the tree it rewrote,
    for the fence and the lowering:

    - ``takes``: statements it added that take a followed view again
      (``w = V[2:]``; the fence skips them);
    - ``write_backs``: statements it added that carry a write up into a parent's
      memory (``V[1:3] = v``; the fence judges them as writes);
    - ``written_arguments``: calls of helpers that write into their parameters
      -> {parameter: the caller's name it writes back to};
    - ``in_place_if_array``: such calls -> the parameters written by ``H += ...``,
      which change the caller's ``H`` only when it is an array (tested at run time);
    - ``writer_calls``: calls of helpers that write into their parameters (the
      lowering inlines them even as a statement whose value is discarded);
    - ``rebound_arguments``: calls of helpers that write into a parameter in
      place and also rebind it (``x += v; x = x % L``), or hand it to a helper
      that does, given a name of the caller -> {parameter: that name}: what the
      caller's array holds after the call is not followed;
    - ``unobserved_arguments``: of those, the parameters whose caller's name is
      never read after the call (nor kept by a nested function) -> {parameter:
      the caller's name}: nothing needs the array's new contents, so the
      inliner writes nothing back, and the fence judges the call as a write
      into that name (no other live name may share its memory);
    - ``array_checks``: ``assert isinstance(U0, np.ndarray)`` statements it
      added where it follows a parameter as an array -> (the parameter, the view
      taken at the statement's line, the array it is a view of, the fewest
      dimensions the parameter must have); the lowering runs them as
      ``rt.require_array``;
    - ``unbuffered_views``: ``np.add.at(U[:, d], i, v)`` statements whose array is
      surely a view (basic indexing with a slice, constants and ``range`` loop
      counters): the lowering writes them into that view."""

    __slots__ = ("takes", "write_backs", "written_arguments", "in_place_if_array",
                 "writer_calls", "rebound_arguments", "unobserved_arguments", "array_checks",
                 "unbuffered_views")

    def __init__(self):
        self.takes = NodeFacts()
        self.write_backs = NodeFacts()
        self.written_arguments = NodeFacts()
        self.in_place_if_array = NodeFacts()
        self.writer_calls = NodeFacts()
        self.rebound_arguments = NodeFacts()
        self.unobserved_arguments = NodeFacts()
        self.array_checks = NodeFacts()
        self.unbuffered_views = NodeFacts()

    def same_call(self, call, inlined):
        """``inlined`` is the call the inliner sees for the user's ``call`` (a
        method's or constructor's, its receiver first): the same facts."""
        for facts in (self.written_arguments, self.in_place_if_array,
                      self.rebound_arguments, self.unobserved_arguments):
            if call in facts:
                facts[inlined] = facts.get(call)

    def update(self, other):
        for field in self.__slots__:
            getattr(self, field).update(getattr(other, field))
