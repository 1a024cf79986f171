"""Lower: a user function desugar left (a dict or object default, ...) inlined at
its call site.  The helper's body is lowered in a scope of its own (its locals
renamed, its parameters bound to the caller's operands, functions and objects
passed to it kept as compile-time values), its lines quoted in the comments of the
inlined block; what it wrote into its parameters is written back to the caller's
variables.  Recursion is refused: it would inline forever.
"""

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.memory_sharing import returns_new
from tangent_ckpt.compiler.desugar.parameter_writes import ParameterWrites
from tangent_ckpt.compiler.lower.callables import is_compile_time
from tangent_ckpt.compiler.lower.container_values import DictValue
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, Lowered, Scope, TupleValue, always_exits,
    defs_bound_once, function_alias_candidates, local_names, to_source,
)
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError


class Inlining:
    """The lowering's part that inlines user functions (``lo.inlining``)."""

    def __init__(self, lowering):
        self.lo = lowering

    def inline(self, fnode, parent_scope, call, hint, parsed, procedure=False):
        """Inline a user function at this call site; returns its result operand.

        ``parent_scope``: the scope a nested ``def`` or ``lambda`` closes over
        (None for a module-level function, whose object is ``parsed.fn``).
        ``procedure``: the function's value is not used (``__init__``)."""
        label = fnode.name
        identity = fnode if parent_scope is not None else parsed.fn
        if any(identity is active for active in self.lo.inline_stack):
            raise self.lo.error(UnsupportedSyntaxError, f"recursive call to {label}()", call,
                                construct=f"recursion: {to_source(call)}" if _printable(call)
                                else "recursion", hint="write the recursion as a loop")
        scope = Scope(parsed, local_names(fnode), parent=parent_scope,
                      alias_candidates=function_alias_candidates(fnode),
                      defs_once=defs_bound_once(fnode))
        scope.aliases = set()
        given = self.bind_parameters(fnode, scope, call, parsed, parent_scope is None)
        self._refuse_unfollowed_writes(call, scope, label)
        if parsed.filename == self.lo.parsed.filename:  # comments quote the helper's lines too
            self.lo.inlined_lines.update(parsed.annotated_lines(fnode))
        result = self.lo.namer.fresh(f"{label}_result")
        self.lo.inline_stack.append(identity)
        line = self.lo.line  # the caller's statement goes on after the call
        try:
            out, value = self.lo.statements.function_body(
                fnode.body, scope, result, hint=hint,
                discarded=procedure or call in self.lo.discarded_calls)
        finally:
            self.lo.inline_stack.pop()
            self.lo.line = line
        procedure = procedure or call in self.lo.discarded_calls
        if not procedure and not always_exits(fnode.body):
            raise self.lo.error(TransformError, f"{label}() can end without returning a value",
                             fnode, parsed=parsed, construct="missing return",
                             hint="end every path with a return statement")
        self.lo.out.extend(out)
        self.write_back(fnode, call, scope, given, label)
        self.lo.run_time.carry_back(fnode, call, scope, given, label)  # p[f"W{i}"] = ...
        if isinstance(value, CompileTimeValue):
            return value
        if isinstance(value, TupleValue):  # a container: its element variables
            return value
        return ir.Name(result)

    def bind_parameters(self, fnode, scope, call, parsed, module_level):
        """The call's arguments as the inlined function's parameters: functions
        and objects are compile-time values, ``*args`` a tuple, ``**kwargs`` a
        dict; a parameter the body assigns gets a variable of its own.
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
        passed_to_writers = set()  # inner(p): p written by a helper it is passed to
        marks = self.lo.fenced.marks
        written_arguments = marks.written_arguments
        for n in gast.walk(fnode):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                assigned_in_body.add(n.id)
            elif isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                    isinstance(getattr(n, "ctx", None), gast.Store):
                assigned_in_body.add(n.value.id)
                subscripted_in_body.add(n.value.id)
            elif isinstance(n, gast.Call):  # inner(p): a helper writes into p, and the
                # write comes back here as an assignment to p (write_back), maybe in a loop
                assigned_in_body.update(written_arguments.get(n, {}).values())
                passed_to_writers.update(written_arguments.get(n, {}).values())
                # inner(p) writes into p and rebinds it
                passed_to_writers.update(marks.rebound_arguments.get(n, {}).values())
        # writes made before the name is surely bound anew (c = c * 2; c[0] = 1 in one
        # block writes the helper's own array): only those reach the caller's array
        reaches_caller = {name for name, _ in ParameterWrites(fnode, marks, set()).writes}
        self._refuse_one_array_for_two_parameters(
            label, given, subscripted_in_body | passed_to_writers |
            {n.target.id for n in gast.walk(fnode)
             if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}, call)
        closed_over = _read_by_nested_functions(fnode)
        evaluated = self._in_call_order(call, {p: given[p] for p in params if p in given},
                                        extra_args, extra_keywords)
        for p in params:
            if p in given:
                static, v, atom = evaluated.get(
                    id(given[p]), (self.lo.expressions.static_value(given[p]), None, None))
                if is_compile_time(static):  # fixed_point(f, x0), forward(self, x)
                    scope.functions[p] = static
                    continue
                if v is None:
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
            # a new array no caller's name holds: f(U.copy(), ...) writes into its own
            fresh = isinstance(v, ir.Prim) and not isinstance(given.get(p), gast.Name) and \
                returns_new(v.fn)
            if isinstance(v, (ir.Prim, ir.NonDiff)):
                v = atom if p in given and id(given[p]) in evaluated else \
                    self.lo.expressions.atomize(v, p)
            written_back = p in written_arguments.get(call, {}) or \
                p in marks.unobserved_arguments.get(call, {})  # the caller's, or unread
            computed = fresh or isinstance(given.get(p), (gast.BinOp, gast.UnaryOp))  # new
            if (p in subscripted_in_body or p in passed_to_writers) and p in reaches_caller and \
                    isinstance(v, ir.Name) and not written_back and not computed:
                scope.shared_arrays.add(p)
            # a parameter a nested def or lambda reads keeps this call's binding (the
            # closure may be called after the caller rebinds the name it was given)
            if p in assigned_in_body or p in closed_over:
                name = self.lo.namer.fresh(p)
                self.lo.emit(ir.Assign(name, ir.Copy(v), call.lineno))
                self.lo.run_time.note_binding(name, v)  # a list built at run time stays one
                scope.rename[p] = ir.Name(name)
            else:
                scope.rename[p] = v
                if isinstance(v, ir.Name):
                    scope.aliases.add(v.id)
        if args.vararg:  # def f(*args): the extra positional arguments, a tuple
            items = [evaluated[id(a)][2] if id(a) in evaluated else
                     self.lo.expressions.value(a, args.vararg.id) for a in extra_args]
            scope.tuples[args.vararg.id] = TupleValue([
                v if isinstance(v, TupleValue) else self.lo.expressions.atomize(v, args.vararg.id)
                for v in items])
        if args.kwarg:  # def f(**kwargs): the extra keywords, a dict
            items = [evaluated[id(v)][2] if id(v) in evaluated else
                     self.lo.expressions.value(v, k) for k, v in extra_keywords.items()]
            scope.tuples[args.kwarg.id] = DictValue(list(extra_keywords), [
                v if isinstance(v, TupleValue) else self.lo.expressions.atomize(v, k)
                for k, v in zip(extra_keywords, items)])
        return given

    def _in_call_order(self, call, given, extra_args, extra_keywords):
        """{id of an argument node: (its static value, its value, its operand)},
        each evaluated in the order the call writes them, where binding the
        parameters in their own order (``given``: {parameter: node}, then
        ``*args``, then ``**kwargs``) would evaluate them in another (``f(x,
        b=g(), a=h())``, a ``**kwargs`` item before a named keyword): Python's
        order.  Empty where the two orders are one."""
        written = list(call.args) + [k.value for k in call.keywords]
        bound = list(given.values()) + extra_args + list(extra_keywords.values())
        if [id(n) for n in bound] == [id(n) for n in written]:
            return {}
        hints = {id(n): p for p, n in given.items()}
        items = {id(n): k for k, n in extra_keywords.items()}
        items.update((id(n), "args") for n in extra_args)
        evaluated = {}
        for node in written:
            if id(node) not in hints and id(node) not in items:
                # a partial's keyword the call gives again (``P = partial(f, b=0.25)``;
                # ``P(x, b=...)``): the constant the partial holds, overridden, unread
                continue
            if id(node) in items:  # (as the tuple or dict of them takes it)
                v = self.lo.expressions.value(node, items[id(node)])
                atom = v if isinstance(v, TupleValue) else \
                    self.lo.expressions.atomize(v, items[id(node)])
                evaluated[id(node)] = (None, v, atom)
                continue
            static = self.lo.expressions.static_value(node)
            if is_compile_time(static):
                evaluated[id(node)] = (static, None, None)
                continue
            v = self.lo.expressions.value(node, hints[id(node)])
            atom = self.lo.expressions.atomize(v, hints[id(node)]) \
                if isinstance(v, (ir.Prim, ir.NonDiff)) else v
            evaluated[id(node)] = (static, v, atom)
        return evaluated

    def _refuse_one_array_for_two_parameters(self, label, given, written, call):
        """``f(U, U)`` where ``f`` writes into one of the two parameters: in NumPy the
        write changes the other too, which the inlined body (one variable per
        parameter) would not see."""
        by_name = {}
        for p, node in given.items():
            if isinstance(node, gast.Name):
                by_name.setdefault(node.id, []).append(p)
        for caller_name, ps in by_name.items():
            hit = [p for p in ps if p in written]
            if len(ps) > 1 and hit:
                others = [p for p in ps if p != hit[0]]
                raise self.lo.error(
                    UnsupportedSyntaxError,
                    f"{label}() is given '{caller_name}' as its parameters "
                    f"{', '.join(repr(p) for p in ps)} and writes into '{hit[0]}': in NumPy "
                    f"the write changes '{others[0]}' too (one array), which the compiler "
                    f"does not follow", call,
                    construct=f"one array passed as two parameters of {label}()",
                    hint=f"write {label}() with one parameter for the shared array")

    def write_back(self, fnode, call, scope, arguments, label):
        """A helper that wrote into its parameters wrote into its caller's arrays:
        views.py marked the call (``written_arguments``); ``H += ...`` changes the
        caller's ``H`` only when it is an array (``in_place_if_array``: tested)."""
        marks = self.lo.fenced.marks
        written = marks.written_arguments.get(call, {})
        tested = marks.in_place_if_array.get(call, set())
        unobserved = marks.unobserved_arguments.get(call, {})
        for p, caller_name in list(written.items()) + list(unobserved.items()):
            if p in scope.tuples:  # a container: its writes went to the caller's elements
                continue
            if caller_name in self.lo.current_scope.shared_arrays:
                # the caller passed on its own caller's array, whose change nobody follows
                raise self.lo.error(
                    UnsupportedSyntaxError,
                    f"{label}() writes into its parameter '{p}', which is '{caller_name}', "
                    f"an array the caller of this function also sees (the write would "
                    f"change the caller's array)", call,
                    construct=f"in-place write into the caller's '{caller_name}'",
                    hint="make each call that hands the array on a statement of its own "
                         "(r = f(...), not inside an expression), where the original "
                         "statement ran it: those writes are followed")
            if p in unobserved and p not in written:
                continue  # the caller never reads its array again: nothing to carry back
            final = scope.rename[p]
            if p not in tested:
                self.lo.emit(ir.Assign(self.lo.assignments.store_name(caller_name),
                                       ir.Copy(final), call.lineno))
                continue
            before = self.lo.expressions.load_name(caller_name, call)
            test = self.lo.namer.fresh(f"{caller_name}_is_array")
            ndarray = self.lo.expressions.bind(np.ndarray, "ndarray")
            self.lo.emit(ir.Assign(test, ir.NonDiff(
                sx.builtin_call("isinstance", sx.name(before.id), sx.name(ndarray.id)),
                (before.id,)), call.lineno))
            name = self.lo.assignments.store_name(caller_name)
            if name != before.id:
                self.lo.emit(ir.Assign(name, ir.Copy(before), call.lineno))
            self.lo.emit(ir.If(test, [ir.Assign(name, ir.Copy(final), call.lineno)], [],
                               call.lineno))
        # H += ... into a caller's array nobody follows (before H is surely bound anew)
        rebound = set()
        writes = ParameterWrites(fnode, marks, rebound).writes
        added = [name for name, kind in writes if kind == "aug-call"]
        params = {a.id for a in fnode.args.args + fnode.args.kwonlyargs + fnode.args.posonlyargs}
        # a write through a view the helper's view pass carried back to the parameter
        # (T = x.T; T[0, k] = v, then x = T.T): the caller's array changed, which only
        # a call the caller's view pass marked (a whole statement) carries back
        for param in dict.fromkeys(name for name, kind in writes if kind == "item-call"):
            if isinstance(arguments.get(param), gast.Name) and param in params and \
                    param not in written and param not in unobserved and \
                    param not in scope.tuples:
                caller_name = arguments[param].id
                raise self.lo.error(
                    UnsupportedSyntaxError,
                    f"{label}() writes into its parameter '{param}' (through a view of "
                    f"it), which changes the caller's '{caller_name}'; the compiler "
                    f"follows that only for a call that is a whole statement "
                    f"({label}(...) or r = {label}(...))", call,
                    construct=f"in-place write into the caller's '{caller_name}'",
                    hint=f"make the call a statement of its own where the original "
                         f"statement ran it (r = {label}(...)), and use r in the "
                         f"expression")
        for param in dict.fromkeys(added):
            if isinstance(arguments.get(param), gast.Name) and param in params and \
                    param not in written and param not in unobserved:
                caller_name = arguments[param].id
                if param in rebound:
                    raise self.lo.error(
                        UnsupportedSyntaxError,
                        f"{label}() adds into its parameter '{param}' in place, which "
                        f"changes the caller's '{caller_name}' when it is an array, and "
                        f"also rebinds '{param}' (then a new object): what the caller's "
                        f"array holds after the call is not followed", call,
                        construct=f"in-place write into the caller's '{caller_name}'",
                        hint=f"if the caller does not read '{caller_name}' after the "
                             f"call, pass a copy ({label}({caller_name}.copy(), ...)): the "
                             f"same numbers, and followed")
                raise self.lo.error(
                    UnsupportedSyntaxError,
                    f"{label}() adds into its parameter '{param}' in place, which "
                    f"changes the caller's '{caller_name}' when it is an array; the compiler "
                    f"follows that only for a call that is a whole statement "
                    f"({label}(...) or r = {label}(...)), on an array it can follow (not a "
                    f"view of an array it cannot prove is one)", call,
                    construct=f"in-place write into the caller's '{caller_name}'",
                    hint=f"make the call a statement of its own where the original "
                         f"statement ran it (r = {label}(...)), and use r in the "
                         f"expression")

    def _refuse_unfollowed_writes(self, call, scope, label):
        """A parameter the helper writes into in place and also rebinds
        (``x += v; x = x % L``): the caller's array holds what the helper wrote
        before the rebinding, which is not followed -- refused unless the
        caller never reads that array again (``unobserved_arguments``)."""
        unobserved = self.lo.fenced.marks.unobserved_arguments.get(call, {})
        rebound = self.lo.fenced.marks.rebound_arguments.get(call, {})
        for p, caller_name in rebound.items():
            if p in unobserved or p in scope.tuples:
                continue
            raise self.lo.error(
                UnsupportedSyntaxError,
                f"{label}() writes into its parameter '{p}' in place, which changes the "
                f"caller's '{caller_name}' when it is an array, and also rebinds '{p}' (or hands "
                f"it to a helper that does): what the caller's array holds after the call "
                f"is not followed, which the compiler needs only where the caller never "
                f"reads that array again -- here it may (after the call, in a later round "
                f"of a loop, or elsewhere in the call's statement)", call,
                construct=f"in-place write into the caller's '{caller_name}'",
                hint=f"give the new array a name of its own where '{p}' is rebound (in "
                     f"{label}(), or in the helper it hands '{p}' to): '{p}2 = ...', and "
                     f"'{p}2' wherever that new array is read -- the same program, whose "
                     f"write into the caller's array is followed")


def _read_by_nested_functions(fnode):
    """The names a ``def`` or ``lambda`` nested in ``fnode`` reads from it."""
    found = set()
    for n in gast.walk(fnode):
        if n is not fnode and isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef,
                                             gast.Lambda)):
            own = {m.id for m in gast.walk(n) if isinstance(m, gast.Name) and
                   isinstance(m.ctx, (gast.Store, gast.Del, gast.Param))}
            found |= {m.id for m in gast.walk(n) if isinstance(m, gast.Name) and
                      isinstance(m.ctx, gast.Load) and m.id not in own}
    return found


def _printable(node):
    return not any(isinstance(n, Lowered) for n in gast.walk(node))


def _spelled(call):
    return to_source(call) if _printable(call) else "call"
