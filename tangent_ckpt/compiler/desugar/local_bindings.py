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

import builtins

import gast

from tangent_ckpt.compiler.desugar.view_facts import ArrayFacts, resolve_dotted

#: the nodes whose names are their own, not the enclosing function's
SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)
COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


def own_scope_nodes(fnode, comprehensions=True):
    """The nodes of ``fnode``'s own scope: not those of a ``def``, ``lambda`` or
    ``class`` in it, whose names are their own; nor, without ``comprehensions``,
    those of a comprehension (its variables are its own; a ``:=`` in it binds the
    function's name, which a caller treats apart)."""
    for stmt in fnode.body:
        yield from own_scope_walk(stmt, comprehensions)


def own_scope_walk(node, comprehensions=True):
    """``node`` and its nodes in the scope it is in, as :func:`own_scope_nodes`
    (a nested scope's node itself is yielded, not what it holds)."""
    stop = SCOPES if comprehensions else SCOPES + COMPREHENSIONS
    stack = [node]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, stop):
            stack.extend(gast.iter_child_nodes(node))


def own_statements(stmts):
    """The statements of ``stmts``, nested blocks included (``if``, loops,
    ``with``, ``try`` and its handlers), not those of nested functions or classes."""
    stack = list(stmts)
    while stack:
        s = stack.pop()
        yield s
        if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(s, field, None) or [])
        for handler in getattr(s, "handlers", None) or []:
            stack.extend(handler.body)


def builtins_meant(names, fnode, resolve):
    """The ``names`` that surely mean Python's builtin of that name in ``fnode``:
    no local of the name, and ``resolve`` (the function's globals, then builtins)
    finds the builtin itself."""
    local = local_names(fnode)
    return {name for name in names
            if name not in local and resolve(name) is getattr(builtins, name, None)}


def root_name(node):
    """The name a subscript / attribute / starred chain starts from (``a`` of
    ``a[0].b``), or None where it starts from something else (a call)."""
    while isinstance(node, (gast.Subscript, gast.Attribute, gast.Starred)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def parameter_names(fnode):
    """The names of ``fnode``'s parameters, ``*args`` and ``**kwargs`` included."""
    args = fnode.args
    return [a.id for a in args.posonlyargs + args.args + args.kwonlyargs +
            [a for a in (args.vararg, args.kwarg) if a is not None]]


def names_seen_outside(fnode):
    """The names of ``fnode`` that are not its own alone: its parameters (the
    caller's values), ``global``/``nonlocal`` names, and names a nested function,
    lambda or class mentions (a closure reads them when it runs)."""
    out = set(parameter_names(fnode)) | names_in_nested_scopes(fnode)
    for node in gast.walk(fnode):
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            out.update(node.names)
    return out


def names_in_nested_scopes(fnode, scopes=SCOPES):
    """The names a nested function, lambda or class of ``fnode`` mentions (with
    ``scopes=SCOPES + COMPREHENSIONS``, a comprehension's too)."""
    out = set()
    stack = [(s, False) for s in fnode.body]
    while stack:
        node, inner = stack.pop()
        if isinstance(node, gast.Name) and inner:
            out.add(node.id)
        stack.extend((c, inner or isinstance(node, scopes)) for c in gast.iter_child_nodes(node))
    return out


def local_names(fnode):
    """The names of ``fnode``'s own scope: its parameters, what its body binds, and
    the ``def`` and ``class`` statements in it (one in a branch is a local too)."""
    names = set(parameter_names(fnode))
    for n in own_scope_nodes(fnode):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            names.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(n.name)
    return names


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
        self._integers = None

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

    def integer_names(self):
        """Names that surely hold a Python ``int``: ``range`` counters, and names
        every binding of which is an integer expression (:func:`integer_valued`:
        ``a = int(r * n)``, ``k = len(xs) - 1``, ``i += 1``), to a fixpoint."""
        if self._integers is not None:
            return self._integers
        counters = self.range_counters()
        # names the function itself binds: not a global a nested def binds for itself
        own = {n.id for n in own_scope_nodes(self.fnode, comprehensions=False)
               if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        names = counters | {name for name, values in self.values.items()
                            if name in own and all(v is not None for v in values) and
                            name not in self.counted}
        while True:
            kept = counters | {name for name in names - counters
                               if all(self._integer_binding(v, names)
                                      for v in self.values[name])}
            if kept == names:
                break
            names = kept
        self._integers = names
        return names

    def _integer_binding(self, value, names):
        if isinstance(value, gast.AugAssign):
            return isinstance(value.op, INTEGER_OPERATORS) and \
                integer_valued(value.value, names, self.resolve)
        return integer_valued(value, names, self.resolve)

    def _over_a_range(self, it):
        if isinstance(it, gast.Call) and self.resolve(it.func) is reversed and \
                len(it.args) == 1 and not it.keywords:
            it = it.args[0]
        return isinstance(it, gast.Call) and self.resolve(it.func) is range


INTEGER_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def integer_valued(node, names, resolve=None):
    """Whether ``node`` surely evaluates to a Python ``int`` (never a bool, an
    array or a float): an integer constant, one of ``names``, a module-level or
    closure name that holds an ``int`` (``resolve``: a change of it compiles the
    gradient again), ``int(...)`` or ``len(...)``, and ``+ - * // %`` and unary
    ``-``/``+`` of such values."""
    if isinstance(node, gast.Constant):
        return type(node.value) is int
    if isinstance(node, gast.Name):
        return node.id in names or resolve is not None and type(resolve(node)) is int
    if isinstance(node, gast.Call):
        return resolve is not None and not node.keywords and len(node.args) == 1 and \
            not isinstance(node.args[0], gast.Starred) and resolve(node.func) in (int, len)
    if isinstance(node, gast.UnaryOp):
        return isinstance(node.op, (gast.USub, gast.UAdd)) and \
            integer_valued(node.operand, names, resolve)
    if isinstance(node, gast.BinOp):
        return isinstance(node.op, INTEGER_OPERATORS) and \
            integer_valued(node.left, names, resolve) and \
            integer_valued(node.right, names, resolve)
    return False

