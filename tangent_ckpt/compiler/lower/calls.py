"""Lower: calls -- NumPy primitives (with adjoint rules), array methods
(``x.sum(axis=0)`` is ``np.sum``), and the user's own functions, which are
inlined at the call site with their locals renamed."""

import ast
import builtins
import operator
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.aliasing import check_writes
from tangent_ckpt.compiler.lower.callables import CallableValues, is_compile_time
from tangent_ckpt.compiler.lower.checkpoint_markers import lower_call
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, KeywordsValue, LocalFunction, Lowered, Scope, TupleValue, always_exits,
    function_alias_candidates, local_names, to_source,
)
from tangent_ckpt.compiler.naming import numpy_path
from tangent_ckpt.compiler.parse import _UNRESOLVED, parse_function
from tangent_ckpt.compiler.views import follow_views
from tangent_ckpt.errors import (
    SourceUnavailableError, TransformError, UnsupportedFunctionError, UnsupportedSyntaxError,
)
from tangent_ckpt.runtime import random_state
from tangent_ckpt.runtime.array_adjoints import column_join, row_join

# array methods and the NumPy function each one means (declared with the rules)
METHODS = registry.methods()
VARARGS_METHODS = registry.varargs_methods()  # x.reshape(2, 3) == np.reshape(x, (2, 3))
IN_PLACE_METHODS = {"sort", "fill", "resize", "put", "itemset", "partition",
                    "setfield", "byteswap", "setflags", "__iadd__"}

# calls kept as written, without a derivative; other types (np.float64, ...) go
# through the registry like any function, so an active argument without a rule
# is an error rather than a silently dropped gradient
NONDIFF_CALLS = (range, int, bool, isinstance, str, type)

# array attributes that are functions of the array: x.real is np.real(x)
ATTRIBUTE_FUNCTIONS = {"real": np.real, "imag": np.imag}

# np.r_[...] and np.c_[...] and the runtime functions they mean
INDEX_JOINS = {id(np.r_): row_join, id(np.c_): column_join}


_NOT_LITERAL = object()


def _literal(node):
    """The value of a literal made of constants (``([0, 2], [2, 0])``), else _NOT_LITERAL."""
    try:
        return ast.literal_eval(gast.gast_to_ast(node))
    except (ValueError, SyntaxError, TypeError):
        return _NOT_LITERAL


def is_library(fn):
    module = getattr(fn, "__module__", "") or ""
    return module.split(".")[0] in ("numpy", "scipy", "tangent_ckpt")


class CallLowering(CallableValues):
    """Calls: primitives, methods, inlined user functions, checkpoint markers;
    functions as values, objects of user classes and generators
    (:class:`~tangent_ckpt.compiler.lower.callables.CallableValues`)."""

    def __init__(self, lowering):
        self.lo = lowering

    def call(self, node, hint):
        if any(isinstance(a, gast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            node = self.spread(node, hint)  # g(*args), g(**opts), rng.randn(*x.shape)
        func = node.func
        fn = self.lo.expressions.static_value(func)
        if isinstance(fn, CompileTimeValue) and not isinstance(fn, LocalFunction):
            return self.call_value(fn, node, hint)  # a partial, a method, an object
        special = self.special_call(fn, node, hint)  # map, partial, a class, a bound method
        if special is not None:
            return special
        if fn is _UNRESOLVED and isinstance(func, gast.Attribute):
            return self.method_call(node, hint)
        if fn is _UNRESOLVED:
            raise self.lo.error(UnsupportedFunctionError, f"cannot resolve the function "
                             f"{to_source(func)}", node, construct=to_source(func),
                             hint="call a function defined at module level or in this function")
        if isinstance(fn, LocalFunction):
            return self.inline(fn.node, fn.scope, node, hint, fn.scope.parsed)
        lowered = lower_call(self.lo, fn, node, hint)  # tc.checkpoint, tc.checkpointed_loop
        if lowered is not None:
            return lowered
        if fn in (len,):
            arg = self.lo.expressions.value(node.args[0], hint)
            if isinstance(arg, TupleValue):  # len(args) of a *args tuple
                return ir.Const(len(arg.items))
            arg = self.lo.expressions.atomize(arg, hint)
            return ir.NonDiff(sx.builtin_call("len", ir.operand_node(arg)), ir.operand_names(arg))
        if fn in NONDIFF_CALLS:
            return self.lo.expressions.nondiff(node)
        rule = registry.lookup(fn)
        if rule is None and isinstance(fn, types.FunctionType) and not is_library(fn):
            try:
                parsed = parse_function(fn)
            except SourceUnavailableError:
                parsed = None
            if parsed is not None:
                check_writes(parsed, followed=follow_views(parsed, helper=True))
                return self.inline(parsed.node, None, node, hint, parsed)
        return self.primitive(fn, node.args, node.keywords, hint, node)

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
                             hint="assign the result instead: y = f(...)")

    def primitive(self, fn, arg_nodes, keywords, hint, node, leading=()):
        self.reject_out_argument(node, fn)
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
        ref = numpy_path(fn)
        if ref is None:
            if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
                ref = fn.__name__
            else:
                ref = self.lo.expressions.bind(fn, getattr(fn, "__name__", "fn")).id
        return ir.Prim(fn, args, kwargs, "call", ref=ref)

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
        keywords = self.lo.expressions.static_value(func.value)
        if isinstance(keywords, KeywordsValue):  # kwargs.get("scale", 1.0)
            return self.keyword_method(keywords, node, hint)
        if method in IN_PLACE_METHODS:
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
        if method not in METHODS:
            raise self.lo.error(UnsupportedFunctionError, f"unsupported method .{method}()", node,
                             construct=f"{to_source(func)}()" if _printable(func)
                             else f".{method}()",
                             hint="for an array, call the NumPy function form or register an "
                                  "adjoint; for an object passed in, call the method on an "
                                  "object made inside the function or at module level")
        base = self.lo.expressions.atomize(self.lo.expressions.value(func.value, hint), hint)
        fn = METHODS[method]
        args = node.args
        if method in VARARGS_METHODS and len(args) > 1:
            args = [gast.Tuple(elts=list(args), ctx=gast.Load())]
        return self.primitive(fn, args, node.keywords, hint, node, leading=(base,))

    def rewritten_method(self, node, hint):
        """Array methods that are other primitives: ``x.astype(float)`` is
        ``np.asarray(x, dtype=float)`` (to a floating type only: a cast to
        integers or complex numbers stays refused); ``x.item()`` is
        ``np.reshape(x, ())[()]`` (an error for more than one element, like
        ``item``) and ``x.item(k)`` is ``np.ravel(x)[k]``."""
        method, args = node.func.attr, node.args
        if method == "astype" and len(args) == 1 and not node.keywords:
            dtype = self.lo.expressions.static_value(args[0]) \
                if not isinstance(args[0], gast.Constant) else args[0].value
            try:
                floating = np.dtype(dtype).kind == "f"
            except TypeError:
                floating = False
            if floating:
                return self.primitive(np.asarray, [node.func.value], [
                    gast.keyword(arg="dtype", value=args[0])], hint, node)
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

    def write_back(self, fnode, call, scope, arguments, label):
        """A helper that wrote into its parameters wrote into its caller's arrays:
        views.py marked the call (``written_arguments``); ``H += ...`` changes the
        caller's ``H`` only when it is an array (``in_place_if_array``: tested)."""
        written = getattr(call, "written_arguments", {})
        tested = getattr(call, "in_place_if_array", set())
        for p, caller_name in written.items():
            final = scope.rename[p]
            if p not in tested:
                self.lo.emit(ir.Assign(self.lo.statements.store_name(caller_name),
                                       ir.Copy(final), call.lineno))
                continue
            before = self.lo.expressions.load_name(caller_name, call)
            test = self.lo.namer.fresh(f"{caller_name}_is_array")
            ndarray = self.lo.expressions.bind(np.ndarray, "ndarray")
            self.lo.emit(ir.Assign(test, ir.NonDiff(
                sx.builtin_call("isinstance", sx.name(before.id), sx.name(ndarray.id)),
                (before.id,)), call.lineno))
            name = self.lo.statements.store_name(caller_name)
            if name != before.id:
                self.lo.emit(ir.Assign(name, ir.Copy(before), call.lineno))
            self.lo.emit(ir.If(test, [ir.Assign(name, ir.Copy(final), call.lineno)], [],
                               call.lineno))
        for n in gast.walk(fnode):  # H += ... into a caller's array nobody follows
            if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and \
                    isinstance(arguments.get(n.target.id), gast.Name) and \
                    n.target.id not in written and \
                    n.target.id in {a.id for a in fnode.args.args + fnode.args.kwonlyargs
                                    + fnode.args.posonlyargs}:
                caller_name = arguments[n.target.id].id
                raise self.lo.error(
                    UnsupportedSyntaxError,
                    f"{label}() adds into its parameter '{n.target.id}' in place, which "
                    f"changes the caller's '{caller_name}' when it is an array; the compiler "
                    f"follows that only for a call that is a whole statement, on a local "
                    f"it can follow (not an argument of the differentiated function, not a "
                    f"view of an array it cannot prove is one)", call,
                    construct=f"in-place write into the caller's '{caller_name}'",
                    hint=f"return the new value instead: {caller_name} = {label}(...) with "
                         f"'{n.target.id} = {n.target.id} + ...' in {label}()")

    def inline(self, fnode, parent_scope, call, hint, parsed, yield_to=None, procedure=False):
        """Inline a user function at this call site; returns its result operand.

        ``parent_scope``: the scope a nested ``def`` or ``lambda`` closes over
        (None for a module-level function, whose object is ``parsed.fn``).
        ``yield_to``: a generator's body, lowered with each ``yield`` handed to
        it; ``procedure``: the function's value is not used (``__init__``)."""
        label = fnode.name
        identity = fnode if parent_scope is not None else parsed.fn
        if any(identity is active for active in self.lo.inline_stack):
            raise self.lo.error(UnsupportedSyntaxError, f"recursive call to {label}()", call,
                                construct=f"recursion: {to_source(call)}" if _printable(call)
                                else "recursion", hint="write the recursion as a loop")
        scope = Scope(parsed, local_names(fnode), parent=parent_scope,
                      alias_candidates=function_alias_candidates(fnode))
        scope.aliases = set()
        given = self.bind_parameters(fnode, scope, call, parsed, parent_scope is None)
        if parsed.filename == self.lo.parsed.filename:  # comments quote the helper's lines too
            self.lo.inlined_lines.update(_annotated_lines(parsed, fnode))
        result = self.lo.namer.fresh(f"{label}_result")
        self.lo.inline_stack.append(identity)
        line = self.lo.line  # the caller's statement goes on after the call
        try:
            out, value = self.lo.statements.function_body(fnode.body, scope, result, hint=hint,
                                                          yield_to=yield_to)
        finally:
            self.lo.inline_stack.pop()
            self.lo.line = line
        if not procedure and yield_to is None and not always_exits(fnode.body):
            raise self.lo.error(TransformError, f"{label}() can end without returning a value",
                             fnode, parsed=parsed, construct="missing return",
                             hint="end every path with a return statement")
        self.lo.out.extend(out)
        self.write_back(fnode, call, scope, given, label)
        if isinstance(value, CompileTimeValue):
            return value
        if isinstance(value, TupleValue):  # a container: its element variables
            return value
        return ir.Name(result)

    def bind_parameters(self, fnode, scope, call, parsed, module_level):
        """The call's arguments as the inlined function's parameters: functions
        and objects are compile-time values, ``*args`` a tuple, ``**kwargs`` a
        KeywordsValue; a parameter the body assigns gets a variable of its own.
        Returns the parameters' argument nodes."""
        label = fnode.name
        args = fnode.args
        positional = [a.id for a in args.posonlyargs + args.args]
        params = positional + [a.id for a in args.kwonlyargs]
        defaults = {}
        fn_obj = parsed.fn if module_level else None
        if fn_obj is not None:
            if fn_obj.__defaults__:
                defaults.update(zip(positional[-len(fn_obj.__defaults__):], fn_obj.__defaults__))
            defaults.update(fn_obj.__kwdefaults__ or {})
        else:
            for name, d in zip(positional[len(positional) - len(args.defaults):], args.defaults):
                defaults[name] = ("node", d)
            for a, d in zip(args.kwonlyargs, args.kw_defaults):
                if d is not None:
                    defaults[a.id] = ("node", d)
        given = dict(zip(positional, call.args))
        extra_args = list(call.args[len(positional):])
        if extra_args and not args.vararg:
            raise self.lo.error(TransformError, f"{label}() takes {len(positional)} positional "
                                "arguments", call, construct=_spelled(call))
        extra_keywords = {}
        for k in call.keywords:
            if k.arg in params:
                given[k.arg] = k.value
            elif args.kwarg:
                extra_keywords[k.arg] = k.value
            else:
                raise self.lo.error(TransformError, f"{label}() got an unexpected keyword "
                                    f"'{k.arg}'", call, construct=_spelled(call))
        assigned_in_body = set()
        subscripted_in_body = set()
        for n in gast.walk(fnode):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                assigned_in_body.add(n.id)
            elif isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                    isinstance(getattr(n, "ctx", None), gast.Store):
                assigned_in_body.add(n.value.id)
                subscripted_in_body.add(n.value.id)
        for p in params:
            if p in given:
                static = self.lo.expressions.static_value(given[p])
                if is_compile_time(static):  # fixed_point(f, x0), forward(self, x)
                    scope.functions[p] = static
                    continue
                v = self.lo.expressions.value(given[p], p)
            elif p in defaults:
                d = defaults[p]
                if isinstance(d, tuple) and d and d[0] == "node":
                    static = self.lo.expressions.static_value(d[1])
                    if is_compile_time(static):  # def net(x, act=np.tanh)
                        scope.functions[p] = static
                        continue
                    v = self.lo.expressions.value(d[1], p)
                elif is_compile_time(d):
                    scope.functions[p] = d
                    continue
                else:
                    v = self.lo.expressions.constant(d, p)
            else:
                raise self.lo.error(TransformError, f"{label}() missing argument '{p}'", call,
                                    construct=_spelled(call))
            if isinstance(v, CompileTimeValue):
                scope.functions[p] = v
                continue
            if isinstance(v, TupleValue):
                scope.tuples[p] = v
                continue
            if isinstance(v, (ir.Prim, ir.NonDiff)):
                v = self.lo.expressions.atomize(v, p)
            written_back = p in getattr(call, "written_arguments", {})
            computed = isinstance(given.get(p), (gast.BinOp, gast.UnaryOp))  # a new array
            if p in subscripted_in_body and isinstance(v, ir.Name) and not written_back \
                    and not computed:
                scope.shared_arrays.add(p)
            if p in assigned_in_body:
                name = self.lo.namer.fresh(p)
                self.lo.emit(ir.Assign(name, ir.Copy(v), call.lineno))
                scope.rename[p] = ir.Name(name)
            else:
                scope.rename[p] = v
                if isinstance(v, ir.Name):
                    scope.aliases.add(v.id)
        if args.vararg:  # def f(*args): the extra positional arguments, a tuple
            items = [self.lo.expressions.value(a, args.vararg.id) for a in extra_args]
            scope.tuples[args.vararg.id] = TupleValue([
                v if isinstance(v, TupleValue) else self.lo.expressions.atomize(v, args.vararg.id)
                for v in items])
        if args.kwarg:  # def f(**kwargs): the extra keywords
            scope.functions[args.kwarg.id] = KeywordsValue({
                k: self.lo.expressions.atomize(self.lo.expressions.value(v, k), k)
                for k, v in extra_keywords.items()})
        return given


def _printable(node):
    return not any(isinstance(n, Lowered) for n in gast.walk(node))


def _spelled(call):
    return to_source(call) if _printable(call) else "call"


def _annotated_lines(parsed, fnode):
    """The helper's source lines for the comments of the inlined block, each
    naming the function (or method) it belongs to and the line of its ``def``:
    ``return np.tanh(self.W @ x)  (in Model.forward, line 12)``."""
    qualname = getattr(parsed.fn, "__qualname__", fnode.name) \
        if parsed.node is fnode else fnode.name
    if fnode.name == "lambda_fn":
        qualname = "lambda"
    last = getattr(fnode, "end_lineno", None) or max(parsed.source_lines, default=fnode.lineno)
    return {line: f"{text.strip()}  (in {qualname}, line {fnode.lineno})"
            for line, text in parsed.source_lines.items()
            if fnode.lineno < line <= last and text.strip()}
