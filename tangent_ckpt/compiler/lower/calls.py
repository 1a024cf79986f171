"""Lower: calls -- NumPy primitives (with adjoint rules), array methods
(``x.sum(axis=0)`` is ``np.sum``), and the dispatch of the user's own
functions to :mod:`.inlining`, which lowers their bodies at the call site."""

import ast
import builtins
import math
import operator
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.container_values import DictValue
from tangent_ckpt.compiler.lower.guards import (check_callable_arguments, check_helper_call,
                                                 check_local_call)
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, LocalFunction, Lowered, MethodValue, ObjectValue, TupleValue,
    to_source,
)
from tangent_ckpt.compiler.frontend.reached_functions import user_class
from tangent_ckpt.compiler.memory_sharing import ARRAY_WRITING_METHODS, unbuffered_write
from tangent_ckpt.compiler.naming import numpy_path, public_name
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED
from tangent_ckpt.compiler.frontend.reached_functions import FUNCTION, is_library
from tangent_ckpt.errors import (
    SourceUnavailableError, UnsupportedFunctionError, UnsupportedSyntaxError,
)
from tangent_ckpt.markers import checkpoint, checkpoint_scope
from tangent_ckpt import runtime
from tangent_ckpt.runtime import random_state
from tangent_ckpt.runtime.primitive_adjoints.array_adjoints import column_join, row_join
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import cast_result, through_cast
from tangent_ckpt.runtime.scheduling.savings import checkpointed_loop

# array methods and the NumPy function each one means (declared with the rules)
METHODS = registry.methods()
VARARGS_METHODS = registry.varargs_methods()  # x.reshape(2, 3) == np.reshape(x, (2, 3))

# calls kept as written, without a derivative; other types (np.float64, ...) go
# through the registry like any function, so an active argument without a rule
# is an error rather than a silently dropped gradient
NONDIFF_CALLS = (range, int, bool, isinstance, str, type,
                 round, math.floor, math.ceil, math.trunc)  # piecewise constant: derivative 0

# array attributes that are functions of the array: x.real is np.real(x) (declared with
# the rules)
ATTRIBUTE_FUNCTIONS = registry.attribute_functions()

# np.r_[...] and np.c_[...] and the runtime functions they mean
INDEX_JOINS = {id(np.r_): row_join, id(np.c_): column_join}


_NOT_LITERAL = object()


def _literal(node):
    """The value of a literal made of constants (``([0, 2], [2, 0])``), else _NOT_LITERAL."""
    try:
        return ast.literal_eval(gast.gast_to_ast(node))
    except (ValueError, SyntaxError, TypeError):
        return _NOT_LITERAL


def _astype_dtype(node):
    """The dtype node of ``x.astype(dtype)`` / ``x.astype(dtype=..., copy=...)``,
    or None for a call with other arguments (refused as an unknown method)."""
    keywords = {k.arg: k.value for k in node.keywords}
    if set(keywords) - {"dtype", "copy"} or len(node.args) + ("dtype" in keywords) != 1 or \
            len(node.args) > 1:
        return None
    return node.args[0] if node.args else keywords["dtype"]


def dtype_operand(prim):
    """The operand a call passes as its rule's ``dtype`` parameter, or None."""
    rule = registry.lookup(prim.fn)
    if rule is None or rule.constant or rule.vjp is not None or \
            "dtype" not in rule.param_names or prim.fn in (cast_result, through_cast):
        return None
    try:
        op = rule.bind(prim.args, prim.kwargs).get("dtype")
    except TypeError:
        return None
    return op if isinstance(op, (ir.Const, ir.Name)) else None


def _generator_hint(func):
    """The name a generator object reached as ``RS.randn`` / ``self.rng.normal`` goes by."""
    value = func.value if isinstance(func, gast.Attribute) else None
    if isinstance(value, gast.Name):
        return value.id
    if isinstance(value, gast.Attribute):
        return value.attr
    return "rng"


def _constant_array_method(fn):
    """``A.dot``, ``A.T.sum`` of an array known at compile time (a module-level
    constant, an attribute of a module-level object): a method with a row in the
    registry is that row's function of the array (``np.dot(A, w)``), as for any
    array; a method without one stays a call of the bound method."""
    return isinstance(getattr(fn, "__self__", None), np.ndarray) and \
        getattr(fn, "__name__", None) in METHODS


def _clip_bounds(args, keywords):
    """``x.clip(min, max)`` as ``np.clip(x, a_min, a_max)``'s positional bounds:
    the method leaves either at None, and takes them as ``min=``/``max=``, which
    NumPy's function takes only from 2.1 on."""
    none = gast.Constant(value=None, kind=None)
    bounds = (list(args[:2]) + [none, none])[:2]
    rest = []
    for k in keywords:
        position = {"min": 0, "max": 1}.get(k.arg)
        if position is not None and position >= len(args):
            bounds[position] = k.value
        else:
            rest.append(k)
    return bounds + list(args[2:]), rest


def _integer_type(fn):
    """NumPy's integer and bool scalar types (``np.int64(x)``): a truncation."""
    return isinstance(fn, type) and issubclass(fn, (np.integer, np.bool_))


class CallLowering:
    """The lowering's part for calls (``lo.calls``): primitives, methods (the
    checkpoint markers are desugar's, ``checkpoint_calls.py``); user functions go to
    ``lo.inlining``, calls of values (partials, bound methods, ``map``, classes) to
    ``lo.callables`` and ``lo.objects``."""

    def __init__(self, lowering):
        self.lo = lowering

    def call(self, node, hint):
        if any(isinstance(a, gast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            node = self.lo.callables.spread(node, hint)  # g(*args), g(**opts), rng.randn(*x.shape)
        func = node.func
        fn = self.lo.expressions.static_value(func)
        if isinstance(fn, CompileTimeValue) and not isinstance(fn, LocalFunction):
            return self.lo.callables.call_value(fn, node, hint)  # a partial, a method, an object
        special = self.lo.callables.special_call(fn, node, hint)  # map, partial, a class, a bound method
        if special is not None:
            return special
        if isinstance(func, gast.Attribute) and fn is _UNRESOLVED:
            owner = self.lo.expressions.static_value(func.value)
            if isinstance(owner, ObjectValue) and func.attr in owner.attributes:
                raise self.lo.error(  # self.f(x) with self.f = f: a value, not a method
                    UnsupportedFunctionError, f"a call of the value the attribute "
                    f"{to_source(func)} holds (a function stored on an object made in the "
                    "code is kept as a value, which is not inlined)", node,
                    construct=to_source(node),
                    hint="call the function by its name, or pass it to the method as an "
                         "argument")
        if isinstance(func, gast.Attribute) and (fn is _UNRESOLVED or _constant_array_method(fn)):
            return self.method_call(node, hint)  # x.sum(), and A.dot(w) of a module-level A
        generator = random_state.generator_of(fn)
        if generator is not None and fn.__name__ in random_state.DRAWS:
            # RS.randn(3), self.rng.normal(), a closure's rs.uniform(): a draw from a
            # generator object reached at compile time, named like one passed in
            base = self.lo.expressions.bind(generator, _generator_hint(func))
            return self.primitive(random_state.DRAWS[fn.__name__], node.args, node.keywords,
                                  hint, node, leading=(base,))
        if fn is _UNRESOLVED:
            raise self.lo.error(UnsupportedFunctionError, f"cannot resolve the function "
                             f"{to_source(func)}", node, construct=to_source(func),
                             hint="call a function defined at module level or in this function")
        if isinstance(fn, LocalFunction):
            check_local_call(self.lo, fn.node, node)
            self.lo.callables.check_object_arguments(fn, node)  # step(net): net.W -= ...
            return self.lo.inlining.inline(fn.node, fn.scope, node, hint, fn.scope.parsed)
        if unbuffered_write(fn):  # a statement of its own is a write (effect_calls.py)
            raise self.lo.error(UnsupportedSyntaxError, f"`{to_source(node)}` writes into its "
                                "first argument in place, inside an expression", node,
                                construct=f"{to_source(func)} in an expression",
                                hint=f"call {to_source(func)}(a, idx, v) as a statement of "
                                     "its own (it returns None)")
        if fn in (checkpoint, checkpointed_loop, checkpoint_scope):
            raise self.marker_error(fn, node)
        if fn is vars and len(node.args) == 1:  # vars(CELL): the object's own attributes
            owner = self.lo.objects.outside.owner(node.args[0])
            if owner is not None and not isinstance(owner, ObjectValue):
                self.lo.objects.outside.note_attribute_dict(owner, node)
        if fn in (len,):
            arg = self.lo.expressions.value(node.args[0], hint)
            if isinstance(arg, TupleValue):  # len(args) of a *args tuple
                return ir.Const(len(arg.items))
            arg = self.lo.expressions.atomize(arg, hint)
            return ir.NonDiff(sx.builtin_call("len", ir.operand_node(arg)), ir.operand_names(arg))
        if fn is isinstance:
            decided = self.static_isinstance(node)
            if decided is not None:
                return decided
        if fn in (max, min) and len(node.args) == 1:  # what desugar/extreme_items.py left
            raise self.lo.error(UnsupportedFunctionError, f"{fn.__name__}() of one value "
                                "computed where Python may not evaluate it (a branch of "
                                "`a if c else b`, an `and`/`or`, a lambda) or next to a call "
                                "that may change something", node, construct=to_source(node),
                                hint=f"bind the value to a name first (v = ...; "
                                     f"{fn.__name__}(v))")
        if fn in NONDIFF_CALLS or _integer_type(fn):
            return self.lo.expressions.nondiff(node)
        rule = registry.lookup(fn)
        if rule is None and isinstance(fn, types.FunctionType) and not is_library(fn):
            prepared = self.lo.callables.fenced(FUNCTION, fn, node)
            if prepared.parsed is not None or \
                    not isinstance(prepared.error, SourceUnavailableError):
                if prepared.unless is not None:  # newton(F, DFinv, x0): F, DFinv new
                    check_callable_arguments(self.lo, prepared, prepared.parsed.node, node)
                parsed = prepared.checked(callables_checked=True)
                check_helper_call(self.lo, prepared.findings, parsed.node, node)
                owners = self.lo.callables.check_object_arguments(fn, node)  # train(net, lr)
                checked = self.lo.callables.checked_owners
                checked.extend(owners)
                try:
                    return self.lo.inlining.inline(parsed.node, None, node, hint, parsed)
                finally:
                    del checked[len(checked) - len(owners):]
        return self.primitive(fn, node.args, node.keywords, hint, node)

    def marker_error(self, fn, node):
        """A checkpoint marker reached as a call: ``checkpoint_scope`` outside a
        ``with``, or ``tc.checkpoint`` / ``tc.checkpointed_loop`` called through a
        value ``desugar/checkpoint_calls.py`` does not follow (a name bound more than
        once, an attribute holding it, a partial of it)."""
        scope = fn is checkpoint_scope
        return self.lo.error(
            UnsupportedSyntaxError, "checkpoint_scope() outside a with statement" if scope
            else f"{fn.__name__}() called through a value", node, construct=fn.__name__,
            hint='write `with tangent_ckpt.checkpoint_scope("name"):` around a block' if scope
            else f"call tangent_ckpt.{fn.__name__}(...) by its name, or by an alias imported "
                 "or bound once")

    def static_isinstance(self, node):
        """``isinstance(v, T)`` of a variable holding a list, tuple, dict or object
        of static structure (one variable per element: nothing to test at run
        time) is a constant; None for anything else (an array's type is tested
        when the code runs: differentiation does not change it)."""
        if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], gast.Name):
            return None
        spec = node.args[1]
        classes = tuple(map(self.lo.expressions.static_value, spec.elts)) \
            if isinstance(spec, gast.Tuple) else self.lo.expressions.static_value(spec)
        if not (isinstance(classes, type) or isinstance(classes, tuple) and classes and
                all(isinstance(c, type) for c in classes)):
            return None
        value = self.lo.expressions.value(node.args[0], "isinstance")
        if isinstance(value, DictValue):
            kind = dict
        elif isinstance(value, TupleValue):
            kind = value.cls or (list if value.is_list else tuple)
        elif isinstance(value, ObjectValue):
            kind = value.cls
        elif self.lo.run_time.is_rows(value):
            kind = list
        elif self.lo.run_time.is_dict(value):
            kind = dict
        else:
            return None
        return ir.Const(issubclass(kind, classes))

    def reject_out_argument(self, node, fn=None):
        """``out=`` writes into an existing array: the adjoint would be wrong."""
        named = any(k.arg == "out" for k in node.keywords)
        rule = registry.lookup(fn) if fn is not None else None
        if not named and rule is not None and "out" in rule.param_names:
            try:
                bound = rule.bind(list(node.args), {k.arg: k.value for k in node.keywords})
            except TypeError:
                bound = {}
            named = bound.get("out") is not None
        if named:
            raise self.lo.error(UnsupportedSyntaxError,
                             f"{to_source(node.func)}(..., out=...) writes into an array "
                             "in place", node, construct="out= argument",
                             hint="assign the result instead: y = f(...); a statement "
                                  "f(..., out=y) naming one array is written y[...] = f(...)")

    def primitive(self, fn, arg_nodes, keywords, hint, node, leading=()):
        self.reject_out_argument(node, fn)
        self.refuse_functions_passed_to_black_box(fn, [*arg_nodes, *(k.value for k in keywords)],
                                                  node)
        args = list(leading)
        base_hint = hint
        if fn in (np.array, np.asarray) and not keywords and len(arg_nodes) == 1 and \
                isinstance(arg_nodes[0], (gast.Tuple, gast.List)) and \
                _literal(arg_nodes[0]) is _NOT_LITERAL:   # np.array([x, y]) is np.stack
            fn = np.stack
        for a in arg_nodes:
            if isinstance(a, (gast.Tuple, gast.List)):
                args.append(self.sequence_argument(a, base_hint))
            else:
                args.append(self.lo.containers.operand(a, base_hint))
        kwargs = {}
        for k in keywords:
            v = k.value
            if isinstance(v, (gast.Tuple, gast.List)):
                kwargs[k.arg] = self.sequence_argument(v, base_hint, kind="tuple")
            else:
                kwargs[k.arg] = self.lo.containers.operand(v, base_hint)
        args, kwargs = self.stack_array_lists(fn, args, kwargs, hint)
        if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:  # sum(rows), list(rows)
            for a in args:
                self.lo.run_time.refuse_nested(a, f"{fn.__name__}()", node)
        ref = numpy_path(fn)
        if ref is None:
            if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
                ref = fn.__name__
            elif getattr(runtime, getattr(fn, "__name__", ""), None) is fn:
                ref = f"rt.{fn.__name__}"  # rt.item_at, a call desugar wrote
            else:
                ref = self.lo.expressions.bind(fn, getattr(fn, "__name__", "fn")).id
        return self.cast(ir.Prim(fn, args, kwargs, "call", ref=ref), hint)

    def cast(self, prim, hint):
        """A call given ``dtype=`` (``np.asarray(x, dtype=int)``, ``np.sum(x,
        dtype=np.int32)``): a result of integers or truth values is piecewise
        constant in the arguments, with derivative 0, so it is kept as written
        without one; a floating or complex dtype keeps the derivative (a real one
        of a complex value its real part: analyze/complex_values.py
        ``takes_real_part``); a dtype known only at run time passes the result
        through ``rt.cast_result``, whose adjoint decides when it runs."""
        dtype = self.bound_dtype(prim)
        if dtype is None:
            return prim
        if dtype is _UNRESOLVED:
            result = self.lo.expressions.atomize(prim, hint)
            return ir.Prim(cast_result, [result, dtype_operand(prim)], {}, "call",
                           ref="rt.cast_result")
        if np.dtype(dtype).kind in "biu":
            return ir.NonDiff(ir.prim_node(prim), tuple(
                name for op in (*prim.args, *prim.kwargs.values())
                for name in ir.operand_names(op)))
        return prim

    def bound_dtype(self, prim):
        """The dtype a primitive call is given: None (none given, or the rule has
        no ``dtype`` parameter or no derivative), the dtype when it is known at
        compile time, or _UNRESOLVED."""
        op = dtype_operand(prim)
        if op is None:
            return None
        if isinstance(op, ir.Const):
            value = op.value
        elif isinstance(op, ir.Name) and op.id in self.lo.bindings:  # int, np.int64, a global
            value = self.lo.bindings[op.id]
        else:
            return _UNRESOLVED
        if value is None:
            return None
        try:
            return np.dtype(value)
        except TypeError:
            return _UNRESOLVED

    def refuse_functions_passed_to_black_box(self, fn, arg_nodes, node):
        """A function of the user's code (a lambda, a nested def, a bound method
        ``self.compute_label``) passed to a
        library call with no adjoint rule (``solve_ivp(lambda t, y: -k * y, ...)``):
        the library calls it where the compiler cannot see, and the call itself
        has no rule."""
        if registry.lookup(fn) is not None:
            return
        passed = [a for a in arg_nodes if isinstance(a, gast.Lambda) or
                  isinstance(self.lo.expressions.static_value(a), (LocalFunction, MethodValue))]
        if not passed:
            return
        name = public_name(fn) or to_source(node.func)
        if isinstance(passed[0], gast.Lambda):
            kind = "lambda"
        elif isinstance(self.lo.expressions.static_value(passed[0]), MethodValue):
            kind = f"method {to_source(passed[0])}"
        else:
            kind = f"function {to_source(passed[0])}"
        raise self.lo.error(UnsupportedFunctionError, f"no adjoint rule for {name}", node,
                            construct=name,
                            hint=f"it calls the {kind} passed to it, inside the library; "
                                 "wrap the call in a function of the arrays and register "
                                 "its adjoint with tangent_ckpt.register_adjoint "
                                 "(docs/black_boxes.md: an adjoint ODE solve), or compute it "
                                 "outside the differentiated path")

    def stack_array_lists(self, fn, args, kwargs, hint):
        """A list of variables passed where the rule takes one array
        (``np.sum([a, b])``, ``np.sin([x, y])``) is what NumPy makes of it:
        ``np.stack([a, b])``."""
        rule = registry.lookup(fn)
        if rule is None or rule.vjp is not None or rule.constant:
            return args, kwargs
        try:
            bound = rule.bind(args, kwargs)
        except TypeError:
            return args, kwargs
        lists = {id(op) for param, op in bound.items()
                 if param in rule.templates and param not in rule.sequence_params
                 and isinstance(op, ir.Seq) and any(isinstance(x, ir.Name) for x in op.items)}
        if not lists:
            return args, kwargs

        def stacked(op):
            if id(op) not in lists:
                return op
            return self.lo.expressions.atomize(ir.Prim(np.stack, [ir.Seq(op.items, "list")], {}, "call",
                                        ref="np.stack"), hint)
        return [stacked(a) for a in args], {k: stacked(v) for k, v in kwargs.items()}

    def sequence_argument(self, node, hint, kind=None):
        """A list or tuple literal passed to a function: a constant when it holds
        only constants (``axes=([0, 2], [2, 0])``), else a sequence operand whose
        nested lists become ``np.stack`` of their items (``[[a, b], [c, d]]``)."""
        kind = kind or ("list" if isinstance(node, gast.List) else "tuple")
        if any(isinstance(e, (gast.Tuple, gast.List)) for e in node.elts):
            value = _literal(node)
            if value is not _NOT_LITERAL:
                return ir.Const(value)
        items = []
        for e in node.elts:
            if isinstance(e, (gast.Tuple, gast.List)):
                inner = ir.Prim(np.stack, [self.sequence_argument(e, hint)], {}, "call",
                                ref="np.stack")
                items.append(self.lo.expressions.atomize(inner, hint))
            else:
                items.append(self.lo.expressions.atomize(self.lo.expressions.value(e, hint), hint))
        return ir.Seq(tuple(items), kind)

    def index_join(self, fn, node, hint):
        """``np.r_[a, b]`` / ``np.c_[a, b]``: calls in disguise, of ``rt.row_join`` /
        ``rt.column_join`` (arrays and numbers; slices and string directives are refused)."""
        items = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        spelled = f"np.{'r_' if fn is row_join else 'c_'}[...]"
        for item in items:
            if isinstance(item, gast.Slice) or (isinstance(item, gast.Constant)
                                                and isinstance(item.value, str)):
                raise self.lo.error(UnsupportedSyntaxError, f"{spelled} with a slice or a "
                                 "string directive", node, construct=spelled,
                                 hint="build the pieces with np.arange/np.linspace and join "
                                      "them with np.concatenate")
        args = [self.lo.expressions.atomize(self.lo.expressions.value(item, hint), hint) for item in items]
        return ir.Prim(fn, args, {}, "call", ref=f"rt.{fn.__name__}")

    def method_call(self, node, hint):
        func = node.func
        method = func.attr
        if isinstance(func.value, gast.Call) and \
                user_class(self.lo.expressions.static_value(func.value.func)):
            made = self.lo.expressions.value(func.value, hint)  # TwoLayerNet(W1, b1).loss(X, y)
            bound = self.lo.objects.class_attribute(made, method) \
                if isinstance(made, ObjectValue) else None
            if not isinstance(bound, MethodValue):
                raise self.lo.error(UnsupportedFunctionError, f"method .{method}() of a new "
                                    f"object", node, construct=f".{method}()",
                                    hint="name the object first: obj = Class(...); "
                                         f"obj.{method}(...)")
            return self.lo.callables.call_value(bound, node, hint)
        if method in ARRAY_WRITING_METHODS:
            raise self.lo.error(UnsupportedSyntaxError,
                             f"in-place method .{method}() changes an array", node,
                             construct=f"in-place .{method}()",
                             hint=f"use the functional form, e.g. x = np.{method}(x)")
        if method in random_state.DRAWS:  # rng.standard_normal(n): a draw, no derivative
            base = self.lo.expressions.atomize(self.lo.expressions.value(func.value, hint), hint)
            return self.primitive(random_state.DRAWS[method], node.args, node.keywords, hint,
                                  node, leading=(base,))
        rewritten = self.rewritten_method(node, hint)
        if rewritten is not None:
            return rewritten
        owner = self.lo.expressions.static_value(func.value)
        if isinstance(owner, types.ModuleType) and not hasattr(owner, method):
            # np.row_stack under NumPy 2.5: the name is gone, not a method without a rule
            raise self.lo.error(UnsupportedFunctionError, f"module '{owner.__name__}' has no "
                                f"attribute '{method}'", node, construct=f"{to_source(func)}",
                                hint="a function deprecated and then removed by the library "
                                     "(docs/supported_ops.md, NumPy versions, names the "
                                     "replacements)")
        if method not in METHODS:
            raise self.lo.error(UnsupportedFunctionError, f"unsupported method .{method}()", node,
                             construct=f"{to_source(func)}()" if _printable(func)
                             else f".{method}()",
                             hint="for an array, call the NumPy function form or register an "
                                  "adjoint; for an object passed in, call the method on an "
                                  "object made inside the function or at module level")
        base = self.lo.expressions.atomize(self.lo.expressions.value(func.value, hint), hint)
        self.lo.run_time.refuse_nested(base, f"method .{method}()", node)
        fn = METHODS[method]
        args = node.args
        if method in VARARGS_METHODS and len(args) > 1:
            args = [gast.Tuple(elts=list(args), ctx=gast.Load())]
        keywords = node.keywords
        if method == "clip":  # x.clip(lo), x.clip(max=hi): the bounds ndarray.clip takes
            args, keywords = _clip_bounds(args, keywords)
        return self.primitive(fn, args, keywords, hint, node, leading=(base,))

    def rewritten_method(self, node, hint):
        """Array methods that are other primitives: ``x.astype(float)`` is
        ``np.asarray(x, dtype=float)`` (``copy=`` changes no value); a cast to
        integers or booleans is kept as written, without a derivative; a dtype
        known only at run time is decided then (see ``cast``), and so is a cast to
        complex numbers, as ``np.asarray(x, dtype=complex)`` is. ``x.item()`` is
        ``np.reshape(x, ())[()]`` (an error for more than one element, like
        ``item``) and ``x.item(k)`` is ``np.ravel(x)[k]``."""
        method, args = node.func.attr, node.args
        dtype_node = _astype_dtype(node) if method == "astype" else None
        if dtype_node is not None:
            dtype = self.lo.expressions.static_value(dtype_node) \
                if not isinstance(dtype_node, gast.Constant) else dtype_node.value
            try:
                kind = np.dtype(dtype).kind
            except TypeError:
                kind = None  # a dtype known at run time: rt.cast_result decides
            if kind is not None and kind in "biu":  # mask.astype(bool), (x > 0).astype(int):
                return self.lo.expressions.nondiff(node)  # piecewise constant, like np.floor
            if kind is None or kind in "fc":
                return self.primitive(np.asarray, [node.func.value], [
                    gast.keyword(arg="dtype", value=dtype_node)], hint, node)
        if method == "item" and len(args) <= 1 and not node.keywords:
            base = self.lo.expressions.atomize(self.lo.expressions.value(node.func.value, hint),
                                               hint)
            if args:
                flat = ir.Prim(np.ravel, [base], {}, "call", ref="np.ravel")
                index = self.lo.expressions.index(args[0], hint)
            else:
                flat = ir.Prim(np.reshape, [base, ir.Const(())], {}, "call", ref="np.reshape")
                index = ir.Index(ast.Tuple(elts=[], ctx=ast.Load()), (), False)
            return ir.Prim(operator.getitem, [self.lo.expressions.atomize(flat, hint), index],
                           {}, "getitem")
        return None


def _printable(node):
    return not any(isinstance(n, Lowered) for n in gast.walk(node))


