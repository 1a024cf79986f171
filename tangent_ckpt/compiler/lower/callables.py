"""Lower: functions as values.

A function passed as an argument (``fixed_point(f, x0)``), a default argument
(``act=np.tanh``), a closure a factory returns, a ``lambda``, a
``functools.partial``, a method of an object, a ``@property``: each is
a compile-time value (:class:`~.scopes.CompileTimeValue`) that the lowering
holds itself, so that calling it inlines the right code.  A function is known
by its object (or, for a nested ``def``, its syntax tree), never by its name.
Objects of user classes are :mod:`.objects`'s.  Variadic calls (``g(*args)``,
``g(**kwargs)``, ``rng.randn(*x.shape)``) are spread into plain arguments here
too.  Desugar writes the plain forms before: each ``map`` it can follow
(``desugar/map_calls.py``: a comprehension, a loop or a generator expression;
one that reaches this module is refused), a ``partial`` bound once, of a lambda
or a method too (``partial_calls.py``), spreads of displays
(``spread_arguments.py``), a helper's spread of its own ``*args`` (``inline_functions.py``);
what reaches this module is what those passes leave (a partial object made at module
level; a spread of a tuple whose items are rebound, ``zip(*pairs)`` of such a tuple, the
``*args`` of a function the lowering inlines); a ``map`` or ``partial()`` left is refused.
"""

import functools
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.desugar.method_writes import handed_parameters, writes_self_in_place
from tangent_ckpt.compiler.fence.object_facts import number_attributes_of_class
from tangent_ckpt.compiler.lower.container_values import DictValue
from tangent_ckpt.compiler.lower.guards import check_helper_call
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, LocalFunction, Lowered, MethodValue, ObjectValue,
    PartialValue, TupleValue, is_function, to_source,
)
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED
from tangent_ckpt.compiler.frontend.reached_functions import METHOD, user_class, user_function
from tangent_ckpt.errors import UnsupportedFunctionError, UnsupportedSyntaxError
from tangent_ckpt.runtime.backends import is_foreign_array

# rng.randn(*shape) is rng.standard_normal(shape): draws whose sizes come spread
SPREAD_DRAWS = {"randn": "standard_normal", "rand": "random_sample"}


def is_compile_time(obj):
    """Is ``obj`` a value the lowering keeps itself rather than an operand: a
    function, a module, an object of a user class, a CompileTimeValue?"""
    if obj is _UNRESOLVED or obj is None:
        return False
    if isinstance(obj, (CompileTimeValue, types.ModuleType)):
        return True
    if isinstance(obj, (np.ndarray, np.generic, bool, int, float, complex, str, bytes,
                        tuple, list, dict, set, frozenset, range, slice)) or \
            is_foreign_array(obj):
        return False
    if is_function(obj):
        return True
    if isinstance(obj, type):  # a user's class: cls of a classmethod, Layer handed on
        return user_class(obj)
    return type(obj).__module__.split(".")[0] not in ("builtins", "numpy")


class CallableValues:
    """The lowering's part for functions as values (``lo.callables``): spread
    arguments, ``partial``/bound methods, lambdas, factories' results."""

    def __init__(self, lowering):
        self.lo = lowering
        self.checked_owners = []  # objects whose method the fence checked, being inlined
        self.numbers = {}  # class -> the attributes its objects surely hold numbers in

    # --- spreading *args and **kwargs ------------------------------------------
    def spread(self, node, hint):
        """``g(*args, **opts)`` as ``g(a, b, k=v)``: a spread tuple (``*args`` of
        an inlined function, a tuple of variables or constants) gives its items,
        a spread dict of known string keys (``**kwargs`` of an inlined function)
        its keywords (desugar/spread_arguments.py writes out spreads of displays).  A spread of unknown
        length is accepted where a single tuple means the same:
        ``rng.randn(*x.shape)`` is ``rng.standard_normal(x.shape)``,
        ``x.reshape(*shape)`` is ``x.reshape(shape)``."""
        args, keywords = [], []
        for a in node.args:
            if not isinstance(a, gast.Starred):
                args.append(a)
                continue
            v = self.lo.expressions.value(a.value, hint)
            if isinstance(v, TupleValue):
                args.extend(Lowered(item, a) for item in v.items)
            elif isinstance(v, ir.Const) and isinstance(v.value, (tuple, list)):
                args.extend(Lowered(ir.Const(item), a) for item in v.value)
            elif len(node.args) == 1 and not node.keywords:
                return self.spread_as_tuple(node, v, hint)
            else:
                raise self.lo.error(UnsupportedSyntaxError, "a spread (*) of a value whose "
                                    "length is not known when compiling", node,
                                    construct=to_source(a),
                                    hint="pass the items one by one, or a tuple")
        for k in node.keywords:
            if k.arg is not None:
                keywords.append(k)
                continue
            value = self.lo.expressions.value(k.value, hint)  # the **kwargs of a function
            if not (isinstance(value, DictValue) and all(isinstance(key, str)
                                                         for key in value.keys)):
                raise self.lo.error(UnsupportedSyntaxError, "** of a value that is not a dict "
                                    "of string keys known when compiling", node,
                                    construct=f"**{to_source(k.value)}",
                                    hint="pass the keywords by name")
            keywords.extend(gast.keyword(arg=name, value=Lowered(item, node))
                            for name, item in zip(value.keys, value.items))
        spread = gast.Call(func=node.func, args=args, keywords=keywords)
        return gast.copy_location(spread, node)

    def spread_as_tuple(self, node, value, hint):
        func = node.func
        method = func.attr if isinstance(func, gast.Attribute) else None
        registry_varargs = registry.varargs_methods()
        if method in SPREAD_DRAWS or method in registry_varargs:
            if method in SPREAD_DRAWS:
                func = gast.Attribute(value=func.value, attr=SPREAD_DRAWS[method],
                                      ctx=gast.Load())
                gast.copy_location(func, node.func)
            operand = self.lo.expressions.atomize(value, hint + "_shape")
            call = gast.Call(func=func, args=[Lowered(operand, node)], keywords=[])
            return gast.copy_location(call, node)
        raise self.lo.error(UnsupportedSyntaxError, "a spread (*) of a value whose length is "
                            "not known when compiling", node, construct=to_source(node),
                            hint="pass the items one by one, or a tuple")

    # --- calling compile-time values -----------------------------------------
    def special_call(self, fn, node, hint):
        """Calls whose callee is a value rather than a primitive: a partial
        object, a user class, a method bound to a module-level object, ``zip`` of
        tuples (``map`` and ``functools.partial()`` refused); None for any other
        call."""
        if fn is map:  # desugar/map_calls.py writes each map it can follow
            raise self.lo.error(UnsupportedSyntaxError, "map() of a function the compiler cannot "
                                "follow to where the map calls it (one made in a loop, a "
                                "computed one)", node,
                                construct=to_source(node),
                                hint="map a function bound once at the top of the function "
                                     "(or a lambda), or write a comprehension: "
                                     "[f(x) for x in xs]")
        if fn in (list, tuple) and len(node.args) == 1 and not node.keywords and \
                isinstance(node.args[0], gast.Call) and \
                self.lo.expressions.static_value(node.args[0].func) in (map, zip):
            return self.lo.calls.call(node.args[0], hint)  # tuple(zip(*pairs)): the items
        if fn is zip and node.args and not node.keywords:
            sequences = [self.lo.expressions.value(a, hint) for a in node.args]
            if all(isinstance(q, TupleValue) for q in sequences):  # zip(*pairs): transposed
                return TupleValue([TupleValue(list(items))
                                   for items in zip(*(q.items for q in sequences))])
            raise self.lo.error(UnsupportedSyntaxError, "zip() of arrays outside a for loop",
                                node, construct=to_source(node),
                                hint="loop over it: for a, b in zip(xs, ys)")
        if fn is functools.partial:  # desugar/partial_calls.py writes each it can follow
            raise self.lo.error(UnsupportedSyntaxError, "a functools.partial() the compiler "
                                "cannot write as calls of its function (one bound in a branch "
                                "or loop or more than once, handed on inside a comprehension, "
                                "with * or ** in it)", node, construct=to_source(node),
                                hint="bind it once at the top of the function and call it "
                                     "there, or call the function with all its arguments")
        if isinstance(fn, functools.partial):
            return self.call_value(PartialValue(
                fn.func, [self.lo.expressions.constant(a) for a in fn.args],
                {k: self.lo.expressions.constant(v, k) for k, v in fn.keywords.items()}),
                node, hint)
        if isinstance(fn, type) and fn.__module__.split(".")[0] not in ("builtins", "numpy"):
            return self.lo.objects.construct(fn, node, hint)
        if isinstance(fn, types.MethodType) and user_function(fn.__func__):
            return self.call_value(MethodValue(fn.__func__, fn.__self__), node, hint)
        if fn is not _UNRESOLVED and is_compile_time(fn) and \
                user_function(getattr(type(fn), "__call__", None)) and \
                registry.lookup(fn) is None:  # ACT(x), a module-level object: its __call__
            return self.call_value(MethodValue(type(fn).__call__, fn), node, hint)
        return None

    def call_value(self, value, node, hint):
        """Call a compile-time value (a partial, a method, an object with a
        ``__call__``; a ``def`` or ``lambda`` is ``lo.calls``'s) with the
        arguments of ``node``."""
        if isinstance(value, PartialValue):
            call = gast.Call(func=Lowered(value.fn, node),
                             args=[Lowered(a, node) for a in value.args] + list(node.args),
                             keywords=[gast.keyword(arg=k, value=Lowered(v, node))
                                       for k, v in value.keywords.items()] + list(node.keywords))
            return self.lo.calls.call(gast.copy_location(call, node), hint)
        if isinstance(value, MethodValue) and not value.is_property:
            self.check_in_place_method(value, node)
            prepared = self.method_on(value, node)
            parsed = prepared.checked()
            call = gast.Call(func=node.func, args=[Lowered(value.owner, node)] + list(node.args),
                             keywords=list(node.keywords))
            self.lo.fenced.marks.same_call(node, call)  # views.py: its writes into arguments
            if node in self.lo.discarded_calls:  # m.decay(0.9)
                self.lo.discarded_calls[call] = True
            check_helper_call(self.lo, prepared.findings, parsed.node, call, site=node)
            checked = self.checked_owners
            checked.append(value.owner)  # its own methods' calls: checked with this one
            try:
                return self.lo.inlining.inline(parsed.node, None,
                                               gast.copy_location(call, node), hint, parsed)
            finally:
                checked.pop()
        if isinstance(value, ObjectValue):
            method = self.lo.objects.class_attribute(value, "__call__")
            if isinstance(method, MethodValue):
                return self.call_value(method, node, hint)
        raise self.lo.error(UnsupportedSyntaxError, "this value cannot be called", node,
                            construct=_spelled(node))

    def check_in_place_method(self, value, node):
        """A method writing in place into its object's arrays (``self.P += Q``) is
        followed only where the aliasing fence checked the call (on an object its
        class makes in the calling function, or through the object's own methods):
        elsewhere the caller may name the same array (``m = Model(P)``)."""
        owner = value.owner
        if not isinstance(owner, ObjectValue) or owner.given or \
                node in self.lo.fenced.checked_receivers or \
                any(o is owner for o in self.checked_owners) or \
                not writes_self_in_place(
                    value.fn, cls=owner.cls, numbers=self.number_attributes(owner.cls),
                    dicts=frozenset(a for a, v in owner.attributes.items()
                                    if isinstance(v, DictValue))):
            return
        raise self.lo.error(UnsupportedSyntaxError, f"{value.fn.__qualname__}() writes in place "
                            "into an array its object holds (self.x += ..., self.x[i] = ...)",
                            node, construct=_spelled(node),
                            hint="make the object in this function (obj = Class(...)) and call "
                                 "the method on that name, or rebind the attribute instead: "
                                 "self.x = self.x + ...")

    def number_attributes(self, cls):
        """The attributes every object of ``cls`` holds a number in (``self.t += 1``
        rebinds them), read off every function the lowering may inline."""
        if cls not in self.numbers:
            trees = [self.lo.parsed.node] + [p.parsed.node for p in
                                             self.lo.fenced.functions.values()
                                             if p.parsed is not None]
            self.numbers[cls] = number_attributes_of_class(cls, trees)
        return self.numbers[cls]

    def hands_object(self, node):
        """Whether call ``node`` hands one of the user's functions an object made in
        the differentiated code (``train(net, lr)``, ``Layer.__init__(self)``):
        called as a statement, it is inlined for what it does to the object (the
        attributes it rebinds are the object's variables after the call)."""
        fn = self.lo.expressions.static_value(node.func)
        if not (isinstance(fn, LocalFunction) or user_function(fn)):
            return False
        return any(isinstance(self.lo.expressions.static_value(a), ObjectValue)
                   for a in list(node.args) + [k.value for k in node.keywords])

    def check_object_arguments(self, fn, node):
        """A function of the user's writing in place into an array an object it is
        handed holds (``net.W -= lr * g`` in ``train(net, lr)``) is followed only
        where the aliasing fence checked that object at the call (a name bound by
        ``net = Net(...)``, or the object whose method is being inlined): elsewhere
        another name may hold the same array (``Net(W)`` keeps ``W``).  Returns the
        objects the fence checked there (their methods' calls in ``fn`` are checked
        with this one)."""
        if isinstance(fn, LocalFunction):
            self.check_local_object_arguments(fn, node)
            return []
        handed = handed_parameters(fn, node)
        checked = self.lo.fenced.checked_receivers.get(node, ())
        owners = []
        for param, arg in handed:
            owner = self.lo.expressions.static_value(arg)
            if not isinstance(owner, ObjectValue) or owner.given:
                continue
            if isinstance(checked, frozenset) and param in checked:
                owners.append(owner)  # its methods' calls in fn: checked with this one
                continue
            if any(o is owner for o in self.checked_owners) or \
                    not writes_self_in_place(fn, cls=owner.cls, me=param):
                continue
            raise self.lo.error(UnsupportedSyntaxError,
                                f"{fn.__qualname__}() writes in place into an array the "
                                f"object it gets as '{param}' holds ({param}.x += ..., "
                                f"{param}.x[i] = ...), and the object here is not one the "
                                "compiler can follow", node, construct=_spelled(node),
                                hint="make the object in this function (obj = Class(...)) "
                                     "and pass that name, or rebind the attribute instead: "
                                     f"{param}.x = {param}.x + ...")
        return owners

    def check_local_object_arguments(self, fn, node):
        """The same for a function defined inside another (the fence does not check
        its call sites): one handed an object may read and rebind its attributes
        (``n.w = n.w - ...``), nothing that may write into the arrays it holds."""
        args = fn.node.args
        params = [a.id for a in args.posonlyargs + args.args]
        vararg = args.vararg.id if args.vararg is not None else None
        kwarg = args.kwarg.id if args.kwarg is not None else None
        named = set(params) | {a.id for a in args.kwonlyargs}
        handed = [(params[k] if k < len(params) else vararg, a)
                  for k, a in enumerate(node.args)] + \
            [(k.arg if k.arg in named else kwarg, k.value) for k in node.keywords]
        for param, arg in handed:
            owner = self.lo.expressions.static_value(arg)
            if not isinstance(owner, ObjectValue) or owner.given:
                continue
            writes = _writes_through(fn.node, param) if param is not None else None
            if writes is None:
                continue
            raise self.lo.error(UnsupportedSyntaxError,
                                f"{fn.node.name}() may write in place into an array the "
                                f"object it gets as '{param}' holds (line {writes.lineno}): "
                                "the writes of a function defined inside another are not "
                                "followed into an object it is handed", node,
                                construct=_spelled(node),
                                hint=f"define {fn.node.name}() at module level, or rebind "
                                     f"the attribute instead: {param}.x = {param}.x + ...")

    def parsed(self, fn, node):
        """A method (or a generator) of the user's, as the fence checked it."""
        return self.method(fn, node).checked()

    def method_on(self, value, node):
        """The method of ``value`` (a MethodValue) as the fence prepared it: on an
        object its class makes in the code, the version fenced knowing that
        object's attributes, where the fence made one (fence_once.py)."""
        owner = value.owner
        if isinstance(owner, ObjectValue) and not owner.given:
            prepared = self.lo.fenced.receiver_methods.get((value.fn, owner.cls))
            if prepared is not None and user_function(value.fn):
                return prepared
        return self.method(value.fn, node)

    def method(self, fn, node):
        """A method (or a generator) of the user's as the fence prepared it: its
        tree and what its fence found (fence_guards.FenceFindings), or its refusal."""
        if not user_function(fn):
            message, hint = _library_method(fn)
            raise self.lo.error(UnsupportedSyntaxError, message, node, hint=hint,
                                construct=_spelled(node))
        return self.fenced(METHOD, fn, node)

    def fenced(self, role, fn, node):
        """``fn`` as the fence prepared it before lowering (``fence_once.py``), in
        ``role``; a function it did not reach is refused: nothing checked its writes."""
        prepared = self.lo.fenced.functions.get((role, fn))
        if prepared is None:
            raise self.lo.error(UnsupportedFunctionError,
                                f"{fn.__qualname__}() is reached in a way the aliasing fence "
                                "did not foresee, so its writes were not checked", node,
                                construct=_spelled(node),
                                hint="call it by its name, or pass it by name as an argument")
        return prepared

    def operand(self, node, hint):
        value = self.lo.expressions.value(node, hint)
        if isinstance(value, (CompileTimeValue, TupleValue)):
            return value
        return self.lo.expressions.atomize(value, hint)

    def lambda_value(self, node):
        """A ``lambda`` as a nested function (its body is its return value)."""
        fdef = gast.FunctionDef(name="lambda_fn", args=node.args,
                                body=[gast.copy_location(gast.Return(value=node.body), node)],
                                decorator_list=[], returns=None, type_comment=None,
                                type_params=[])
        gast.copy_location(fdef, node)
        fdef.end_lineno = getattr(node, "end_lineno", node.lineno)
        return LocalFunction(fdef, self.lo.current_scope)

    # --- binding and returning them ---------------------------------------------
    def bind_value(self, user_name, value, stmt):
        """``loss = make_loss(3.0)``, ``sq = lambda z: z * z``, ``model = Model(W)``:
        the name denotes the value from here on.  It must be bound once, at the
        top level of the function (so every later use sees this value)."""
        scope = self.lo.current_scope
        if user_name not in scope.alias_candidates:
            spelled = to_source(stmt).strip().splitlines()[0]
            raise self.lo.error(UnsupportedSyntaxError,
                                f"`{spelled}`: '{user_name}' is bound to a function or object "
                                "more than once or inside a branch or loop", stmt,
                                construct=spelled,
                                hint="bind it once, at the top level of the function")
        scope.rename.pop(user_name, None)  # the name is no variable
        scope.tuples.pop(user_name, None)
        scope.functions[user_name] = value

    def return_value(self, value, stmt):
        """A factory's ``return loss``: the inlined call's value is the function."""
        ctx = self.lo.ctx
        if ctx.get("result_value") not in (None, value) or ctx.get("result_items"):
            raise self.lo.error(UnsupportedSyntaxError, "returns of different functions or "
                                "objects", stmt, construct=to_source(stmt).strip(),
                                hint="return one function from the factory")
        ctx["result_value"] = value


def _writes_through(fnode, param):
    """The first statement of ``fnode`` that may write into what its parameter
    ``param`` (an object) holds: ``param.x += v``, ``param.x[i] = v``, a method
    called on it or on what it holds, ``param`` handed to a call; None if none."""
    for stmt in gast.walk(fnode):
        if not isinstance(stmt, gast.stmt):
            continue
        for sub in gast.walk(stmt):
            if isinstance(sub, gast.AugAssign) and not isinstance(sub.target, gast.Name) and \
                    _rooted(sub.target, param) or \
                    isinstance(sub, gast.Subscript) and isinstance(sub.ctx, gast.Store) and \
                    _rooted(sub, param) or \
                    isinstance(sub, gast.Call) and (
                        _rooted(sub.func, param) and isinstance(sub.func, gast.Attribute) or
                        any(isinstance(a, gast.Name) and a.id == param for a in sub.args) or
                        any(k.arg == "out" for k in sub.keywords)):
                return stmt
    return None


def _rooted(node, name):
    while isinstance(node, (gast.Attribute, gast.Subscript)):
        node = node.value
    return isinstance(node, gast.Name) and node.id == name


def _library_method(fn):
    """The refusal of a library's method the lowering would inline (``__init__`` of
    ``random.Random(3)`` made in the function): (message, hint)."""
    cls = getattr(fn, "__objclass__", None)  # a slot wrapper: dict.__init__
    module = getattr(fn, "__module__", None) or getattr(cls, "__module__", None) or "builtins"
    qualname = getattr(fn, "__qualname__", None) or repr(fn)
    owner, _, name = qualname.rpartition(".")
    if name == "__init__" and owner:
        message = (f"an object of the library class {module}.{owner} made in the "
                   "function: the compiler inlines the methods of the classes of the "
                   "user's own code only")
    else:
        message = (f"{module}.{qualname} is a library's method: the compiler inlines the "
                   "methods of the classes of the user's own code only")
    if module == "random" and owner == "Random":
        return message, ("make it outside and pass it in (f(x, random.Random(3))): the "
                         "draws of a random.Random given as an argument (r.random(), "
                         "r.uniform(a, b), ...) are followed, and a checkpointed loop saves "
                         "its state; or draw from np.random.default_rng(3) made here")
    return message, ("make the object outside the function and pass it in, or use a class "
                     "of your own code")


def _spelled(node):
    if any(isinstance(n, Lowered) for n in gast.walk(node)):
        return "call"
    return to_source(node)
