"""Desugar: what each local name of a function may be bound to, read from its
syntax tree, for the passes that turn a write spelled as a method or a chain of
subscripts into an explicit subscript write (``fill_calls.py``,
``chained_subscripts.py``) and for the lowering's test of an integer index
(``lower/container_statements.py``).

Deliberately coarse: every name bound anywhere in the function's tree counts
as a binding to a value not known -- in a nested function (which ``nonlocal``
may let rebind it) or as its parameter (one tree holds both), by ``:=``,
``with ... as``, ``except ... as``, ``del`` -- unless it is the whole target of
a plain assignment (its value) or of an augmented one (the statement, which
:class:`~.view_facts.ArrayFacts` reads as in place).  A comprehension's
variable lives in the comprehension's own scope, and binds none of the
function's names.  A name is then an array, or a ``range`` counter, only when
every binding says so.
"""

import gast

from tangent_ckpt.compiler.desugar.view_facts import ArrayFacts, resolve_dotted


class LocalBindings:
    """The local names of ``fnode`` and the values each may be bound to."""

    def __init__(self, fnode, resolve):
        self.fnode, self.resolve_global = fnode, resolve
        args = fnode.args
        params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
        params += [a.id for a in (args.vararg, args.kwarg) if a is not None]
        self.values = {p: [None] for p in params}  # name -> [value node, or None]
        self.counted = {}  # name -> the For statements binding it as their counter
        known = set()  # ids of the Name nodes whose binding is read below
        for node in gast.walk(fnode):
            if isinstance(node, (gast.Assign, gast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, gast.Name):
                        self.values.setdefault(t.id, []).append(node.value)
                        known.add(id(t))
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                self.values.setdefault(node.target.id, []).append(node)
                known.add(id(node.target))
            elif isinstance(node, gast.comprehension):  # its own scope (Python 3)
                known |= {id(n) for n in gast.walk(node.target)}
            elif isinstance(node, gast.For) and isinstance(node.target, gast.Name):
                self.values.setdefault(node.target.id, []).append(None)
                self.counted.setdefault(node.target.id, []).append(node)
                known.add(id(node.target))
        own = {id(a) for a in args.posonlyargs + args.args + args.kwonlyargs}
        for node in gast.walk(fnode):  # a nested function's or lambda's parameter too
            if isinstance(node, gast.Name) and id(node) not in known | own and \
                    isinstance(node.ctx, (gast.Store, gast.Del, gast.Param)):
                self.values.setdefault(node.id, []).append(None)
        self.local = set(self.values)
        self._facts = None

    def resolve(self, node):
        """The object a dotted name outside the function denotes, or None."""
        return resolve_dotted(node, self.resolve_global, self.local)

    def facts(self):
        """Which names surely hold NumPy arrays (:class:`~.view_facts.ArrayFacts`)."""
        if self._facts is None:
            self._facts = ArrayFacts(self.values, self.resolve_global, self.local)
        return self._facts

    def range_counters(self):
        """Names bound only as the counter of ``for name in range(...)`` (or
        ``reversed(range(...))``): integers."""
        return {name for name, loops in self.counted.items()
                if len(loops) == len(self.values[name]) and
                all(self._over_a_range(s.iter) for s in loops)}

    def _over_a_range(self, it):
        if isinstance(it, gast.Call) and self.resolve(it.func) is reversed and \
                len(it.args) == 1 and not it.keywords:
            it = it.args[0]
        return isinstance(it, gast.Call) and self.resolve(it.func) is range
