"""Desugar: a local name that surely denotes one function, called by that
function's own name (and one that surely denotes a module, ``m = np``, read by
the module's own name: ``m.max(c)`` is ``np.max(c)``).

Once objects are names (``scalar_objects.py``), ``self.f = f`` given ``rhs``
leaves ``integ_f = rhs``, and a method's ``dt, f = self.dt, self.f`` leaves
``dt, f = integ_dt, integ_f``: where every binding of a local name is a name of
the same function of the user's -- a module-level (or closure) name, a ``def``
of the function's own that nothing else binds (a closure factory inlined leaves
``inner = loss_2`` after its ``def loss_2``), or another such local -- a call
``f(t, y)`` becomes ``rhs(t, y)``, which the next round of inlining writes out.
A local with any other binding (a parameter, a loop or ``with`` target, a
computed value, two functions) keeps its calls as written.

A local bound to a function a module-level class (or module) holds,
``derivs = Derivatives.pend`` (a static method given to an integrator), is called
by that dotted name, ``Derivatives.pend(f, t)``; and a comparison ``derivs ==
Derivatives.pend`` (``!=``, ``is``, ``is not``) of two names that surely denote
functions is the constant it is (a function compares by identity): an integrator
dispatching on the right-hand side it is given compiles only the branch that
runs (the other may call the function with arguments it does not take).

A local bound only to one method of one object (``f = model.rhs``: an
integrator helper given ``model.rhs``, inlined in a time loop, leaves the
binding inside the loop) is called as that method, ``model.rhs(u, t)``, and the
binding, then unread, is dropped: the same call, where the object is one
object throughout (a parameter nothing rebinds, or a name bound once by a
statement of the function's top level to a new object of a user's class), its
class's attribute is a plain function (so reading it again makes the same
bound method: no property) and nothing in the function stores an attribute of
that name (which could shadow the method in the object).
"""

import inspect
import types
from collections import Counter

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.constant_flags import decided_truth
from tangent_ckpt.compiler.desugar.local_bindings import own_scope_nodes, parameter_names
from tangent_ckpt.compiler.frontend.parse import note_item
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (ReplacedNodes, copy_node, name_node,
                                                     statement_lists)


def resolve_function_names(parsed, fnode):
    """Rewrite, in ``fnode`` (``parsed``'s tree), each call of a local name that
    surely denotes one user function as a call of the name the function has in
    ``parsed``'s namespace.  Returns whether any call was rewritten."""
    bindings, unknown = _bindings(fnode)
    stored = {n.attr for n in gast.walk(fnode)  # Cls.f = g: Cls.f is not surely one function
              if isinstance(n, gast.Attribute) and not isinstance(n.ctx, gast.Load)}
    known = _own_defs(fnode, bindings)
    changed = True
    while changed:  # a local bound to a local bound to a function
        changed = False
        for name, values in bindings.items():
            if name in known or name in unknown:
                continue
            found = {id(f): f for f in (_denoted(parsed, v, bindings, known, unknown, stored)
                                        for v in values)}
            if len(found) == 1 and None not in found.values():
                known[name] = next(iter(found.values()))
                changed = True
    for name in _called_before_bound(fnode, {n for n, fn in known.items()
                                              if _library_function(fn)}):
        del known[name]  # Python may raise UnboundLocalError there: the lowering's refusal
    spelled, modules = {}, {}
    for name, fn in known.items():
        if isinstance(fn, gast.FunctionDef):  # a def of the function's own
            if name != fn.name:
                spelled[name] = fn.name
            continue
        if isinstance(fn, types.ModuleType):  # m = np: m.max(c) is np.max(c)
            global_name = _module_name(parsed, fn, bindings[name], bindings, unknown)
            if global_name is not None:
                modules[name] = global_name
            continue
        dotted = [v for v in bindings[name] if isinstance(v, gast.Attribute) and
                  _denoted(parsed, v, bindings, known, unknown, stored) is fn]
        spelling = _spelling(parsed, fn, bindings, unknown, dotted)
        if spelling is not None:
            spelled[name] = spelling
    methods = _bound_methods(parsed, fnode, bindings, unknown, known)
    rewritten = False
    # a nested def's or lambda's `f` may be its own
    for node in own_scope_nodes(fnode, comprehensions=False):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id in spelled:
            spelling = spelled[node.func.id]
            node.func = gast.copy_location(
                name_node(spelling) if isinstance(spelling, str) else copy_node(spelling),
                node.func)
            rewritten = True
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id in methods:
            obj, attr = methods[node.func.id]
            node.func = gast.copy_location(
                gast.Attribute(value=name_node(obj), attr=attr, ctx=gast.Load()), node.func)
            rewritten = True
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Subscript):
            # STEPPERS["heun"](u, dt), {"relu": relu, ...}["relu"](x): called by its name
            fn = _denoted(parsed, node.func, bindings, known, unknown, stored)
            spelling = None if fn is None else _spelling(parsed, fn, bindings, unknown, ())
            if spelling is not None:
                node.func = gast.copy_location(
                    name_node(spelling) if isinstance(spelling, str) else spelling, node.func)
                rewritten = True
        elif isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                isinstance(node.value.ctx, gast.Load) and node.value.id in modules:
            node.value = gast.copy_location(name_node(modules[node.value.id]), node.value)
            rewritten = True
    decided = _DecidedComparisons(parsed, bindings, known, unknown, stored)
    fnode.body = [decided.visit(stmt) for stmt in fnode.body]
    rewritten = rewritten or decided.rewritten
    if methods:
        _drop_unread_bindings(fnode, methods)
    chosen = {name for name in spelled  # lm = LIMITERS["minmod"]: a lookup, nothing else
              if all(isinstance(v, (gast.Subscript, gast.IfExp)) for v in bindings[name])}
    if chosen:  # handed on too (_step(u, lm)): read by the function's own name
        reads = {id(node): gast.copy_location(
                    name_node(spelled[node.id]) if isinstance(spelled[node.id], str)
                    else copy_node(spelled[node.id]), node)
                 for node in own_scope_nodes(fnode, comprehensions=False)
                 if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and
                 node.id in chosen}
        ReplacedNodes(reads).visit(fnode)
        rewritten = rewritten or bool(reads)
        _drop_unread_bindings(fnode, chosen)
    return rewritten


class _DecidedComparisons(gast.NodeTransformer):
    """``derivs == pend`` (``!=``, ``is``, ``is not``) of two names that surely
    denote functions (a local of ``known``, a module-level name, ``Cls.f``) as the
    constant it is, a function comparing by identity (an integrator dispatching on
    the right-hand side it is given: the branch not taken is then never compiled,
    as it never runs).  Nested functions, lambdas and comprehensions are left as
    they are (their names may be their own)."""

    def __init__(self, parsed, bindings, known, unknown, stored):
        self.parsed, self.bindings, self.known, self.unknown = parsed, bindings, known, unknown
        self.stored = stored
        self.rewritten = False

    def _left(self, node):
        return node

    visit_FunctionDef = visit_Lambda = visit_ListComp = visit_SetComp = _left
    visit_DictComp = visit_GeneratorExp = visit_ClassDef = _left

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) != 1 or not isinstance(node.ops[0], (gast.Eq, gast.NotEq, gast.Is,
                                                              gast.IsNot)):
            return node
        sides = []
        for side in (node.left, node.comparators[0]):
            if isinstance(side, gast.Name) and side.id in self.known:
                fn = self.known[side.id]
            else:
                fn = _denoted(self.parsed, side, self.bindings, self.known, self.unknown,
                              self.stored)
            if not isinstance(fn, types.FunctionType):
                return node
            sides.append(fn)
        same = sides[0] is sides[1]
        self.rewritten = True
        return gast.copy_location(gast.Constant(
            value=same if isinstance(node.ops[0], (gast.Eq, gast.Is)) else not same,
            kind=None), node)


def _bound_methods(parsed, fnode, bindings, unknown, known):
    """{local: (object name, method name)} for the locals bound only to one
    method of one object that surely stays what it was (see the module's
    docstring)."""
    found = {}
    for name, values in bindings.items():
        if name in known or name in unknown or not values:
            continue
        pairs = {(v.value.id, v.attr) if isinstance(v, gast.Attribute) and
                 isinstance(v.value, gast.Name) else None for v in values}
        if len(pairs) == 1 and None not in pairs:
            found[name] = next(iter(pairs))
    if not found:
        return {}
    stored_attrs = {n.attr for n in gast.walk(fnode)
                    if isinstance(n, gast.Attribute) and not isinstance(n.ctx, gast.Load)}
    stored_attrs |= {n.target.attr for n in gast.walk(fnode)
                     if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Attribute)}
    return {name: (obj, attr) for name, (obj, attr) in found.items()
            if attr not in stored_attrs and
            _plain_method(_class_of(parsed, fnode, obj, bindings, unknown), attr)}


def _class_of(parsed, fnode, obj, bindings, unknown):
    """The class of the object the local ``obj`` surely is throughout ``fnode``:
    bound once, by a statement of the top level, to ``Cls(...)`` of a user's
    class; or the first parameter of a method (``self``) nothing rebinds, its
    class read from the method's qualified name.  None where not known."""
    if obj in unknown:
        params = parameter_names(fnode)
        fn = getattr(parsed, "fn", None)
        stored = any(isinstance(n, gast.Name) and n.id == obj and
                     not isinstance(n.ctx, gast.Load)
                     for stmt in fnode.body for n in gast.walk(stmt))
        path = getattr(fn, "__qualname__", "").split(".")
        if not params or params[0] != obj or stored or obj in bindings or \
                len(path) != 2 or fnode.name != path[1]:
            return None
        cls = parsed.resolve(path[0])
        return cls if isinstance(cls, type) and \
            getattr(cls, path[1], None) is getattr(fn, "__func__", fn) else None
        # (``self`` may be of a subclass: _plain_method asks each of them too)
    values = bindings.get(obj, ())
    if len(values) != 1 or not isinstance(values[0], gast.Call):
        return None
    top = [s for s in fnode.body if isinstance(s, gast.Assign) and s.value is values[0] and
           len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)]
    if not top:
        return None
    local = set(bindings) | unknown
    cls = resolve_dotted(values[0].func, parsed.resolve, local)
    return cls if isinstance(cls, type) and cls.__module__ not in ("builtins",) else None


def _plain_method(cls, attr):
    """Is ``attr`` of ``cls``, and of each of its subclasses, a plain function (a
    method read as a bound method, the same each time it is read), set on no
    instance by ``__slots__``?"""
    if cls is None:
        return False
    try:
        value = inspect.getattr_static(cls, attr)
    except AttributeError:
        return False
    if not isinstance(value, types.FunctionType) or \
            any(attr in getattr(c, "__slots__", ()) for c in cls.__mro__):
        return False
    return all(_plain_method(sub, attr) for sub in cls.__subclasses__())


def _drop_unread_bindings(fnode, methods):
    """Remove the bindings ``f = obj.meth`` of the ``methods`` locals no longer
    read (reading a plain method computes nothing; nor does ``LIMITERS["minmod"]``
    of a module-level dict holding that key, nor a choice between such values)."""
    read = {n.id for n in gast.walk(fnode)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Store)}
    for block in statement_lists(fnode):
        for stmt in list(block):
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name) and \
                    stmt.targets[0].id in methods and stmt.targets[0].id not in read:
                block.remove(stmt)
                if not block:
                    block.append(gast.copy_location(gast.Pass(), stmt))


def _module_name(parsed, module, values, bindings, unknown):
    """The module-level name a local bound only to ``module`` (``m = np``) may be
    spelled with: one of the names it is bound to that denotes it there."""
    for value in values:
        if isinstance(value, gast.Name) and value.id not in bindings and \
                value.id not in unknown and parsed.resolve(value.id) is module:
            return value.id
    return None


def _own_defs(fnode, bindings):
    """{name: def node} for the names of ``fnode``'s own scope bound by one ``def``
    alone (no other binding, no decorator)."""
    defs = [node for node in own_scope_nodes(fnode, comprehensions=False)
            if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef))]
    if not defs:
        return {}
    times = Counter(node.name for node in defs)
    stored = {node.id for node in own_scope_nodes(fnode, comprehensions=False)
              if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load)}
    declared = _declared(fnode)
    return {node.name: node for node in defs
            if isinstance(node, gast.FunctionDef) and not node.decorator_list and
            times[node.name] == 1 and node.name not in bindings and
            node.name not in stored and node.name not in declared}


def _declared(fnode):
    """The names ``fnode`` declares ``global`` or ``nonlocal``, or a nested scope
    declares ``nonlocal`` (which may rebind them)."""
    return {name for node in gast.walk(fnode) if isinstance(node, (gast.Global, gast.Nonlocal))
            for name in node.names}


def _denoted(parsed, value, bindings, known, unknown, stored=frozenset()):
    """The user function ``value`` (a name, or a dotted name of a module-level
    class or module: ``Derivatives.pend``, a static method, whose attribute the
    function stores nowhere: ``stored``) surely denotes, or None."""
    if isinstance(value, gast.Attribute):
        if value.attr in stored:
            return None
        root = value
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in bindings or root.id in unknown or \
                not isinstance(parsed.resolve(root.id), (type, types.ModuleType)):
            return None
        fn = resolve_dotted(value, parsed.resolve, set())
        if isinstance(fn, types.FunctionType) or \
                isinstance(parsed.resolve(root.id), types.ModuleType) and _library_function(fn):
            return fn
        return None
    if isinstance(value, gast.IfExp):  # minmod if "minmod" == "minmod" else vanleer
        test = decided_truth(value.test)
        if test is None:
            return None
        return _denoted(parsed, value.body if test else value.orelse, bindings, known,
                        unknown, stored)
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Dict):
        # {"tanh": np.tanh, "relu": relu}["relu"]: the display's item of that key
        return _display_item(parsed, value, bindings, known, unknown, stored)
    if isinstance(value, gast.Subscript):  # LIMITERS["minmod"], a module-level dict
        return _table_item(parsed, value, bindings, unknown)
    if not isinstance(value, gast.Name):
        return None
    if value.id in bindings or value.id in unknown:
        return known.get(value.id)
    fn = parsed.resolve(value.id)
    return fn if isinstance(fn, (types.FunctionType, types.ModuleType)) else None


def _spelling(parsed, fn, bindings, unknown, dotted):
    """How the generated code names the function ``fn`` (a module-level name the
    function does not bind, one of ``dotted``: ``Derivatives.pend``, or the
    attribute of a module for NumPy's or a builtin), or None."""
    global_name = fn.__name__
    if global_name not in bindings and global_name not in unknown and \
            parsed.resolve(global_name) is fn:
        return global_name
    if dotted:  # a function a module-level class holds: Derivatives.pend
        return dotted[0]
    if _library_function(fn):  # TABLE["tanh"] holding np.tanh: np.tanh
        return module_attribute(parsed, fn, bindings, unknown)
    return None


def _display_item(parsed, node, bindings, known, unknown, stored):
    """The function ``{key: f, ...}[key]`` (a dict display of constant keys and
    names or dotted names, each read when the display is made, which has no
    other effect) denotes, or None."""
    table, key = node.value, node.slice
    if not isinstance(key, gast.Constant) or \
            not all(isinstance(k, gast.Constant) for k in table.keys) or \
            not all(isinstance(v, (gast.Name, gast.Attribute)) for v in table.values):
        return None
    chosen = [v for k, v in zip(table.keys, table.values) if k.value == key.value]
    if not chosen:
        return None
    if not all(_denoted(parsed, v, bindings, known, unknown, stored) is not None
               for v in table.values):
        return None  # (an item Python reads may be unbound: left to the lowering)
    return _denoted(parsed, chosen[-1], bindings, known, unknown, stored)


def module_attribute(parsed, fn, bindings, unknown):
    """``np.tanh``: a module-level name of a module holding ``fn`` under its own
    name, read as that attribute, else None."""
    attr = getattr(fn, "__name__", None)
    for name, value in sorted(parsed.globals.items()):
        if isinstance(value, types.ModuleType) and name not in bindings and \
                name not in unknown and attr and getattr(value, attr, None) is fn and \
                parsed.resolve(name) is value:
            return gast.Attribute(value=name_node(name), attr=attr, ctx=gast.Load())
    return None


def _table_item(parsed, node, bindings, unknown):
    """The user function (or NumPy's) ``TABLE["key"]`` is, ``TABLE`` a module-level
    dict the function does not bind (read when compiling, as a module-level
    function's name is), else None."""
    table, key = node.value, node.slice
    if not (isinstance(table, gast.Name) and isinstance(key, gast.Constant)) or \
            table.id in bindings or table.id in unknown:
        return None
    found = parsed.resolve(table.id)
    if type(found) is not dict:
        return None
    try:
        fn = found[key.value]
    except (KeyError, TypeError):
        return None
    if not (isinstance(fn, types.FunctionType) or _library_function(fn)):
        return None
    note_item(found, key.value, fn)
    return fn


def _library_function(fn):
    """Is ``fn`` a function of NumPy or a builtin one (``np.tanh``, a ufunc;
    ``np.linalg.norm``, which NumPy 2 wraps in a dispatcher object and NumPy 1
    does not; ``math.exp``), which a module's attribute surely names, so that a
    local bound only to it (``self.act = np.tanh`` on an object made in a loop
    leaves ``cell_act = np.tanh`` there) is called by that dotted name?"""
    return isinstance(fn, (np.ufunc, types.BuiltinFunctionType)) or \
        type(fn).__name__ == "_ArrayFunctionDispatcher" and type(fn).__module__ == "numpy"


def _called_before_bound(fnode, names):
    """The ``names`` some call of which may run before any binding of the name
    has (a binding only in a branch: ``if c > 0: act = np.sin`` then
    ``act(x)``): a binding counts for the statements after it in its own block
    and in the blocks nested in those."""
    early = set()
    if not names:
        return early

    def calls(node, bound):
        for n in gast.walk(node):
            if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                    n.func.id in names and n.func.id not in bound:
                early.add(n.func.id)

    def block(stmts, bound):
        bound = set(bound)
        for stmt in stmts:
            inner = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
            inner = [b for b in inner if isinstance(b, list) and b and
                     isinstance(b[0], gast.stmt)]
            handlers = getattr(stmt, "handlers", None) or []
            if not inner and not handlers:
                calls(stmt, bound)
                if isinstance(stmt, gast.Assign):
                    bound |= {t.id for t in stmt.targets if isinstance(t, gast.Name)}
                continue
            for field, value in gast.iter_fields(stmt):  # the test, the iterable, the items
                if field not in ("body", "orelse", "finalbody", "handlers"):
                    for part in value if isinstance(value, list) else [value]:
                        if isinstance(part, gast.AST):
                            calls(part, bound)
            for body in inner + [h.body for h in handlers]:
                block(body, bound)

    block(fnode.body, set())
    return early


def _bindings(fnode):
    """``({local: [value nodes]}, {locals bound some other way})`` over
    ``fnode``'s own scope (a nested scope's names are its own)."""
    bindings, unknown = {}, set()
    args = fnode.args
    unknown |= {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    unknown |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
    paired = set()
    for node in own_scope_nodes(fnode, comprehensions=False):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                _pair(target, node.value, bindings, paired)
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            unknown.add(node.name)
        elif isinstance(node, (gast.Import, gast.ImportFrom)):
            unknown |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (gast.Global, gast.Nonlocal)):
            unknown |= set(node.names)
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and \
                id(node) not in paired:
            unknown.add(node.id)
    unknown |= {n.target.id for n in gast.walk(fnode) if isinstance(n, gast.NamedExpr)}
    return bindings, unknown


def _pair(target, value, bindings, paired):
    """Note ``target = value`` (``a, b = u, v`` item by item)."""
    if isinstance(target, gast.Name):
        bindings.setdefault(target.id, []).append(value)
        paired.add(id(target))
    elif isinstance(target, (gast.Tuple, gast.List)) and \
            isinstance(value, (gast.Tuple, gast.List)) and \
            len(target.elts) == len(value.elts) and \
            not any(isinstance(e, gast.Starred) for e in target.elts + value.elts):
        for t, v in zip(target.elts, value.elts):
            _pair(t, v, bindings, paired)
