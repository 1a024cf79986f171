"""Desugar: objects of the user's classes made in the function, one name per
attribute.

``model = Model(W)`` (its ``__init__`` inlined by ``inline_functions.py``, or a
named tuple's or dataclass's generated constructor written by ``records.py``, with
``self`` standing for ``model``) leaves stores and reads of ``model.W``: each
becomes the name ``model_W``, and the object is gone.  An attribute the code
reads but never stores is the class's (``model.dt`` is ``Model.dt``'s number, or
``Model.G`` where that is an array); one the class holds a default of is bound to
that default where the object is made.

Only where the object is surely nothing but its attributes: the name is bound
by constructions of one class alone and used only as ``model.attr`` (never
handed on, stored, returned or deleted; its methods' calls all inlined; a
nested function's own variable of that name is another variable), the
class makes no lookup of its own (``__getattr__``, ``__setattr__``, slots,
properties or methods in the place of an attribute the code uses), and a
class default the object stores over is a number, string or tuple of them, or an
array (bound to ``Model.mem`` where the object is made).  Any other object is left
as it was, to the lowering.
"""

import inspect
import types

import gast
import numpy as np

from tangent_ckpt.compiler.desugar import records
from tangent_ckpt.compiler.desugar.local_bindings import local_names
from tangent_ckpt.compiler.desugar.method_calls import _own_lookup
from tangent_ckpt.compiler.desugar.view_shape import (
    DenotedObject, ReplacedNodes, fresh_name, name_node, statement_lists,
)
from tangent_ckpt.compiler.frontend.parse import class_attribute
from tangent_ckpt.compiler.frontend.reached_functions import user_class

_PLAIN_DEFAULTS = (int, float, complex, bool, str, bytes, type(None))


class Constructed:
    """Where desugar's inlining made an object: ``name = cls(...)`` (the marker
    statement ``Expr(Constant(Constructed))`` stands there until
    :func:`replace_objects` writes the class's defaults in its place)."""

    def __init__(self, name, cls):
        self.name, self.cls = name, cls


def replaceable_class(cls):
    """May an object of ``cls`` be written as one name per attribute?  A plain
    class of the user's: made by ``type``, every base the user's, no lookup or
    ``__new__`` of its own (``Cls(...)`` then makes a new object and runs
    ``__init__`` on it), an ``__init__`` with source (a dataclass's generated one
    is ``records.py``'s)."""
    return _plain_hierarchy(cls) and not records.generated_init(cls) and \
        cls.__new__ is object.__new__


def _plain_hierarchy(cls):
    """``cls`` a class made by ``type``, every class of its MRO the user's (or
    ``object``), none with a lookup of its own (``__getattr__``, slots...)."""
    return isinstance(cls, type) and type(cls) is type and \
        all(k is object or user_class(k) for k in cls.__mro__) and not _own_lookup(cls)


def outside_receiver(obj):
    """May a method of ``obj``, a user's object made outside the function, be
    inlined with ``self`` standing for the name reading it?  Its class makes no
    lookup of its own."""
    return _plain_hierarchy(type(obj))


def method_function(cls, name):
    """``(function, takes_self)`` that ``obj.name(...)`` runs for an object of
    ``cls``, or None where that is not a function written in Python (or a static
    method of one)."""
    raw = class_attribute(cls, name, None)
    if isinstance(raw, types.FunctionType):
        return raw, True
    if isinstance(raw, staticmethod) and isinstance(raw.__func__, types.FunctionType):
        return raw.__func__, False
    return None


def next_method(cls, fn, name):
    """The function ``super().name`` denotes in ``fn``, a method of ``cls``'s
    class hierarchy (the class after the one defining ``fn``, in ``cls``'s method
    resolution order), or None."""
    mro = cls.__mro__
    owner = next((k for k in mro if vars(k).get(fn.__name__) is fn), None)
    if owner is None:
        return None
    for klass in mro[mro.index(owner) + 1:]:
        if name in vars(klass):
            return vars(klass)[name]
    return None


def _class_default(cls, attr):
    """``(found, value)`` of ``attr`` on ``cls`` (not on an instance)."""
    raw = class_attribute(cls, attr, _MISSING)
    return raw is not _MISSING, raw


_MISSING = object()


def _plain_default(value):
    return isinstance(value, _PLAIN_DEFAULTS) or \
        isinstance(value, tuple) and all(isinstance(v, _PLAIN_DEFAULTS) for v in value)


def given_object(structure):
    """May a parameter given this object (``structure``: its
    ``container_args.structure_of``) be written as one parameter per attribute?
    An object of a plain class of the user's (a dataclass too: its ``__init__``
    does not run here) whose attributes are arrays and numbers (leaves) or
    constants (ints, strings, None): one holding lists, dicts or objects stays
    the lowering's, which lays them out."""
    if not (isinstance(structure, tuple) and structure[0] == "object"):
        return False
    return _plain_hierarchy(structure[1]) and user_class(structure[1]) and \
        all(kind == "leaf" or kind[0] == "const" and _plain_default(kind[1])
            for kind in structure[3])


def replace_objects(parsed, fnode, constructed, taken, given=None, constructor_stores=()):
    """Write each object of ``constructed`` ({name: {classes}}: the names desugar
    bound by constructions it inlined in ``fnode``, and the parameters ``given``
    objects: {name: structure}) as one name per attribute, a given object's
    leaves as parameters in its place (``parsed.flattened_parameters``).
    ``constructor_stores``: the ids of the field stores ``records.py`` wrote for
    named tuples and dataclasses (a frozen one takes no other).  Returns the
    names that cannot be (``fnode`` is then left as it is, but for the tuple
    forms of named tuples written as field reads), else an empty set once they
    all are."""
    given = given or {}
    failed = set()
    local = None
    for name, classes in constructed.items():
        if len(classes) == 1 and records.namedtuple_class(next(iter(classes))) and \
                name not in given:
            local = local_names(fnode) if local is None else local
            cls = next(iter(classes))
            records.write_tuple_forms(fnode, name, cls, parsed.resolve, local,
                                      lambda cls=cls: _class_name(parsed, fnode, cls, taken))
    uses = _attribute_uses(fnode, set(constructed), set(given))
    for name, classes in constructed.items():
        found = uses[name] if len(classes) == 1 else None
        if name in given:
            plain = found is not None and _given_attributes(given[name], found)
        else:
            cls = next(iter(classes))
            plain = found is not None and \
                _plain_attributes(cls, found, read_lists=_only_read_or_iterated(fnode, found)) \
                and not records.raising_stores(found, cls, constructor_stores)
        if not plain:
            failed.add(name)
    if failed:
        return failed
    for name, classes in constructed.items():
        if name in given:
            _replace_given(parsed, fnode, name, given[name], uses[name], taken)
            continue
        cls = next(iter(classes))
        stored = {n.attr for n in uses[name] if not isinstance(n.ctx, gast.Load)}
        names = {attr: _attribute_name(parsed, taken, name, attr) for attr in sorted(stored)}
        _replace_uses(parsed, fnode, cls, uses[name], names, taken)
        _defaults_where_made(fnode, name, cls, names,
                             lambda: name_node(_class_name(parsed, fnode, cls, taken)))
    return set()


def _attribute_name(parsed, taken, name, attr):
    """The name ``name.attr`` is written as (``cell_h``); messages spell it so."""
    new = fresh_name(f"{name}_{attr}", taken)
    parsed.spellings[new] = f"{parsed.spellings.get(name, name)}.{attr}"
    return new


def _replace_uses(parsed, fnode, cls, uses, names, taken, own=None):
    """Each ``obj.attr`` of ``uses`` (an object of ``cls``) as its name in
    ``names``, else the object's own constant (``own``: a given object's
    {attribute: kind}), else the class's number, else the class's array as
    written (``Collider.G``, read as a module-level object's)."""
    own = own or {}
    replaced = {}
    for node in uses:
        if node.attr in names:
            new = gast.Name(id=names[node.attr], ctx=node.ctx, annotation=None,
                            type_comment=None)
        elif node.attr in own:
            new = _constant(own[node.attr][1])
        elif _plain_default(_class_default(cls, node.attr)[1]):
            new = _constant(_class_default(cls, node.attr)[1])
        else:
            new = gast.Attribute(value=name_node(_class_name(parsed, fnode, cls, taken)),
                                 attr=node.attr, ctx=gast.Load())
        replaced[id(node)] = gast.copy_location(new, node)
    ReplacedNodes(replaced).visit(fnode)


def _attribute_uses(fnode, names, parameters=frozenset()):
    """{name: the ``name.attr`` nodes of ``fnode``, or None where ``name`` is used
    any other way (bound, handed on, deleted, an attribute stored in a nested
    function, a dunder attribute)} for each of ``names``; the declaration of a
    name of ``parameters`` is no use."""
    found = {name: [] for name in names}
    declared = {id(a) for a in fnode.args.posonlyargs + fnode.args.args
                if a.id in parameters}
    parents = {}
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    nested_stores, own = set(), set()
    for scope in gast.walk(fnode):
        if scope is not fnode and isinstance(scope, (gast.FunctionDef, gast.AsyncFunctionDef,
                                                     gast.Lambda, gast.ClassDef)):
            nested_stores |= {id(n) for n in gast.walk(scope) if isinstance(n, gast.Attribute)
                              and not isinstance(n.ctx, gast.Load)}
        if scope is not fnode and isinstance(scope, (gast.FunctionDef, gast.AsyncFunctionDef,
                                                     gast.Lambda)):
            own |= _own_variables(scope, set(names))
    for node in gast.walk(fnode):
        if not (isinstance(node, gast.Name) and found.get(node.id) is not None) or \
                id(node) in declared or id(node) in own:
            continue
        parent = parents.get(node)
        if not isinstance(parent, gast.Attribute) or parent.value is not node or \
                not isinstance(node.ctx, gast.Load) or parent.attr.startswith("__") or \
                isinstance(parent.ctx, gast.Del) or id(parent) in nested_stores:
            found[node.id] = None
        else:
            found[node.id].append(parent)
    return found


def _own_variables(scope, names):
    """The ids of the ``Name`` nodes in ``scope`` (a nested function or lambda)
    of those ``names`` that are its own variables (bound in it, its parameters,
    not declared ``global`` or ``nonlocal``; a function nested in it that binds
    the name too), not the enclosing function's: ``def make(W): m = Model(W);
    return m`` names its own ``m``.  A name it only reads stays the enclosing
    function's."""
    declared = {n for node in gast.walk(scope) if isinstance(node, (gast.Global, gast.Nonlocal))
                for n in node.names}
    local = {n.id for n in gast.walk(scope) if isinstance(n, gast.Name) and
             not isinstance(n.ctx, gast.Load) and n.id in names} - declared
    return {id(n) for n in gast.walk(scope) if isinstance(n, gast.Name) and n.id in local}


def _only_read_or_iterated(fnode, uses):
    """The attributes of ``uses`` whose every use is read by an item
    (``obj.cs[k]``), by ``len`` or by a loop (``for c in obj.cs``, a
    comprehension's): what a list of the class's, read so, gives is its items,
    which no such read changes."""
    reading = set()
    for n in gast.walk(fnode):
        if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Load):
            reading.add(id(n.value))
        elif isinstance(n, (gast.For, gast.comprehension)):
            reading.add(id(n.iter))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and \
                n.func.id == "len" and len(n.args) == 1 and not n.keywords:
            reading.add(id(n.args[0]))
    attrs = {}
    for n in uses:
        attrs[n.attr] = attrs.get(n.attr, True) and isinstance(n.ctx, gast.Load) and \
            id(n) in reading
    return {attr for attr, only in attrs.items() if only}


def _plain_attributes(cls, uses, arrays_stored=True, read_lists=frozenset()):
    """Are the attributes ``uses`` reads and stores plain data of the object (or
    numbers and strings of its class, or data of its class the code only reads,
    or, ``arrays_stored``, an array of its class the object stores over: bound to
    ``Cls.attr`` where the object is made, or a list of numbers and strings of
    its class that ``read_lists`` says is only read by item, ``len`` or a loop:
    ``Cls.attr`` read when the code runs)?"""
    stored = {n.attr for n in uses if not isinstance(n.ctx, gast.Load)}
    fields = records.fields(cls) if records.record_class(cls) else ()
    for attr in {n.attr for n in uses}:
        if attr in fields and attr in stored:
            continue  # a field of a named tuple or dataclass (its class's default, if any)
        found, value = _class_default(cls, attr)
        if not found:
            if attr not in stored:
                return False  # read, never stored: an AttributeError (the lowering's to tell)
            continue
        if _plain_default(value):
            continue
        if attr in read_lists and attr not in stored and type(value) is list and \
                all(isinstance(v, _PLAIN_DEFAULTS) for v in value):
            continue
        if not isinstance(value, np.ndarray) or attr in stored and not arrays_stored:
            return False  # a method, property or descriptor, a class's list stored over
    return True


def _given_attributes(structure, uses):
    """Are the attributes ``uses`` reads and stores, of a parameter given an object
    of ``structure``, its own leaves and constants, or plain data of its class?"""
    cls, own = structure[1], dict(zip(structure[2], structure[3]))
    for attr in {n.attr for n in uses}:
        found, value = _class_default(cls, attr)
        if attr in own:
            if found and hasattr(type(value), "__set__"):
                return False  # a property with a setter: the class's lookup, not the dict's
            continue
        if not _plain_attributes(cls, [n for n in uses if n.attr == attr], arrays_stored=False):
            return False
    return True


def _replace_given(parsed, fnode, name, structure, uses, taken):
    """The parameter ``name``, given an object of ``structure``, as one parameter
    per leaf attribute (in the object's order: the caller hands them so), its
    constants as numbers, its class's data as :func:`replace_objects` writes a
    made object's; an attribute the code stores starts as the object's constant
    or the class default, bound first."""
    cls, own = structure[1], dict(zip(structure[2], structure[3]))
    stored = {n.attr for n in uses if not isinstance(n.ctx, gast.Load)}
    parsed.stores_on_given = parsed.stores_on_given or bool(stored)
    names = {attr: _attribute_name(parsed, taken, name, attr) for attr, kind in own.items()
             if kind == "leaf" or attr in stored}
    leaves = [names[attr] for attr, kind in own.items() if kind == "leaf"]
    names.update((attr, _attribute_name(parsed, taken, name, attr))
                 for attr in sorted(stored - set(own)))
    _replace_uses(parsed, fnode, cls, uses, names, taken, own)
    first = []  # a stored constant, or class default, read before the code stores it
    for attr, new in sorted(names.items()):
        if own.get(attr) == "leaf" or _stored_before_read(fnode.body, new):
            continue
        found, value = (True, own[attr][1]) if attr in own else _class_default(cls, attr)
        if found:
            first.append(_binding(new, value, fnode.body[0]))
    fnode.body[0:0] = first
    args = fnode.args
    for field in ("posonlyargs", "args"):
        params = getattr(args, field)
        for k, a in enumerate(params):
            if a.id == name:
                params[k:k + 1] = [gast.copy_location(gast.Name(
                    id=leaf, ctx=gast.Param(), annotation=None, type_comment=None), a)
                    for leaf in leaves]
                parsed.flattened_parameters[name] = tuple(leaves)
                return


def _class_name(parsed, fnode, cls, taken):
    """A name denoting ``cls`` in ``fnode``: its own name where that is no local
    and denotes it, else one added (``ParsedFunction.inlined_names``)."""
    if parsed.resolve(cls.__name__) is cls and not any(
            isinstance(n, gast.Name) and n.id == cls.__name__ and
            not isinstance(n.ctx, gast.Load) for n in gast.walk(fnode)):
        return cls.__name__
    for name, (helper, original) in parsed.inlined_names.items():
        if isinstance(helper, DenotedObject) and helper.obj is cls:
            return name
    name = fresh_name(cls.__name__, taken | set(parsed.globals) | set(parsed.closure))
    taken.add(name)
    parsed.inlined_names[name] = (DenotedObject(cls), name)
    return name


def _constant(value):
    """The expression of a class default (a number, string or tuple of them)."""
    if isinstance(value, tuple):
        return gast.Tuple(elts=[_constant(v) for v in value], ctx=gast.Load())
    return gast.Constant(value=value, kind=None)


def _defaults_where_made(fnode, name, cls, names, class_node):
    """Replace the markers where ``name``'s objects were made by the bindings of
    the class defaults of its stored attributes (``model_count = 0``; an array,
    ``model_mem = Model.mem``, ``class_node()`` the read of ``cls``), where a read
    may come before the object's own store.  (Python reads the class's array
    itself until the object stores its own: a write into it in place is the
    class's, which the fence refuses as a write into a module-level object.)"""
    for block in statement_lists(fnode):
        k = 0
        while k < len(block):
            stmt = block[k]
            if not _is_marker(stmt, name):
                k += 1
                continue
            bindings = []
            for attr, new in sorted(names.items()):
                found, value = _class_default(cls, attr)
                if found and not _stored_before_read(block[k + 1:], new):
                    bindings.append(_binding(new, value, stmt) if _plain_default(value)
                                    else _binding(new, value, stmt, gast.Attribute(
                                        value=class_node(), attr=attr, ctx=gast.Load())))
            block[k:k + 1] = bindings
            k += len(bindings)


def _binding(name, value, where, read=None):
    """``name = value`` (a plain default; else ``read``, its expression), placed at
    the statement ``where``."""
    return gast.copy_location(gast.Assign(
        targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)],
        value=_constant(value) if read is None else read, type_comment=None), where)


def _is_marker(stmt, name):
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant) and \
        isinstance(stmt.value.value, Constructed) and stmt.value.value.name == name


def _stored_before_read(stmts, name):
    """Is ``name`` surely bound by the first of ``stmts`` that touches it, without
    reading it there?"""
    for stmt in stmts:
        touched = [n for n in gast.walk(stmt) if isinstance(n, gast.Name) and n.id == name]
        if not touched:
            continue
        return isinstance(stmt, gast.Assign) and \
            all(not isinstance(n.ctx, gast.Load) for n in touched) and \
            any(isinstance(t, gast.Name) and t.id == name for t in stmt.targets)
    return False
