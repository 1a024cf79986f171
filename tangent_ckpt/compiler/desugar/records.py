"""Desugar: named tuples and dataclasses made in the function, as their fields.

A ``@dataclass``'s ``__init__`` and a named tuple's ``__new__`` are made by the
standard library and have no source to inline.  For ``p = Params(W, b)`` this
module writes the constructor Python runs as a function of the user's
(:func:`constructor`), which ``inline_functions.py`` then inlines like any
``__init__``, and ``scalar_objects.py`` writes ``p`` as one name per field::

    def __init__(self, W, b, scale=0.5):     # Params(W, b): its generated __init__
        self.W = W
        self.b = b
        self.scale = scale
        self.n = 0                             # field(default=0, init=False)
        self.acc = []                          # field(default_factory=list), not given
        self.__post_init__()                   # where the class has one (inlined too)

The arguments bind as Python binds them (positional, then keyword, then the
defaults; a ``default_factory`` is called for each object the call does not
give that field, in the order of the fields).  A named tuple is a tuple too:
:func:`write_tuple_forms` writes ``m[1]``, ``m[1:]``, ``a, b = m``, ``len(m)``,
``isinstance(m, C)`` and ``for v in m`` as the field reads they are
(``m.var``, ``a, b = m.mu, m.var``), where ``m`` is one such tuple alone.

Only a class whose constructor is surely that: a dataclass whose ``__init__``
the decorator made (no ``InitVar``, no ``__slots__``), a named tuple class
whose subclasses define no ``__new__`` or ``__init__``.  Stores into a field of
a frozen dataclass or a named tuple other than the constructor's raise in
Python: such an object is left as it is (``scalar_objects.replace_objects``),
as is every object of these classes that is more than its fields (returned,
handed on, ``m._replace(...)``); the lowering then lays it out or refuses it.
"""

import dataclasses
import functools
import inspect
import types

import gast

from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.frontend.reached_functions import user_class

def namedtuple_class(cls):
    """A class ``typing.NamedTuple`` or ``collections.namedtuple`` made (or a
    subclass of one): a tuple whose items have the names ``cls._fields``."""
    return isinstance(cls, type) and issubclass(cls, tuple) and \
        isinstance(getattr(cls, "_fields", None), tuple)


def tuple_field(cls, attr):
    """Does ``obj.attr`` read a field of ``obj``, a named tuple of ``cls`` (no
    subclass's method or property in the field's place)?"""
    generated = next(k for k in cls.__mro__ if "_fields" in vars(k))
    return attr in cls._fields and inspect.getattr_static(cls, attr) is vars(generated).get(attr)


def generated_init(cls):
    """Is ``cls.__init__`` the one ``@dataclass`` made (no source of its own)?"""
    init = inspect.getattr_static(cls, "__init__", None)
    return dataclasses.is_dataclass(cls) and cls.__dataclass_params__.init and \
        inspect.isfunction(init) and init.__code__.co_filename == "<string>" and \
        init.__name__ == "__init__"


def record_class(cls):
    """Is ``cls`` a named tuple or dataclass class whose constructor
    :func:`constructor` writes exactly as Python runs it?"""
    if not isinstance(cls, type) or type(cls) is not type or not user_class(cls):
        return False
    if namedtuple_class(cls):
        generated = next(k for k in cls.__mro__ if "_fields" in vars(k))
        mine = cls.__mro__[:cls.__mro__.index(generated)]
        return all(user_class(k) for k in mine) and not any(
            name in vars(k) for k in mine for name in
            ("__new__", "__init__", "__getattr__", "__getattribute__", "__setattr__",
             "__slots__")) and cls.__mro__[cls.__mro__.index(generated) + 1:] == (tuple, object) \
            and all(map(functools.partial(tuple_field, cls), cls._fields))
    if not (generated_init(cls) and cls.__new__ is object.__new__):
        return False
    if any(k is not object and (not user_class(k) or any(
            name in vars(k) for name in ("__getattr__", "__getattribute__")))
            for k in cls.__mro__):
        return False
    if inspect.getattr_static(cls, "__setattr__") is not object.__setattr__ and \
            not frozen(cls):
        return False
    params = list(inspect.signature(cls.__init__).parameters)[1:]
    return params == [f.name for f in dataclasses.fields(cls) if f.init] and \
        not any(_data_descriptor(inspect.getattr_static(cls, f.name, None))
                for f in dataclasses.fields(cls))  # no InitVar, no property in a field's place


def _data_descriptor(raw):
    """Does ``raw``, an attribute of a class, take the place of the object's own
    attribute of its name (a property, a descriptor with ``__set__``; not a
    ``__slots__`` member)?"""
    return not isinstance(raw, types.MemberDescriptorType) and \
        (hasattr(type(raw), "__set__") or hasattr(type(raw), "__delete__"))


def frozen(cls):
    """May no code but the constructor store into the fields of ``cls``'s objects
    (a named tuple, a frozen dataclass)?"""
    return namedtuple_class(cls) or dataclasses.is_dataclass(cls) and \
        cls.__dataclass_params__.frozen


def fields(cls):
    """The names of the fields of a record class (:func:`record_class`)."""
    if namedtuple_class(cls):
        return cls._fields
    return tuple(f.name for f in dataclasses.fields(cls))


def constructor(cls, call, denote):
    """``(fnode, defaults)``: the constructor of ``cls`` (a record class) that
    ``call`` runs, as a ``def __init__(self, ...)`` whose body stores the fields,
    and {parameter: default object}; None where the call does not bind as the
    class's constructor does (the lowering's to tell).  ``denote(obj, stem)``: a
    name the caller's function reads ``obj`` by (a ``default_factory``)."""
    where = call  # every node of the constructor is placed at the call
    if namedtuple_class(cls):
        positional = list(cls._fields)
        keyword_only, defaults = [], dict(cls._field_defaults)
        body = [_store(f, name_node(f), where) for f in positional]
    else:
        signature = inspect.signature(cls.__init__)
        params = list(signature.parameters.values())[1:]
        keyword_only = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        if len(positional) + len(keyword_only) != len(params):
            return None
        given = set(positional[:len(call.args)]) | {k.arg for k in call.keywords}
        defaults, body = {}, []
        for f in dataclasses.fields(cls):
            factory = f.default_factory is not dataclasses.MISSING
            if f.init and not (factory and f.name not in given):
                if f.default is not dataclasses.MISSING:
                    defaults[f.name] = f.default
                body.append(_store(f.name, name_node(f.name), where))
            elif factory:  # default_factory(), for each object made
                if f.name in positional:
                    positional.remove(f.name)  # (not given: no positional after it is)
                if f.name in keyword_only:
                    keyword_only.remove(f.name)
                body.append(_store(f.name, _called(f.default_factory, f.name, denote, where),
                                   where))
            elif f.default is not dataclasses.MISSING:  # field(default=0, init=False)
                body.append(_store(f.name, gast.Constant(value=f.default, kind=None), where)
                            if isinstance(f.default, (int, float, complex, bool, str,
                                                      type(None)))
                            else _store(f.name, name_node(denote(f.default, f.name)), where))
        if inspect.getattr_static(cls, "__post_init__", None) is not None:
            body.append(gast.copy_location(gast.Expr(value=gast.Call(
                func=gast.Attribute(value=name_node("self"), attr="__post_init__",
                                    ctx=gast.Load()), args=[], keywords=[])), where))
    if len(call.args) > len(positional):
        return None
    args = gast.arguments(
        args=[_param(p) for p in ["self"] + positional], posonlyargs=[], vararg=None,
        kwonlyargs=[_param(p) for p in keyword_only], kw_defaults=[None] * len(keyword_only),
        kwarg=None, defaults=[])
    fnode = gast.FunctionDef(**{f: None for f in gast.FunctionDef._fields})
    fnode.name, fnode.args, fnode.decorator_list = "__init__", args, []
    fnode.body = body or [gast.copy_location(gast.Pass(), where)]
    if "type_params" in gast.FunctionDef._fields:
        fnode.type_params = []
    gast.copy_location(fnode, where)
    fnode.end_lineno = getattr(where, "end_lineno", where.lineno)
    for node in gast.walk(fnode):  # (a node made here may have no location at all)
        if isinstance(node, (gast.expr, gast.stmt)) and node is not fnode:
            gast.copy_location(node, where)
    return fnode, defaults


def name_node(identifier):
    """A name read (``view_shape.name_node``, which the lowering does not load)."""
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


def bound_fields(cls, call):
    """What ``call`` (``Cls(...)`` of a named tuple class, or of a dataclass whose
    ``__init__`` is the generated one) binds each field to, in the order of the
    fields: ``[(field, kind, value)]`` with ``kind`` ``"argument"`` (``value``: the
    call's node), ``"default"`` (the default object) or ``"factory"`` (the
    ``default_factory`` to call); a field the constructor leaves unbound is not
    listed.  A string, the message of Python's TypeError, where the call does
    not bind (too many arguments, an unknown or repeated keyword, a missing one)."""
    if namedtuple_class(cls):
        positional, keyword_only = list(cls._fields), []
        own = [(f, True, cls._field_defaults.get(f, dataclasses.MISSING), None)
               for f in cls._fields]
    else:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        keyword_only = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        own = [(f.name, f.init, f.default, None if f.default_factory is dataclasses.MISSING
                else f.default_factory) for f in dataclasses.fields(cls)]
    if len(call.args) > len(positional):
        return f"{cls.__name__}() takes {len(positional)} positional arguments, " \
            f"{len(call.args)} given"
    given = dict(zip(positional, call.args))
    for k in call.keywords:
        if k.arg not in positional + keyword_only or k.arg in given:
            return f"{cls.__name__}() got an unexpected or repeated argument '{k.arg}'"
        given[k.arg] = k.value
    bound = []
    for name, init, default, factory in own:
        if init and name in given:
            bound.append((name, "argument", given[name]))
        elif factory is not None:
            bound.append((name, "factory", factory))
        elif default is not dataclasses.MISSING:
            bound.append((name, "default", default))
        elif init:
            return f"{cls.__name__}() missing argument '{name}'"
    return bound


def _param(name):
    return gast.Name(id=name, ctx=gast.Param(), annotation=None, type_comment=None)


def _store(field, value, where):
    """``self.field = value``."""
    target = gast.Attribute(value=name_node("self"), attr=field, ctx=gast.Store())
    return gast.copy_location(gast.Assign(targets=[target], value=value, type_comment=None),
                              where)


def _called(factory, field, denote, where):
    """The call of a ``default_factory``: ``[]`` for ``list``, ``{}`` for ``dict``,
    else ``factory_name()``."""
    if factory is list:
        return gast.List(elts=[], ctx=gast.Load())
    if factory is dict:
        return gast.Dict(keys=[], values=[])
    return gast.Call(func=name_node(denote(factory, f"{field}_factory")), args=[],
                     keywords=[])


def write_tuple_forms(fnode, name, cls, resolve, local, class_name):
    """Write, in ``fnode``, each use of ``name`` (a named tuple of ``cls`` alone)
    as a tuple as the reads of its fields it is: ``name[k]`` and ``name[i:j]``
    with constant bounds, ``a, b = name``, ``len(name)``, ``isinstance(name, C)``
    (``C`` a class known when compiling), ``tuple(name)``, ``list(name)``,
    ``f(*name)``, ``[*name]`` and ``for v in name``; and its standard
    methods: ``name._asdict()`` as the dict display of its fields,
    ``name._replace(mu=v)`` as ``Cls(mu=v, var=name.var)`` (the keywords
    evaluated first, as the call does; ``class_name()``: a name of ``cls`` in
    ``fnode``), and a field read at once, ``name._replace(mu=v).mu``, as ``v``
    (as ``(v, w)[0]`` where the call computes another value ``w``, which Python
    evaluates too).
    ``resolve``, ``local``: how a name of ``fnode`` resolves (``resolve_dotted``)."""
    names = fields(cls)

    def read(k, node):
        return gast.copy_location(gast.Attribute(value=gast.copy_location(
            name_node(name), node), attr=names[k], ctx=gast.Load()), node)

    def reads(node):
        return gast.copy_location(gast.Tuple(elts=[read(k, node) for k in range(len(names))],
                                             ctx=gast.Load()), node)

    def mine(node):
        return isinstance(node, gast.Name) and node.id == name and \
            isinstance(node.ctx, gast.Load)

    def standard_method(node):
        """``name._asdict()``, ``name._replace(...)`` written out; any other call as
        it is."""
        method = node.func.attr
        if method == "_asdict" and not node.args and not node.keywords:
            return gast.copy_location(gast.Dict(
                keys=[gast.Constant(value=f, kind=None) for f in names],
                values=[read(k, node) for k in range(len(names))]), node)
        given = [k.arg for k in node.keywords]
        if method != "_replace" or node.args or len(set(given)) != len(given) or \
                not set(given) <= set(names):
            return node  # (a ValueError or TypeError: Python's to raise)
        keywords = list(node.keywords) + [
            gast.keyword(arg=f, value=read(k, node)) for k, f in enumerate(names)
            if f not in given]
        made = gast.copy_location(gast.Call(
            func=gast.copy_location(name_node(class_name()), node.func), args=[],
            keywords=keywords), node)
        replaced.add(id(made))
        return made

    replaced = set()  # the ids of the constructions standard_method wrote for _replace

    def spread(items):
        """``f(*name)``, ``[*name]``: the items as the fields' reads."""
        return [e for item in items for e in (
            reads(item).elts if isinstance(item, gast.Starred) and mine(item.value)
            else [item])]

    def field_of_replaced(node):
        """``name._replace(mu=v).mu`` (its construction written): ``v``, where
        the call evaluates nothing else than names, constants and fields of
        ``name`` (no other value computed there to drop)."""
        made = node.value
        if id(made) not in replaced or not isinstance(node.ctx, gast.Load) or \
                not tuple_field(cls, node.attr):
            return node
        chosen = next(k.value for k in made.keywords if k.arg == node.attr)
        if not all(k.value is chosen or isinstance(k.value, (gast.Name, gast.Constant)) or
                   isinstance(k.value, gast.Attribute) and mine(k.value.value)
                   for k in made.keywords):
            # another value computed: all of them, in the order the call writes them
            values = gast.copy_location(gast.Tuple(
                elts=[k.value for k in made.keywords], ctx=gast.Load()), made)
            at = next(k for k, kw in enumerate(made.keywords) if kw.value is chosen)
            return gast.copy_location(gast.Subscript(
                value=values, slice=gast.Constant(value=at, kind=None), ctx=gast.Load()), node)
        return chosen

    class Forms(gast.NodeTransformer):
        def visit_Attribute(self, node):
            self.generic_visit(node)
            return field_of_replaced(node)

        def visit_Subscript(self, node):
            self.generic_visit(node)
            if not mine(node.value) or not isinstance(node.ctx, gast.Load):
                return node
            index = node.slice
            if _integer(index) is not None and -len(names) <= _integer(index) < len(names):
                return read(_integer(index) % len(names), node)
            if isinstance(index, gast.Slice) and all(
                    part is None or _integer(part) is not None
                    for part in (index.lower, index.upper, index.step)):
                bounds = slice(*(None if part is None else _integer(part)
                                 for part in (index.lower, index.upper, index.step)))
                if bounds.step == 0:
                    return node  # ValueError: Python's to raise
                return gast.copy_location(gast.Tuple(
                    elts=[read(k, node) for k in range(len(names))[bounds]],
                    ctx=gast.Load()), node)
            return node

        def visit_Call(self, node):
            self.generic_visit(node)
            node.args = spread(node.args)
            if isinstance(node.func, gast.Attribute) and mine(node.func.value):
                return standard_method(node)
            func = resolve_dotted(node.func, resolve, local)
            if node.keywords or not node.args or not mine(node.args[0]):
                return node
            if func in (tuple, list) and len(node.args) == 1:
                return gast.copy_location(gast.Tuple(elts=reads(node).elts, ctx=gast.Load())
                                          if func is tuple else
                                          gast.List(elts=reads(node).elts, ctx=gast.Load()),
                                          node)
            if func is len and len(node.args) == 1:
                return gast.copy_location(gast.Constant(value=len(names), kind=None), node)
            if func is isinstance and len(node.args) == 2:
                spec = node.args[1]
                kinds = [resolve_dotted(e, resolve, local) for e in spec.elts] \
                    if isinstance(spec, gast.Tuple) else [resolve_dotted(spec, resolve, local)]
                if kinds and all(isinstance(k, type) for k in kinds):
                    return gast.copy_location(gast.Constant(
                        value=issubclass(cls, tuple(kinds)), kind=None), node)
            return node

        def visit_Tuple(self, node):
            self.generic_visit(node)
            if isinstance(node.ctx, gast.Load):
                node.elts = spread(node.elts)
            return node

        visit_List = visit_Tuple

        def visit_Assign(self, node):
            self.generic_visit(node)
            if mine(node.value) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], (gast.Tuple, gast.List)) and \
                    len(node.targets[0].elts) == len(names) and \
                    not any(isinstance(e, gast.Starred) for e in node.targets[0].elts):
                node.value = reads(node.value)
            return node

        def visit_For(self, node):
            self.generic_visit(node)
            if mine(node.iter):
                node.iter = reads(node.iter)
            return node

    Forms().visit(fnode)


def _integer(node):
    """The int ``node`` writes (``2``, ``-2``), or None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        value = _integer(node.operand)
        return None if value is None else -value
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    return None


def raising_stores(uses, cls, own):
    """Does any store of ``uses`` (``name.attr`` nodes of an object of ``cls``, a
    record class) raise in Python: one other than the constructor's (``own``:
    their ids) where the class's objects are frozen, or into an attribute that
    is no field where they have no ``__dict__`` (``@dataclass(slots=True)``)?"""
    stores = [n for n in uses if not isinstance(n.ctx, gast.Load)]
    if frozen(cls):
        return any(id(n) not in own for n in stores)
    return not _has_dict(cls) and any(n.attr not in fields(cls) for n in stores)


def _has_dict(cls):
    """Do the objects of ``cls`` have a ``__dict__`` (a class of the hierarchy
    without ``__slots__``, or with ``__dict__`` among them)?"""
    for k in cls.__mro__:
        if k is object:
            continue
        slots = vars(k).get("__slots__", None)
        if slots is None or "__dict__" in ((slots,) if isinstance(slots, str) else slots):
            return True
    return False

