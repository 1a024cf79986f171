"""Lower: objects of user classes made in the differentiated code.

Objects desugar left (more than their attributes: in a list or dict changed on
a path or in a loop of a count known when running, stored into, returned, handed
on; ``desugar/object_lists.py`` writes a list only read or appended to statement
after statement or by a loop of a count known when compiling, or a dict read
by constant keys, as one name per object).  ``Model(W)`` (its ``__init__`` inlined) or a ``@dataclass`` (its fields
bound as ``desugar/records.py`` ``bound_fields`` says) holds one variable per
attribute: ``model.W`` is the variable ``model_W``; a named tuple is the tuple
of its fields' values.  Methods and ``@property`` getters are inlined with the
object as ``self``.  What such an object does beyond that -- ``super()``, a
function stored on an attribute (``self.act = np.tanh``), a class default stored
over in a loop that read it first or in a branch or loop the object was not made
in -- is refused (:meth:`ObjectLowering.kept_object_refusal`): desugar writes
every program of the tests that did so as names (an object given by the call
holds its functions as constants of the compiled gradient, ``self.act =
np.tanh`` called as ``np.tanh``).  Assigning an
attribute of an object made outside the function, or named in ``wrt``, is
refused: the primal would change the caller's object.
"""

import inspect
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.desugar.records import (
    bound_fields, generated_init, namedtuple_class, tuple_field,
)
from tangent_ckpt.compiler.lower.containers import UserLine
from tangent_ckpt.compiler.lower.outside_objects import LowerAgain, OutsideAttributes
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, Lowered, MethodValue, ObjectValue, TupleValue, to_source,
)
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED, class_attribute
from tangent_ckpt.compiler.frontend.reached_functions import _installed, user_function
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError

#: what a given object's attribute may hold as a constant (``container_args``)
_FUNCTION_TYPES = (np.ufunc, types.FunctionType, types.BuiltinFunctionType)


class ObjectLowering:
    """The lowering's part for objects of user classes (``lo.objects``)."""

    def __init__(self, lowering):
        self.lo = lowering
        self.outside = OutsideAttributes(lowering)  # attributes assigned on objects made outside

    def construct(self, cls, node, hint):
        """``Model(W)``: an object with one variable per attribute; ``__init__``
        is inlined, a ``@dataclass``'s fields are bound from the arguments."""
        if namedtuple_class(cls):  # Pair(a, b): a tuple whose items have names
            return TupleValue([v for _, v in self.record_fields(cls, node, hint)], cls=cls)
        label = hint if hint.isidentifier() else cls.__name__.lower()
        obj = ObjectValue(cls, label)
        obj.loops_open = self.lo.loops.open  # a loop opened later repeats what changes it
        obj.home = self.lo.out  # the block it is made in
        if generated_init(cls):  # (a dataclass with an __init__ of its own runs that)
            for field, value in self.record_fields(cls, node, label):
                self.store_attribute(obj, field, value, node.lineno)
            post = getattr(cls, "__post_init__", None)
            if post is not None:
                self.lo.callables.call_value(MethodValue(post, obj), _bare_call(node), hint)
            return obj
        init = inspect.getattr_static(cls, "__init__", None)
        if init is object.__init__:
            if (node.args or node.keywords) and \
                    inspect.getattr_static(cls, "__new__", None) is not object.__new__:
                # fractions.Fraction(1, 3): made by its __new__, which is not inlined
                raise self.lo.error(UnsupportedSyntaxError, f"an object of the class "
                                    f"{cls.__module__}.{cls.__qualname__} made in the "
                                    "function: it is made by its __new__, which the "
                                    "compiler does not inline", node,
                                    construct=to_source(node),
                                    hint="make the object outside the function and pass "
                                         "it in (or what it computes)")
            if node.args or node.keywords:
                raise self.lo.error(TransformError, f"{cls.__name__}() takes no arguments",
                                    node, construct=to_source(node))
            return obj
        parsed = self.lo.callables.parsed(init, node)
        call = gast.Call(func=node.func, args=[Lowered(obj, node)] + list(node.args),
                         keywords=list(node.keywords))
        self.lo.fenced.marks.same_call(node, call)  # views.py: __init__'s writes
        self.lo.inlining.inline(parsed.node, None, gast.copy_location(call, node), hint,
                                parsed, procedure=True)
        return obj

    def record_fields(self, cls, node, hint):
        """``[(field, operand)]``: the values ``Pair(b=v, a=u)`` of a named tuple or
        dataclass class binds its fields to (``records.bound_fields``), the
        arguments evaluated in the order the call writes them.  A named tuple class
        that makes its tuples another way (its own ``__new__`` or ``__init__``),
        and a field left to its ``default_factory``, are refused."""
        if namedtuple_class(cls):
            generated = next(k for k in cls.__mro__ if "_fields" in vars(k))
            own = [k.__name__ for k in cls.__mro__[:cls.__mro__.index(generated)]
                   if "__new__" in vars(k) or "__init__" in vars(k)]
            if own:
                raise self.lo.error(UnsupportedSyntaxError, f"{cls.__name__}() of a named "
                                    f"tuple class whose {own[0]} defines __new__ or __init__",
                                    node, construct=to_source(node),
                                    hint="build the tuple with the fields' values directly")
        bound = bound_fields(cls, node)
        if isinstance(bound, str):
            raise self.lo.error(TransformError, bound, node, construct=to_source(node))
        written = list(node.args) + [k.value for k in node.keywords]
        order = {id(a): k for k, a in enumerate(written)}
        values = {}
        for field, kind, value in sorted(bound, key=lambda b: order.get(id(b[2]), len(order))):
            if kind == "factory":
                raise self.lo.error(UnsupportedSyntaxError, f"{cls.__name__}() leaves "
                                    f"'{field}' to its default_factory", node,
                                    construct=to_source(node),
                                    hint=f"give {field} in the call")
            values[field] = self.lo.callables.operand(value, f"{hint}_{field}") \
                if kind == "argument" else self.lo.expressions.constant(value, field)
        return [(field, values[field]) for field, _, _ in bound]

    def named_tuple_method(self, value, attr):
        """``pair.total`` of a named tuple whose class (a subclass, or the
        ``typing.NamedTuple`` body) defines ``total`` in Python: the method, to
        inline with the tuple as ``self``; _UNRESOLVED for a field or anything
        else (``_replace``, ``count``: the standard library's)."""
        if tuple_field(value.cls, attr):
            return _UNRESOLVED
        raw = inspect.getattr_static(value.cls, attr, _UNRESOLVED)
        if isinstance(raw, property) and _own_function(raw.fget):
            return MethodValue(raw.fget, value, is_property=True)
        if isinstance(raw, types.FunctionType) and _own_function(raw):
            return MethodValue(raw, value)
        return _UNRESOLVED

    def named_field(self, value, node):
        """``p.mu`` of a named tuple (``value``, a TupleValue of its class): the
        item; any other attribute (``p._replace``, a method) is refused."""
        fields = getattr(value.cls, "_fields", ())
        if tuple_field(value.cls, node.attr):
            return value.items[fields.index(node.attr)]
        raise self.lo.error(UnsupportedSyntaxError, f"'{node.attr}' of a named tuple of "
                            f"{value.cls.__name__} (only its fields are read: "
                            f"{', '.join(fields)})", node, construct=to_source(node),
                            hint="read the fields, and build a new tuple with "
                                 f"{value.cls.__name__}(...) where the code replaces one")

    def set_attribute(self, target, value_node, stmt):
        """``self.W = W`` on an object made in the differentiated code."""
        outside = self.outside.owner(target.value)
        if outside is not None:  # CELL.h = h, params.b = b: outside_objects.py
            label = outside.label if isinstance(outside, ObjectValue) else \
                self.outside.label(outside)
            value = self.lo.callables.operand(value_node, f"{label}_{target.attr}")
            self.outside.store(outside, target, value, stmt)
            return
        owner = self.writable_owner(target, stmt)
        if plain_function(self.lo.expressions.static_value(value_node)):
            raise self.kept_object_refusal(owner, f"a function stored on '{target.attr}'", stmt,
                                           to_source(target))
        value = self.lo.callables.operand(value_node, f"{owner.label}_{target.attr}")
        self.store_attribute(owner, target.attr, value, stmt.lineno)

    def made_here(self, node):
        """Whether ``node`` (``self.acc``, ``m.acc``) is an attribute of an object
        made in the differentiated code, whose attributes are its variables: a
        write into the array it holds is a write into that variable (the fence
        judged what else may hold the array)."""
        owner = self.lo.expressions.static_value(node.value)
        return isinstance(owner, ObjectValue) and not owner.given

    def set_attribute_value(self, target, value, stmt):
        """``self.m, self.v = m, v``: one item of an unpacked value, already lowered."""
        outside = self.outside.owner(target.value)
        if outside is not None:
            self.outside.store(outside, target, value, stmt)
            return
        owner = self.writable_owner(target, stmt)
        self.store_attribute(owner, target.attr, value, stmt.lineno)

    def writable_owner(self, target, stmt):
        """The object made in the differentiated code whose attribute ``target``
        names; a refusal for any other owner."""
        owner = self.lo.expressions.value(target.value, "owner")
        if isinstance(owner, ObjectValue) and not plain_store(owner.cls, target.attr):
            raise self.lo.error(UnsupportedSyntaxError, "assignment to an attribute of an "
                                f"object whose class {owner.cls.__name__} controls its "
                                "attributes (a property setter, __setattr__, a descriptor)",
                                stmt, construct=to_source(target),
                                hint="assign the attribute the setter would store into "
                                     "(self._x = ...), or keep the value in a variable")
        if not isinstance(owner, ObjectValue):
            raise self.lo.error(UnsupportedSyntaxError, "assignment to an attribute of an "
                                "object made outside the differentiated function", stmt,
                                construct=to_source(target),
                                hint="build the object inside the function, or keep the "
                                     "value in a variable")
        if owner.given:  # the primal would change the caller's object
            raise self.lo.error(UnsupportedSyntaxError, "assignment to an attribute of an "
                                "object named in wrt", stmt, construct=to_source(target),
                                hint="keep the new value in a variable, or build a new "
                                     "object inside the function")
        return owner

    def default_key(self, owner, attr):
        """The key of ``owner.attr`` among the attributes read as class defaults in
        loops (``outside.read_in_loops``), the same in a lowering run again (an
        object made here: the object itself, in this lowering run)."""
        return self.outside.key(owner, attr) if owner.given else ("made", id(owner), attr)

    def class_default(self, owner, attr, value):
        """``p.t`` of an object that holds no ``t`` yet, read as its class's value
        ``value``; the loops open here are noted, so that a store into ``p.t`` in
        one of them is seen (:meth:`first_store_over_default`).  An object in
        ``wrt`` whose attribute is such a variable binds it at the top of the
        function."""
        key = self.default_key(owner, attr)
        if owner.given and key in self.outside.early:
            name = self.lo.namer.fresh(f"{owner.label}_{attr}")
            self.outside.bind_first(owner, attr, name,
                                     ir.Copy(self.lo.expressions.constant(value, attr)))
            owner.attributes[attr] = ir.Name(name)
            return _UNRESOLVED  # read as the attribute's variable (object_attribute)
        if self.lo.loops.serials:
            self.outside.read_in_loops.setdefault(key, set()).update(self.lo.loops.serials)
        return value

    def first_store_over_default(self, owner, attr):
        """Before the first store into ``owner.attr`` where its class holds a
        default: a store in a loop that read the default first, or in a block
        other than the object's own (a branch, a loop body), lowers the function
        again, for an object in ``wrt``, with the attribute a variable from the
        top, bound to the default (a later read then sees the default on every
        path no store ran, the stored value after one); for an object made here,
        it is refused (:meth:`kept_object_refusal`)."""
        default = class_attribute(owner.cls, attr, _UNRESOLVED)
        if attr in owner.attributes or not isinstance(default, _DEFAULTS):
            return
        key = self.default_key(owner, attr)
        if key in self.outside.early:
            self.class_default(owner, attr, getattr(owner.cls, attr))
            return
        read = self.outside.read_in_loops.get(key, set())
        home = self.lo.root_block if owner.given else owner.home
        if not (read & set(self.lo.loops.serials) or self.lo.out is not home):
            return
        if not owner.given:
            raise self.kept_object_refusal(
                owner, f"a store over the class default '{owner.cls.__name__}.{attr}' (in "
                "a loop that read it first, or in a branch or loop the object was not "
                "made in)",
                UserLine(self.lo.line), f"{owner.label}.{attr}")
        raise LowerAgain(key)  # p.t = p.t + 1 in a loop, t a class default

    def store_attribute(self, owner, attr, value, line):
        self.first_store_over_default(owner, attr)
        if isinstance(value, CompileTimeValue):
            owner.attributes[attr] = value
            return
        if isinstance(value, TupleValue):  # self.params = params: the same container
            owner.attributes[attr] = value   # (its items are the caller's variables)
            return
        current = owner.attributes.get(attr)
        name = current.id if isinstance(current, ir.Name) else \
            self.lo.namer.fresh(f"{owner.label}_{attr}")
        self.lo.assignments.emit_value(name, value, line)
        owner.attributes[attr] = ir.Name(name)

    def class_attribute(self, owner, attr):
        """What ``owner.attr`` denotes when compiling: a method, a static method,
        a class constant; _UNRESOLVED for an attribute the object holds or a
        property (read by :meth:`object_attribute`)."""
        if attr in owner.attributes:
            value = owner.attributes[attr]
            if owner.given and isinstance(value, ir.Const) and \
                    isinstance(value.value, _FUNCTION_TYPES):
                return value.value  # self.act = np.tanh on a given object: compiled for it
            return value if isinstance(value, CompileTimeValue) else _UNRESOLVED
        raw = class_attribute(owner.cls, attr, _UNRESOLVED)
        if isinstance(raw, property) and raw.fget is not None:
            return MethodValue(raw.fget, owner, is_property=True)
        if isinstance(raw, staticmethod):
            return raw.__func__
        if isinstance(raw, types.FunctionType):
            return MethodValue(raw, owner)
        if raw is _UNRESOLVED or isinstance(raw, (property, classmethod)):
            return _UNRESOLVED
        self.refuse_descriptor(owner.cls, attr, raw)
        return self.class_default(owner, attr, getattr(owner.cls, attr))

    def refuse_descriptor(self, cls, attr, raw, node=None):
        """Refuse ``obj.attr`` where the class holds a descriptor other than a
        function, property or static method (``functools.cached_property``, a class
        with ``__get__``): what it gives an object is computed when the code runs,
        which the lowering does not follow (read through the class, it is the
        descriptor itself, or the user's ``__get__`` run without an object)."""
        if isinstance(raw, types.MemberDescriptorType) or not hasattr(type(raw), "__get__"):
            return  # a __slots__ member (the object's own), or plain data
        kind = type(raw).__qualname__
        raise self.lo.error(UnsupportedSyntaxError, f"'{attr}' of an object of "
                            f"{cls.__name__}, whose class makes it a descriptor ({kind}) the "
                            "compiler does not follow", node or UserLine(self.lo.line),
                            construct=f".{attr}",
                            hint="make it a @property (computed on each read), or compute "
                                 "the value in a method and call it")

    def kept_object_refusal(self, owner, what, node, construct):
        """The refusal of ``what`` on an object of a user's class that the lowering
        keeps (desugar writes an object as one name per attribute only where it is
        nothing but its attributes: not in a list returned or handed on, nor read
        after a loop outside the loop's block)."""
        return self.lo.error(UnsupportedSyntaxError, f"{what}, on an object of "
                             f"{owner.cls.__name__} that the compiler keeps as an object, "
                             "not only as its attributes (as for an object in a list "
                             "returned or handed on, read after a loop outside the loop's "
                             "block, or whose methods change what its class holds)", node,
                             construct=construct,
                             hint="keep the object under one name, made where it is used "
                                  "(or keep the value in a variable)")

    def static_property(self, obj, attr):
        """``MODEL.scaled_W`` of a module-level object whose class makes it a
        ``@property`` written in Python: its getter, to inline (None otherwise)."""
        if isinstance(obj, (type, types.ModuleType)):
            return None
        raw = inspect.getattr_static(type(obj), attr, None)
        if isinstance(raw, property) and user_function(raw.fget):
            return MethodValue(raw.fget, obj, is_property=True)
        return None

    def read_property(self, getter, node, hint):
        """The value of a ``@property``: its getter inlined with the object as ``self``."""
        return self.lo.callables.call_value(MethodValue(getter.fn, getter.owner), _bare_call(node), hint)

    def object_attribute(self, owner, node, hint):
        """``model.W`` (the attribute's variable) or ``model.W2`` (a ``@property``,
        its getter inlined)."""
        attr = node.attr
        if attr in owner.attributes:
            if owner.given:  # params.t, a constant unless the code assigns it
                return self.outside.given_attribute(owner, attr)
            return owner.attributes[attr]
        self.refuse_descriptor(owner.cls, attr, class_attribute(owner.cls, attr, None), node)
        raise self.lo.error(UnsupportedSyntaxError, f"{owner.cls.__name__} object has no "
                            f"attribute '{attr}' here", node, construct=to_source(node),
                            hint="set the attribute in __init__ before reading it")


# class defaults an object's own attribute may start from (``t = 0``, ``mem = np.zeros(2)``)
_DEFAULTS = (bool, int, float, complex, str, type(None), tuple, np.ndarray, np.generic)


def plain_store(cls, attr):
    """True when ``obj.attr = v`` on an object of ``cls`` binds ``v`` as the object's
    own attribute (in its ``__dict__``, or a ``__slots__`` member): no hook of the
    class's (``__setattr__``...) and no other data descriptor (a property's setter)."""
    if any(inspect.getattr_static(cls, hook, None) is not getattr(object, hook)
           for hook in _STORE_HOOKS):
        return False
    raw = inspect.getattr_static(cls, attr, None)
    return isinstance(raw, types.MemberDescriptorType) or \
        not (hasattr(type(raw), "__set__") or hasattr(type(raw), "__delete__"))


_STORE_HOOKS = ("__setattr__", "__delattr__", "__getattribute__")


def plain_function(value):
    """A function an object made in the code may hold as a compile-time value: a
    Python function without a closure (its globals hold no object made in the
    code), a NumPy function or ufunc, a builtin."""
    if isinstance(value, types.FunctionType):
        return value.__closure__ is None
    return isinstance(value, (np.ufunc, types.BuiltinFunctionType)) or \
        (callable(value) and not isinstance(value, type) and registry.lookup(value) is not None
         and not isinstance(value, CompileTimeValue))


def _own_function(fn):
    """A function of the user's own (not one ``collections.namedtuple`` makes)."""
    return user_function(fn) and not _installed(fn.__module__ or "")


def _bare_call(node):
    call = gast.Call(func=node, args=[], keywords=[])
    return gast.copy_location(call, node)
