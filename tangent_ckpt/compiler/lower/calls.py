"""Lower: calls -- NumPy primitives (with adjoint rules), array methods
(``x.sum(axis=0)`` is ``np.sum``), and the user's own functions, which are
inlined at the call site with their locals renamed."""

import ast
import builtins
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.aliasing import check_writes
from tangent_ckpt.compiler.lower.checkpoint_markers import lower_call
from tangent_ckpt.compiler.lower.scopes import (
    LocalFunction, Scope, TupleValue, always_exits, function_alias_candidates, local_names,
    to_source,
)
from tangent_ckpt.compiler.naming import numpy_path
from tangent_ckpt.compiler.parse import _UNRESOLVED, parse_function
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


class CallLowering:
    """Calls: primitives, methods, inlined user functions, checkpoint markers."""

    def __init__(self, lowering):
        self.lo = lowering

    def call(self, node, hint):
        if any(isinstance(a, gast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            raise self.lo.error(UnsupportedSyntaxError, "*args/**kwargs in a call", node,
                             construct="**kwargs" if any(k.arg is None for k in node.keywords)
                             else "*args", hint="pass arguments explicitly")
        func = node.func
        fn = self.lo.expressions.static_value(func)
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
            arg = self.lo.expressions.atomize(self.lo.expressions.value(node.args[0], hint), hint)
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
                check_writes(parsed)
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
        if method in IN_PLACE_METHODS:
            raise self.lo.error(UnsupportedSyntaxError,
                             f"in-place method .{method}() changes an array", node,
                             construct=f"in-place .{method}()",
                             hint=f"use the functional form, e.g. x = np.{method}(x)")
        if method in random_state.DRAWS:  # rng.standard_normal(n): a draw, no derivative
            base = self.lo.expressions.atomize(self.lo.expressions.value(func.value, hint), hint)
            return self.primitive(random_state.DRAWS[method], node.args, node.keywords, hint,
                                  node, leading=(base,))
        if method not in METHODS:
            raise self.lo.error(UnsupportedFunctionError, f"unsupported method .{method}()", node,
                             construct=f".{method}()",
                             hint="call the NumPy function form, or register an adjoint")
        base = self.lo.expressions.atomize(self.lo.expressions.value(func.value, hint), hint)
        fn = METHODS[method]
        args = node.args
        if method in VARARGS_METHODS and len(args) > 1:
            args = [gast.Tuple(elts=list(args), ctx=gast.Load())]
        return self.primitive(fn, args, node.keywords, hint, node, leading=(base,))

    def inline(self, fnode, parent_scope, call, hint, parsed):
        """Inline a user function at this call site; returns its result operand."""
        label = fnode.name
        if label in self.lo.inline_stack:
            raise self.lo.error(UnsupportedSyntaxError, f"recursive call to {label}()", call,
                             construct="recursion", hint="write the recursion as a loop")
        args = fnode.args
        if args.vararg or args.kwarg:
            raise self.lo.error(UnsupportedSyntaxError, f"{label}() takes *args/**kwargs", call,
                             hint="give it named parameters")
        params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
        defaults = {}
        fn_obj = parsed.fn if parent_scope is None else None
        if fn_obj is not None:
            if fn_obj.__defaults__:
                positional = [a.id for a in args.posonlyargs + args.args]
                defaults.update(zip(positional[-len(fn_obj.__defaults__):], fn_obj.__defaults__))
            defaults.update(fn_obj.__kwdefaults__ or {})
        else:
            positional = [a.id for a in args.posonlyargs + args.args]
            for name, d in zip(positional[len(positional) - len(args.defaults):], args.defaults):
                defaults[name] = ("node", d)
        values = {}
        for p, a in zip(params, call.args):
            values[p] = self.lo.expressions.value(a, p)
        for k in call.keywords:
            if k.arg not in params:
                raise self.lo.error(TransformError, f"{label}() got an unexpected keyword "
                                 f"'{k.arg}'", call)
            values[k.arg] = self.lo.expressions.value(k.value, k.arg)
        if len(call.args) > len(params):
            raise self.lo.error(TransformError, f"{label}() takes {len(params)} arguments", call)
        scope = Scope(parsed, local_names(fnode), parent=parent_scope,
                      alias_candidates=function_alias_candidates(fnode))
        scope.aliases = set()
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
            if p in values:
                v = values[p]
            elif p in defaults:
                d = defaults[p]
                v = self.lo.expressions.value(d[1], p) if isinstance(d, tuple) and d and d[0] == "node" \
                    else self.lo.expressions.constant(d, p)
            else:
                raise self.lo.error(TransformError, f"{label}() missing argument '{p}'", call)
            if isinstance(v, TupleValue):
                scope.tuples[p] = v
                continue
            if isinstance(v, (ir.Prim, ir.NonDiff)):
                v = self.lo.expressions.atomize(v, p)
            if p in subscripted_in_body and isinstance(v, ir.Name):
                scope.shared_arrays.add(p)
            if p in assigned_in_body:
                name = self.lo.namer.fresh(p)
                self.lo.emit(ir.Assign(name, ir.Copy(v), call.lineno))
                scope.rename[p] = ir.Name(name)
            else:
                scope.rename[p] = v
                if isinstance(v, ir.Name):
                    scope.aliases.add(v.id)
        if parsed.filename == self.lo.parsed.filename:  # comments quote the helper's lines too
            self.lo.inlined_lines.update(parsed.source_lines)
        result = self.lo.namer.fresh(f"{label}_result")
        self.lo.inline_stack.append(label)
        try:
            out, value = self.lo.statements.function_body(fnode.body, scope, result, hint=hint)
        finally:
            self.lo.inline_stack.pop()
        if not always_exits(fnode.body):
            raise self.lo.error(TransformError, f"{label}() can end without returning a value",
                             fnode, parsed=parsed, construct="missing return",
                             hint="end every path with a return statement")
        self.lo.out.extend(out)
        if isinstance(value, TupleValue):  # a container: its element variables
            return value
        return ir.Name(result)
