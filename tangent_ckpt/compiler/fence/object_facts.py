"""Which attributes of an object the differentiated code makes are surely NumPy
arrays or numbers, for the aliasing fence (``aliasing.py``); also which hold a
list of tuples with numbers at some places (:func:`numbered_items`: ``for i, j,
r in self.samples`` visits its items).

A method read alone cannot tell ``self.a * x`` (NumPy arithmetic, a new array)
from list repetition (a list holding the arrays ``self.a`` holds): ``self`` is
a parameter, and the caller may hand any object.  An object of a user's class
made in the differentiated code by ``Cls(...)`` (the lowering's ``ObjectValue``,
never given by the caller) is different: every store into its attributes is in
the code the fence reads -- ``__init__``, the class's methods, the functions the
code reaches -- so an attribute that every such store binds to an array or a
number (``self.v = np.full(n, v0)``, ``self.v += dv * dt``,
``self.x = x + h * k``) is one at every moment.  The fence then fences the
class's methods for such a receiver with these facts (``fence_once.py``); the
lowering uses that version only for a receiver made in the code.

What the facts assume, and where that is checked:

- no reflection in the code the fence reads (``setattr``, ``delattr``,
  ``vars``, ``__dict__``, ``__class__``, ``__setattr__``): none, else no facts;
- the class and its bases define no attribute hooks (``__getattr__``,
  ``__getattribute__``, ``__setattr__``, ``__delattr__``), no ``__new__`` of
  their own, and are no dataclass (whose fields are bound without a store the
  fence could read); an attribute also named in a class (a default, a
  property, a method) gets no fact;
- every store of an attribute of that name, on any object, anywhere in the
  code read, binds a value proved numeric (:func:`surely_numeric`) -- read as a
  greatest fixpoint: each store is checked assuming the facts hold before it,
  which is an induction over the run;
- ``self.attr`` reads count as numeric only in a method of the class called on
  its object (a method also reached as a plain function, ``Cls.m(other)``, may
  get another object: there ``self.attr`` proves nothing).

"Numeric" follows ``Origins.surely_not_a_sequence``: an operator with one
operand proved an array or a number is NumPy (or Python number) arithmetic.
The one way that could be list repetition -- ``lst * k`` with ``k`` a NumPy
integer scalar -- needs a repetition count known only at run time, which the
lowering refuses on its own (``lower/containers.py``).
"""

import dataclasses
import inspect
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.frontend.reached_functions import user_class
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.memory_sharing import returns_new
from tangent_ckpt.errors import TangentCkptError

_HOOKS = ("__getattr__", "__getattribute__", "__setattr__", "__delattr__")
_REFLECTING_NAMES = frozenset({"setattr", "delattr", "vars"})
_REFLECTING_ATTRIBUTES = frozenset({"__dict__", "__class__", "__setattr__", "__delattr__"})
_NUMERIC_ATTRIBUTES = frozenset({"T", "real", "imag"})


class Code:
    """One function the fence reads: its tree, how it resolves free names, and
    the name of its object parameter where it is a method of the class under
    study called on that class's object (else None)."""

    __slots__ = ("fnode", "resolve", "me", "locals")

    def __init__(self, fnode, resolve, me=None):
        self.fnode = fnode
        self.resolve = resolve
        self.me = me
        self.locals = _bound_names(fnode)


def receiver_classes(codes):
    """The user classes the code constructs by name (``Model(...)``)."""
    found = []
    for code in codes:
        for node in gast.walk(code.fnode):
            if isinstance(node, gast.Call):
                obj = resolve_dotted(node.func, code.resolve, code.locals)
                if user_class(obj) and obj not in found:
                    found.append(obj)
    return found


def numeric_attributes(cls, codes):
    """The attributes every object of ``cls`` made in the code holds only as NumPy
    arrays or numbers, given ``codes`` (every function the code may run); an
    empty set when the class or the code allows no such fact."""
    if not _plain_class(cls) or any(_reflects(code.fnode) for code in codes):
        return frozenset()
    stores = []
    for code in codes:
        alone = Code(code.fnode, code.resolve)  # the same code, self.x proving nothing
        for target, attr, value in _stores(code.fnode):
            # only a store into the method's own object may read its facts: in
            # other.v = self.w, self may be an object made elsewhere
            own = code.me is not None and isinstance(target, gast.Name) and \
                target.id == code.me
            stores.append((code if own else alone, attr, value))
    facts = {attr for code, attr, _ in stores if code.me is not None}
    facts -= _class_names(cls)
    changed = True
    while changed:
        changed = False
        for code, attr, value in stores:
            if attr in facts and (value is None or
                                  not surely_numeric(value, code, facts, set())):
                facts.discard(attr)
                changed = True
    return frozenset(facts)


def numbered_items(cls, codes):
    """{attribute: positions} for the attributes every object of ``cls`` made in
    the code holds only as a list of tuples whose items at ``positions`` are
    numbers that hold no memory (``self.samples = [(i, j, R[i, j]) for i in
    range(n) for j in range(m)]``: ``i`` and ``j``, a counter of a ``range``, or a
    number constant): ``for i, j, r in self.samples`` then binds ``i`` and ``j``
    to numbers no write can change.  Every store of an attribute of that name,
    in ``codes`` (every function the code may run, on any object), must bind
    such a list (``_numbered_positions``), and every read of it be a loop's (or
    a comprehension's) iterable or ``len``'s argument: no other name ever holds
    the list, so nothing else stores into it or replaces a tuple of it."""
    if not _plain_class(cls) or any(_reflects(code.fnode) for code in codes):
        return {}
    found, refused = {}, set()
    for code in codes:
        for _, attr, value in _stores(code.fnode):
            made = _numbered_positions(value, code)
            if made is None:
                refused.add(attr)
                continue
            size, known = found.setdefault(attr, made)
            if size != made[0]:
                refused.add(attr)
            found[attr] = (size, known & made[1])
    for attr in refused | _class_names(cls):
        found.pop(attr, None)
    for code in codes:
        for attr in _read_otherwise(code):
            found.pop(attr, None)
    return {attr: positions for attr, (_, positions) in found.items() if positions}


def _numbered_positions(value, code):
    """(length, positions) of the tuples in the list ``value`` makes, positions
    holding a counter of a ``range`` loop or a number constant: ``value`` a list
    comprehension of tuple displays, or a name of ``code`` bound once to ``[]``
    and used only to append tuple displays to and to be stored (desugar's
    ``comprehension_loops.py`` writes the comprehension so); None otherwise."""
    if isinstance(value, gast.ListComp):
        counters = set()
        for generator in value.generators:
            target, it = generator.target, generator.iter
            if isinstance(target, gast.Name) and isinstance(it, gast.Call) and \
                    resolve_dotted(it.func, code.resolve, code.locals) is range:
                counters.add(target.id)
        bound = [n.id for g in value.generators for n in gast.walk(g.target)
                 if isinstance(n, gast.Name)] + \
            [n.target.id for n in gast.walk(value) if isinstance(n, gast.NamedExpr)]
        return _tuple_positions([value.elt], {c for c in counters if bound.count(c) == 1})
    if not isinstance(value, gast.Name) or value.id not in code.locals:
        return None
    parents = {}
    for node in gast.walk(code.fnode):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    made, appended = [], []
    for node in gast.walk(code.fnode):
        if not (isinstance(node, gast.Name) and node.id == value.id) or node is value:
            continue
        parent = parents.get(node)
        if isinstance(node.ctx, gast.Load):
            call = parents.get(parent)
            if isinstance(parent, gast.Attribute) and parent.attr == "append" and \
                    isinstance(call, gast.Call) and call.func is parent and \
                    len(call.args) == 1 and not call.keywords and \
                    isinstance(parents.get(call), gast.Expr):
                appended.append(call.args[0])
                continue
            return None  # read otherwise: another name may hold the list
        if isinstance(parent, gast.Assign) and parent.targets == [node] and \
                isinstance(parent.value, gast.List) and not parent.value.elts:
            made.append(parent)
        else:
            return None
    if len(made) != 1 or not appended:
        return None
    counters = set()
    for node in gast.walk(code.fnode):
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name) and \
                isinstance(node.iter, gast.Call) and \
                resolve_dotted(node.iter.func, code.resolve, code.locals) is range:
            counters.add(node.target.id)
    stores = [n.id for n in gast.walk(code.fnode)
              if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)]
    return _tuple_positions(appended, {c for c in counters if stores.count(c) == 1})


def _tuple_positions(elements, counters):
    """(length, positions) where every one of ``elements`` is a tuple display of
    that length holding a name of ``counters`` or a number constant there."""
    if not elements or not all(isinstance(e, gast.Tuple) and
                               not any(isinstance(i, gast.Starred) for i in e.elts)
                               for e in elements):
        return None
    size = len(elements[0].elts)
    if any(len(e.elts) != size for e in elements):
        return None
    return size, frozenset(
        k for k in range(size)
        if all(isinstance(e.elts[k], gast.Name) and e.elts[k].id in counters or
               isinstance(e.elts[k], gast.Constant) and
               type(e.elts[k].value) in (int, float, bool, complex) for e in elements))


def _read_otherwise(code):
    """The attributes ``code`` reads (``x.a``, on any object) other than as a
    loop's or comprehension's iterable or as the argument of ``len``: another
    name may hold the value there."""
    allowed = set()
    for node in gast.walk(code.fnode):
        if isinstance(node, (gast.For, gast.comprehension)):
            allowed.add(id(node.iter))
        elif isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords and \
                resolve_dotted(node.func, code.resolve, code.locals) is len:
            allowed.add(id(node.args[0]))
    return {node.attr for node in gast.walk(code.fnode)
            if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load) and
            id(node) not in allowed}


def shadows_a_method(cls, codes):
    """True when the code stores an attribute named like a method of ``cls``
    (``self.step = f``): the instance's value then hides the method, so
    ``self.step()`` is not known to run the class's ``step``."""
    names = {name for klass in cls.__mro__ if klass is not object
             for name, raw in vars(klass).items() if callable(raw) or
             isinstance(raw, (staticmethod, classmethod, property))}
    return any(attr in names for code in codes for _, attr, _ in _stores(code.fnode))


def object_parameter(fnode):
    """The first parameter of a method's tree, when it is never rebound."""
    args = fnode.args.posonlyargs + fnode.args.args
    if not args:
        return None
    me = args[0].id
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and node.id == me and \
                not isinstance(node.ctx, gast.Load) and node is not args[0]:
            return None
        if isinstance(node, (gast.Global, gast.Nonlocal)) and me in node.names:
            return None
    return me


def runs_method(cls, fn):
    """True when an object of ``cls`` runs ``fn`` for one of its methods."""
    return any(vars(klass).get(fn.__name__) is fn for klass in cls.__mro__)


def plain_instance_attribute(cls, attr):
    """True when ``obj.attr`` on an object of ``cls`` (a plain class) reads what
    the object holds in its ``__dict__``: no class of its MRO names ``attr``."""
    return _plain_class(cls) and attr not in _class_names(cls)


def number_attributes(cls, fnode, name):
    """The attributes of the object ``name`` (bound by ``name = cls(...)`` in
    ``fnode``) that surely hold a Python number at every moment, so that
    ``self.t += 1`` rebinds them and writes no array: every store of an
    attribute of that name, in ``fnode`` and in every function of ``cls``, binds
    a number constant or arithmetic of numbers and of such attributes
    (``self.t = 0``, ``self.t += 1``, ``self.t = self.t * 2``).  Empty where the
    object may be stored into elsewhere: ``name`` or a method's ``self`` handed
    on as a value, reflection, attribute hooks."""
    if not _plain_class(cls) or not _kept_to_itself(fnode, name):
        return frozenset()
    return _numbers_stored(cls, [(fnode, name)])


def number_attributes_of_class(cls, fnodes):
    """The attributes every object of ``cls`` surely holds a Python number in, at
    every moment, wherever it is kept (a list, a dict): every store of an
    attribute of that name, in each of ``fnodes`` (every function the code may
    run, on any object) and in every function of ``cls``, binds a number constant
    or arithmetic of numbers and of such attributes of ``self``."""
    if not _plain_class(cls):
        return frozenset()
    return _numbers_stored(cls, [(fnode, None) for fnode in fnodes])


def _numbers_stored(cls, trees):
    """:func:`number_attributes` for ``trees`` ((tree, the name of the object in
    it)) and the functions of ``cls``."""
    trees = list(trees)
    for klass in cls.__mro__:
        for raw in vars(klass).values():
            fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
            if isinstance(fn, types.FunctionType):
                try:
                    tree = parse_function(fn).node
                except TangentCkptError:
                    return frozenset()
                me = object_parameter(tree)
                if me is None or not _kept_to_itself(tree, me):
                    return frozenset()
                trees.append((tree, me))
    if any(_reflects(tree) for tree, _ in trees):
        return frozenset()
    stores = [(attr, value, me) for tree, me in trees for _, attr, value in _stores(tree)]
    numbers = {attr for attr, _, _ in stores} - _class_names(cls)
    changed = True
    while changed:
        changed = False
        for attr, value, me in stores:
            if attr in numbers and (value is None or not _surely_number(value, numbers, me)):
                numbers.discard(attr)
                changed = True
    return frozenset(numbers)


def _kept_to_itself(fnode, name):
    """Whether ``name`` is used in ``fnode`` only as ``name.attr`` (read, stored,
    or a method called on it), never as a value handed anywhere."""
    parents = {}
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and node.id == name and \
                isinstance(node.ctx, gast.Load) and \
                not isinstance(parents.get(node), gast.Attribute):
            return False
    return True


def _surely_number(node, numbers, me):
    """``0``, ``-1.5``, ``self.t + 1``, ``2 * self.t``: a number, given that the
    attributes ``numbers`` of the object ``me`` names hold numbers."""
    if isinstance(node, gast.Constant):
        return isinstance(node.value, (int, float, complex))
    if isinstance(node, gast.UnaryOp):
        return _surely_number(node.operand, numbers, me)
    if isinstance(node, gast.BinOp):
        return _surely_number(node.left, numbers, me) and \
            _surely_number(node.right, numbers, me)
    if isinstance(node, gast.Attribute):
        return node.attr in numbers and isinstance(node.value, gast.Name) and \
            node.value.id == me
    return False


def plain_attribute_store(cls, attr):
    """True when ``obj.attr = v`` on an object of ``cls`` only binds ``v`` in the
    object's ``__dict__``: no attribute hooks (``__setattr__``, ``__getattr__``,
    ...) and no data descriptor named ``attr`` (a property's setter, a
    ``__slots__`` member) in its MRO."""
    if any(inspect.getattr_static(cls, hook, None) is not getattr(object, hook, None)
           for hook in _HOOKS):
        return False
    raw = inspect.getattr_static(cls, attr, None)
    return not (hasattr(type(raw), "__set__") or hasattr(type(raw), "__delete__"))


def surely_numeric(node, code, facts, seen):
    """True when ``node`` (in ``code``) is surely a NumPy array or a number, never
    a list, tuple, dict or other container (``facts``: the attributes of
    ``code.me`` known numeric)."""
    if isinstance(node, gast.Constant):
        return isinstance(node.value, (float, complex))
    if isinstance(node, gast.UnaryOp):
        return isinstance(node.op, (gast.USub, gast.UAdd)) and \
            surely_numeric(node.operand, code, facts, seen)
    if isinstance(node, gast.BinOp):
        return any(surely_numeric(o, code, facts, seen) for o in (node.left, node.right))
    if isinstance(node, gast.IfExp):
        return all(surely_numeric(o, code, facts, seen) for o in (node.body, node.orelse))
    if isinstance(node, gast.Subscript):  # a view or a scalar of an array
        return surely_numeric(node.value, code, facts, seen)
    if isinstance(node, gast.Attribute):
        if isinstance(node.value, gast.Name) and node.value.id == code.me and \
                code.me is not None:
            return node.attr in facts
        return node.attr in _NUMERIC_ATTRIBUTES and surely_numeric(node.value, code, facts,
                                                                   seen)
    if isinstance(node, gast.Call):
        func = node.func
        if any(k.arg == "out" for k in node.keywords):
            return False
        fn = resolve_dotted(func, code.resolve, code.locals)
        if fn is not None:
            return _array_function(fn, node)
        return isinstance(func, gast.Attribute) and _numeric_method(func.attr) and \
            surely_numeric(func.value, code, facts, seen)
    if isinstance(node, gast.Name):
        if node.id == code.me or node.id in seen or node.id not in code.locals:
            return False
        seen.add(node.id)
        try:
            values = _only_values(code.fnode, node.id)
            return values is not None and \
                all(surely_numeric(v, code, facts, seen) for v in values)
        finally:
            seen.discard(node.id)
    return False


def _array_function(fn, call):
    """``np.full(n, v0)``, ``np.cos(x) ** 4``: a NumPy function that returns one new
    array or scalar: a ufunc of one output, or a function whose row in the rule
    registry says ``returns=`` (never a list or tuple: not ``np.meshgrid``,
    ``np.split``, ``np.linalg.eig``, ``np.where`` with one argument)."""
    if not callable(fn) or not registry.is_numpy_function(fn) or not returns_new(fn):
        return False
    if isinstance(fn, np.ufunc):
        return fn.nout == 1
    if fn is np.where:
        return len(call.args) == 3
    return registry.facts(fn).returns is not None


def _numeric_method(name):
    """``x.sum()``, ``x.astype(float)``: a method whose row says ``returns=`` (one
    array or number, never a list: not ``tolist``, ``nonzero``)."""
    facts = registry.method_facts(name)
    return facts is not None and facts.returns is not None


def _only_values(fnode, name):
    """The values of the ``name = value`` statements binding ``name``, when those
    are its only bindings in ``fnode`` (no parameter, loop or tuple target,
    augmented assignment, nested scope); else None."""
    values, stores = [], 0
    for node in gast.walk(fnode):
        if isinstance(node, gast.Assign):
            if len(node.targets) == 1 and isinstance(node.targets[0], gast.Name) and \
                    node.targets[0].id == name:
                values.append(node.value)
        elif isinstance(node, gast.Name) and node.id == name and \
                not isinstance(node.ctx, gast.Load):
            stores += 1
        elif isinstance(node, (gast.Global, gast.Nonlocal)) and name in node.names:
            return None
    # every store (parameters are Param-context names) is one of the assignments
    return values if values and stores == len(values) else None


def _stores(fnode):
    """(the object written, attribute, value or None) for every store into an
    attribute in ``fnode``: ``x.a = v`` gives ``v``, ``x.a += v`` gives ``v`` (an
    arithmetic update of an array or number is one), any other store (a tuple
    target, a loop target, ``del``) gives None."""
    for node in gast.walk(fnode):
        if isinstance(node, gast.Assign):
            for target in node.targets:
                if isinstance(target, gast.Attribute):
                    yield target.value, target.attr, node.value
                else:
                    for t in gast.walk(target):
                        if isinstance(t, gast.Attribute) and not isinstance(t.ctx, gast.Load):
                            yield t.value, t.attr, None
        elif isinstance(node, (gast.AugAssign, gast.AnnAssign)) and \
                isinstance(node.target, gast.Attribute):
            if node.value is not None:
                yield node.target.value, node.target.attr, node.value
        elif isinstance(node, gast.Attribute) and not isinstance(node.ctx, gast.Load) and \
                not _assigned_directly(fnode, node):
            yield node.value, node.attr, None


def _assigned_directly(fnode, target):
    for node in gast.walk(fnode):
        if isinstance(node, gast.Assign) and any(t is target for t in node.targets):
            return True
        if isinstance(node, (gast.AugAssign, gast.AnnAssign)) and node.target is target:
            return True
    return False


def _reflects(fnode):
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and node.id in _REFLECTING_NAMES:
            return True
        if isinstance(node, gast.Attribute) and node.attr in _REFLECTING_ATTRIBUTES:
            return True
    return False


def _plain_class(cls):
    if not inspect.isclass(cls) or dataclasses.is_dataclass(cls) or \
            cls.__new__ is not object.__new__:
        return False
    return all(inspect.getattr_static(cls, hook, None) is getattr(object, hook, None)
               for hook in _HOOKS)


def _class_names(cls):
    names = set()
    for klass in cls.__mro__:
        if klass is not object:
            names.update(vars(klass))
    return names


def _bound_names(fnode):
    names = set()
    args = fnode.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + \
            [x for x in (args.vararg, args.kwarg) if x is not None]:
        names.add(a.id)
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            names.add(node.id)
        elif isinstance(node, (gast.FunctionDef, gast.ClassDef)):
            names.add(node.name)
    return names
