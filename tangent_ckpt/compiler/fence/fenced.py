"""What the fence hands the lowering (``fence_once.py`` makes it): the user's
functions it prepared and checked before lowering, and the facts the view
lowering and the fence declared about the nodes of their trees.

The lowering only reads this: it never runs the view lowering or the fence
itself.  A function is looked up by its role (``reached_functions.FUNCTION``
or ``METHOD``) and object; what preparing it raised is raised again where the
lowering inlines it, so a refusal comes at the same place it always did, and a
function named but never inlined is never refused."""

from tangent_ckpt.compiler.fence.fence_guards import FenceIndex
from tangent_ckpt.compiler.node_facts import NodeFacts, ViewMarks


class FencedFunction:
    """One user function as the fence left it: ``parsed`` (its tree, rewritten by
    the view lowering for the ``FUNCTION`` role), or None when it could not be
    parsed; ``error``: what parsing it (``parsed`` None) or fencing it raised."""

    __slots__ = ("parsed", "error", "findings", "unless")

    def __init__(self, parsed, error=None, findings=None, unless=None):
        self.parsed = parsed
        self.error = error
        self.findings = findings  # what its fence found (fence_guards.FenceFindings)
        # the refusal a call raises unless each function it gives for a parameter of
        # ``findings.assumed_new`` returns new objects (lower/guards.py)
        self.unless = unless

    def checked(self, callables_checked=False):
        """The parsed function, whose writes the fence accepted; else the refusal
        (``unless`` too, but where the caller checked what the call gives for the
        parameters the fence took to return new objects: ``callables_checked``)."""
        if self.error is not None:
            raise self.error
        if self.unless is not None and not callables_checked:
            raise self.unless
        return self.parsed


class Fenced:
    """``functions``: (role, function object) -> :class:`FencedFunction`, every
    user function the lowering may inline; ``marks``: what the view lowering
    declared about the trees (:class:`~.node_facts.ViewMarks`); ``checked_receivers``:
    calls on objects whose methods the fence checked, where the call is made;
    ``findings``: what the differentiated function's fence found (its run-time
    guards, fence_guards.FenceFindings); ``index``: the findings of every fenced
    function, looked up by node (fence_guards.FenceIndex); ``receiver_methods``:
    (method, class) -> :class:`FencedFunction`, a method refused when read alone,
    fenced again for an object of that class made in the code (object_facts.py);
    ``returns_new``: which functions return new objects only (fence_once.py)."""

    __slots__ = ("functions", "marks", "checked_receivers", "findings", "index",
                 "receiver_methods", "returns_new")

    def __init__(self):
        self.functions = {}
        self.receiver_methods = {}
        self.marks = ViewMarks()
        self.checked_receivers = NodeFacts()
        self.findings = None
        self.index = FenceIndex()
        # whether a function returns new objects only: a module-level helper by its
        # object, a def in the code by id (-> (def, answer)); filled only where a
        # helper's fence assumed it of a parameter (FencedFunction.unless)
        self.returns_new = {}
