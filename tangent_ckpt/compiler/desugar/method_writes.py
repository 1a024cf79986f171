"""What a method of a user's class writes, for the aliasing fence.

``kf.update(z)`` on ``kf = KalmanFilter(...)`` made in the function runs
``KalmanFilter.update``, not ``dict.update``: the fence looks the method up
instead of judging it by its name.  A method that only rebinds attributes
(``self.x = self.F @ self.x``) writes no array in place; one that adds into an
attribute (``self.P += Q``, in place for an array), writes an item
(``self.P[0] = 1``; ``self.h['w'] = v`` too: ``h`` may be an array), calls an in-place method on one (``self.h.append(v)``),
passes ``out=`` or hands an attribute to another user function may change the
arrays the object holds -- which the caller may also name (``m = Model(P)``
keeps ``P``).
"""

import builtins
import inspect
import types

import gast

from tangent_ckpt.compiler.memory_sharing import (
    FRESH_METHODS, VIEW_METHODS, WRITING_FUNCTIONS, WRITING_METHODS, call_new_by_default,
    returns_new,
)
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.frontend.reached_functions import user_class
from tangent_ckpt.errors import TangentCkptError



def constructed_classes(fnode, resolve, local_names):
    """{local name: classes} for the names of ``fnode`` bound only by
    ``name = Cls(...)`` with ``Cls`` a user's class (``resolve`` maps a
    function node to the object it denotes, or None)."""
    found, other, constructing = {}, set(), set()
    for node in gast.walk(fnode):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name):
            value = node.value
            cls = resolve(value.func) if isinstance(value, gast.Call) else None
            if user_class(cls):
                found.setdefault(node.targets[0].id, set()).add(cls)
                constructing.add(id(node.targets[0]))
        elif isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and \
                id(node) not in constructing:
            other.add(node.id)  # any other binding: a value, a loop or tuple target
    args = fnode.args
    params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
    return {name: classes for name, classes in found.items()
            if name not in other and name not in params and name in local_names}


def method_of(classes, name):
    """The functions ``obj.name(...)`` runs for an object of one of ``classes``,
    or None when one of them is not a plain method written in Python."""
    fns = []
    for cls in classes:
        raw = inspect.getattr_static(cls, name, None)
        if not isinstance(raw, types.FunctionType):
            return None
        fns.append(raw)
    return fns


def writes_self_in_place(fn, seen=None, numbers=frozenset(), cls=None, me=None,
                         dicts=frozenset()):
    """Whether method ``fn`` may write in place into an array its object holds
    (also through another method of the object it calls, ``self.other()`` or
    ``super().other()``); True when unsure.
    ``numbers``: attributes known to hold a number (``self.t += 1`` rebinds them,
    object_facts.number_attributes); ``cls``: the object's class where known (the
    methods ``self.other()`` and ``super().other()`` run are its: a subclass may
    override them, and ``super()`` follows its method resolution order); ``me``: the
    parameter holding the object, for a function handed one (``train(net, lr)``
    writing ``net.W -= ...``), else the method's first; ``dicts``: the attributes
    known to hold a dict (``self.grads['b'] = v`` binds an entry, it writes no
    array)."""
    seen = set() if seen is None else seen
    if (fn.__code__, me) in seen:
        return False
    seen.add((fn.__code__, me))
    try:
        fnode = parse_function(fn).node
    except TangentCkptError:
        return True
    args = fnode.args.posonlyargs + fnode.args.args
    if not args:
        return True
    if me is None:
        me = args[0].id
    elif me not in {a.id for a in _parameters(fnode)}:
        return True
    fresh = _fresh_attributes(fn, fnode, me)
    for node in gast.walk(fnode):
        if isinstance(node, gast.AugAssign) and _rooted_at(node.target, me) and \
                not isinstance(node.target, gast.Name) and \
                not _into_fresh(node.target, me, fresh) and \
                not _a_number(node.target, me, numbers):
            return True  # self.P += Q (self.params['W'] += v: into the array the dict holds)
        if isinstance(node, (gast.Assign, gast.AugAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            if any(isinstance(t, gast.Subscript) and _rooted_at(t, me) and
                   not _into_fresh(t, me, fresh) and
                   not (isinstance(node, gast.Assign) and _into_dict(t, me, dicts))
                   for target in targets for t in gast.walk(target)):
                return True  # self.P[0] = 1 (or self.h['w'] = v: not known to be a dict)
        if isinstance(node, gast.Call):
            if any(k.arg == "out" for k in node.keywords):
                return True
            func = node.func
            if isinstance(func, gast.Attribute) and _is_super(func.value, me):
                other = _super_method(fn, cls, func.attr, func.value)  # super().grow()
                if other is object.__init__ and not node.args:
                    continue  # the end of a chain of __init__s: does nothing
                if not isinstance(other, types.FunctionType) or \
                        writes_self_in_place(other, seen, numbers, cls, dicts=dicts) or \
                        any(_rooted_at(a, me) for a in node.args):
                    return True
            elif isinstance(func, gast.Attribute) and \
                    _rooted_at(_through_fresh_calls(func.value), me):
                if isinstance(func.value, gast.Name):  # self.other(...): its writes
                    owner = cls if cls is not None else _owner(fn)
                    other = inspect.getattr_static(owner, func.attr, None) \
                        if owner is not None else None
                    if not isinstance(other, types.FunctionType) or \
                            writes_self_in_place(other, seen, numbers, cls, dicts=dicts):
                        return True
                elif func.attr in WRITING_METHODS or \
                        func.attr not in FRESH_METHODS | VIEW_METHODS:
                    return True  # self.h.append(v), self.layer.step(): may write
            elif any(_rooted_at(a, me) for a in node.args) and \
                    not _library_call(fn, func) and not _array_method(fn, func, me, fnode) and \
                    _hands_on_writing(fn, node, me, seen, numbers, cls):
                return True  # helper(self.P) may write into it
    return False


def _into_dict(target, me, dicts):
    """``self.h['w']`` (the store's own subscript) with ``h`` one of ``dicts``."""
    return isinstance(target.value, gast.Attribute) and target.value.attr in dicts and \
        isinstance(target.value.value, gast.Name) and target.value.value.id == me


def _a_number(target, me, numbers):
    """``self.t``, an attribute known to hold a number: ``self.t += 1`` rebinds it."""
    return isinstance(target, gast.Attribute) and target.attr in numbers and \
        isinstance(target.value, gast.Name) and target.value.id == me


def _fresh_attributes(fn, fnode, me):
    """The attributes ``x`` that method ``fn`` makes a new array of itself
    (``self.acc = np.zeros(n)``, its one binding of ``self.x``, a statement of its
    own body) before any other statement names ``self.x``, and afterwards only
    writes into (``self.acc[j] = v``, ``self.acc += v``) or reads into arithmetic
    (``self.acc[j - 1] * a``, ``np.sum(self.acc)``): its writes change only that new
    array, which nothing outside the call can hold yet.  None where ``self`` itself
    is handed on, another method is called on it, or the method yields."""
    if any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(fnode)):
        return frozenset()
    parents = {}
    own = next(a for a in _parameters(fnode) if a.id == me)
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    uses, inner = {}, set()  # attribute -> its nodes; those inside a nested function
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and node.id == me and node is not own:
            parent = parents.get(node)
            if not isinstance(parent, gast.Attribute) or parent.attr == "__dict__" or \
                    isinstance(parents.get(parent), gast.Call) and parents[parent].func is parent:
                return frozenset()  # self handed on, or self.step(): may keep self.x
            uses.setdefault(parent.attr, []).append(parent)
        if node is not fnode and isinstance(node, (gast.FunctionDef, gast.Lambda)):
            inner |= {a.attr for a in gast.walk(node) if isinstance(a, gast.Attribute)}
    fresh = set()
    for attr, nodes in uses.items():
        stores = [n for n in nodes if isinstance(n.ctx, gast.Store) and
                  not isinstance(parents.get(n), gast.AugAssign)]
        if attr in inner or len(stores) != 1:
            continue
        made = next((k for k, s in enumerate(fnode.body) if isinstance(s, gast.Assign) and
                     s.targets == [stores[0]]), None)
        if made is None or not _new_array_call(fn, fnode.body[made].value):
            continue
        later = {id(n) for s in fnode.body[made + 1:] for n in gast.walk(s)}
        if all(n is stores[0] or (id(n) in later and _only_written_or_read(fn, n, parents))
               for n in nodes):
            fresh.add(attr)
    return frozenset(fresh)


def _new_array_call(fn, node):
    """A call of a NumPy function that always makes a new array (``np.zeros(n)``,
    ``np.array(x)``, not ``np.asarray(x)``)."""
    if not isinstance(node, gast.Call) or not _library_call(fn, node.func):
        return False
    obj = _resolved(fn, node.func)
    return call_new_by_default(obj, node) or returns_new(obj)


def _only_written_or_read(fn, node, parents):
    """``self.x`` where its array is written into (``self.x[j] = v``, ``self.x +=
    v``) or read into a new value (arithmetic, a comparison, a NumPy function
    that makes a new array), never kept (a plain binding, a container, a call)."""
    parent = parents.get(node)
    if isinstance(parent, gast.AugAssign) and parent.target is node:
        return True
    if isinstance(parent, gast.Subscript) and parent.value is node:
        if isinstance(parent.ctx, gast.Store):
            return True  # self.x[j] = v, self.x[j] += v
        node, parent = parent, parents.get(parent)
    if isinstance(parent, (gast.BinOp, gast.UnaryOp, gast.Compare)):
        return True
    return isinstance(parent, gast.Call) and node in parent.args and \
        _new_array_call(fn, parent)


def _into_fresh(target, me, fresh):
    """Whether the write target ``target`` is ``self.x`` or ``self.x[...]`` with ``x``
    one of the ``fresh`` attributes (:func:`_fresh_attributes`)."""
    if isinstance(target, gast.Subscript):
        target = target.value
    return isinstance(target, gast.Attribute) and target.attr in fresh and \
        isinstance(target.value, gast.Name) and target.value.id == me


def _through_fresh_calls(node):
    """``self.F.dot(self.P)`` -> ``self.F``: the receiver a chain of calls of
    methods that make new arrays or views starts from (so that
    ``self.F.dot(self.P).dot(self.Ft)`` is judged as ``self.F.dot(...)`` is)."""
    while True:
        if isinstance(node, (gast.Attribute, gast.Subscript)) and \
                isinstance(node.value, gast.Call):
            node = node.value  # self.F.dot(x).T
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in FRESH_METHODS | VIEW_METHODS and \
                node.func.attr not in WRITING_METHODS and \
                not any(k.arg == "out" for k in node.keywords):
            node = node.func.value
        else:
            return node


def _array_method(fn, func, me, fnode):
    """``self.F.dot(self.P).dot(self.Ft)``, ``K.dot(self.H)`` with ``K`` made by
    such calls: a method that writes nothing (``dot``, ``sum``, ...) called on a
    new array (what such a method or a NumPy function returned, or arithmetic on
    them), which keeps no argument."""
    if not (isinstance(func, gast.Attribute) and func.attr in FRESH_METHODS):
        return False
    return _new_array(fn, func.value, me, fnode, set())


def _new_array(fn, node, me, fnode, seen):
    while isinstance(node, gast.Attribute) and node.attr == "T":
        node = node.value
    if isinstance(node, gast.BinOp):
        return all(_rooted_at(v, me) or _new_array(fn, v, me, fnode, seen)
                   for v in (node.left, node.right))
    if isinstance(node, gast.Name) and node.id != me and node.id not in seen:
        seen.add(node.id)  # a local bound only to new arrays
        values = [n.value for n in gast.walk(fnode) if isinstance(n, gast.Assign) and
                  any(isinstance(t, gast.Name) and t.id == node.id for t in n.targets)]
        stored = [n for n in gast.walk(fnode) if isinstance(n, gast.Name) and
                  n.id == node.id and not isinstance(n.ctx, gast.Load)]
        return bool(values) and len(values) == len(stored) and \
            all(_new_array(fn, v, me, fnode, seen) for v in values)
    if not isinstance(node, gast.Call):
        return False
    inner = node.func
    if _library_call(fn, inner):
        return True
    if isinstance(inner, gast.Attribute) and inner.attr in FRESH_METHODS:
        return _rooted_at(inner.value, me) or _new_array(fn, inner.value, me, fnode, seen)
    return False


def _rooted_at(node, name):
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        node = node.value
    return isinstance(node, gast.Name) and node.id == name


def _hands_on_writing(fn, call, me, seen, numbers, cls):
    """Whether ``call``, which hands on the object (``Base.__init__(self)``,
    ``train(self, lr)``) or what it holds (``helper(self.P)``), may write into its
    arrays: the object itself handed to a user function by name is followed
    into that function; anything else may."""
    target = _resolved(fn, call.func)
    if not isinstance(target, types.FunctionType) or \
            any(isinstance(a, gast.Starred) for a in call.args):
        return True
    handed = handed_parameters(target, call)
    if len(handed) != len(call.args) + len(call.keywords):
        return True
    for param, arg in handed:
        if not _rooted_at(arg, me):
            continue
        if not (isinstance(arg, gast.Name) and arg.id == me) or \
                writes_self_in_place(target, seen, numbers, cls, me=param):
            return True
    return False


def _parameters(fnode):
    """Every parameter of ``fnode``, ``*args`` and ``**kwargs`` included."""
    args = fnode.args
    return args.posonlyargs + args.args + args.kwonlyargs + \
        [a for a in (args.vararg, args.kwarg) if a is not None]


def handed_parameters(fn, call):
    """(parameter, argument node) for each argument of ``call`` to ``fn``: an
    argument past the positional parameters goes to ``*args``, an unnamed keyword
    to ``**kwargs`` (an object in them: the function writes through that name);
    a spread (``*xs``) ends the mapping."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    kinds = inspect.Parameter
    positional = [p.name for p in params
                  if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    named = [p.name for p in params
             if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)]
    vararg = next((p.name for p in params if p.kind is kinds.VAR_POSITIONAL), None)
    kwarg = next((p.name for p in params if p.kind is kinds.VAR_KEYWORD), None)
    handed = []
    for k, arg in enumerate(call.args):
        if isinstance(arg, gast.Starred):
            break
        name = positional[k] if k < len(positional) else vararg
        if name is not None:
            handed.append((name, arg))
    for keyword in call.keywords:
        name = keyword.arg if keyword.arg in named else kwarg
        if keyword.arg is not None and name is not None:
            handed.append((name, keyword.value))
    return handed


def _is_super(node, me):
    """``super()`` (in a method) or ``super(Cls, self)``."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
        node.func.id == "super" and not node.keywords and \
        (not node.args or len(node.args) == 2 and _rooted_at(node.args[1], me) and
         isinstance(node.args[1], gast.Name))


def _super_method(fn, cls, name, call):
    """The function ``super().name`` runs in method ``fn`` on an object of class
    ``cls``: the next definition after ``fn``'s class in ``cls``'s method
    resolution order (another base may come between them), or ``object.__init__``;
    None when unknown (``cls`` not given, or not a plain function)."""
    defining = _resolved(fn, call.args[0]) if call.args else _owner(fn)
    if cls is None or defining is None or defining not in cls.__mro__:
        return None
    mro = cls.__mro__
    for klass in mro[mro.index(defining) + 1:]:
        if name in vars(klass):
            raw = vars(klass)[name]
            return raw if isinstance(raw, types.FunctionType) or raw is object.__init__ \
                else None
    return None


def _owner(fn):
    """The class whose method ``fn`` is (from its qualified name and globals)."""
    parts = fn.__qualname__.split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    obj = fn.__globals__.get(parts[0])
    for part in parts[1:-1]:
        obj = getattr(obj, part, None)
    return obj if inspect.isclass(obj) else None


def _resolved(fn, func):
    return resolve_dotted(func, lambda name: fn.__globals__.get(name, getattr(builtins, name,
                                                                              None)), ())


def _library_call(fn, func):
    """``np.linalg.inv(self.P)``: a call of a NumPy (or builtin) function, which
    writes no argument except through ``out=`` or the functions the fence lists."""
    obj = _resolved(fn, func)
    if obj is None or any(obj is w for w in WRITING_FUNCTIONS):  # np.copyto(self.P, v)
        return False
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "") or ""
    return module.split(".")[0] in ("numpy", "builtins")
