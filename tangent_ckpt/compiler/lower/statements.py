"""Lower: statements -- the blocks of a function, each statement handed to the
part that lowers it (assignments to :mod:`.assignments`, loops to
:mod:`.loop_statements`), ``if``, ``return``, expression statements.  Augmented
assignment is an assignment of a ``BinOp``; early ``return``, ``break`` and
``continue`` become branches and flags."""

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.container_values import (
    DictValue, container_node, leaf_paths, leaves, rebuild, structure,
)
from tangent_ckpt.compiler.lower.effect_calls import as_subscript_write
from tangent_ckpt.compiler.lower.guards import emit_checks_before, emit_guards
from tangent_ckpt.compiler.desugar.segment_markers import (
    checkpointed_scope, checkpointed_segment, checkpointed_steps,
)
from tangent_ckpt.compiler.desugar.pure_values import is_boolean, only_computes
from tangent_ckpt.compiler.lower.observers import (
    observe_assert, observe_call, observe_raise,
)
from tangent_ckpt.compiler.lower.outside_objects import outside_method
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, LocalFunction, MethodValue, ObjectValue, Scope, TupleValue, all_names,
    always_exits, defs_bound_once, function_alias_candidates, load_context, local_names,
    may_exit, to_source,
)
from tangent_ckpt.compiler.memory_sharing import ARRAY_WRITING_METHODS
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError
from tangent_ckpt.options import CheckpointOptions


class StatementLowering:
    """The statements of a function (and of the helpers inlined into it)."""

    def __init__(self, lowering):
        self.lo = lowering
        # what the function's return statements give back (ir.Function's fields)
        self.outputs = None  # a returned tuple or list: the expression rebuilding it
        self.aux = None  # has_aux: the expression rebuilding the auxiliary value

    def run(self, guards=()):
        """The function, in A-normal form; ``guards``: the aliasing fence's
        run-time guards, checked first (lower/guards.py)."""
        fnode = self.lo.parsed.node
        self.lo.namer.reserve(all_names(fnode))
        self.lo.namer.reserve({"np", "rt"})
        args = fnode.args
        if args.vararg or args.kwarg:
            raise self.lo.error(UnsupportedSyntaxError, "*args/**kwargs parameters", fnode,
                             hint="give the function named parameters")
        params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
        defaults = {}
        if self.lo.parsed.fn.__defaults__:
            positional = [a.id for a in args.posonlyargs + args.args]
            for name, value in zip(positional[-len(self.lo.parsed.fn.__defaults__):],
                                   self.lo.parsed.fn.__defaults__):
                defaults[name] = value
        if self.lo.parsed.fn.__kwdefaults__:
            defaults.update(self.lo.parsed.fn.__kwdefaults__)
        scope = Scope(self.lo.parsed, local_names(fnode), identity=True,
                      alias_candidates=function_alias_candidates(fnode),
                      defs_once=defs_bound_once(fnode))
        for p in params:
            scope.rename[p] = ir.Name(p)
        params = self.lo.container_statements.parameters(params, scope)
        result = fnode.name if fnode.name not in scope.locals else self.lo.namer.fresh("result")
        self.lo.namer.reserve({result})
        self.lo.inline_stack.append(self.lo.parsed.fn)  # f calling f is recursion
        body = self.function_body(fnode.body, scope, result, top=True, guards=guards)
        return ir.Function(name=fnode.name, params=params, defaults=defaults, body=body,
                           result=result, line=fnode.lineno, filename=self.lo.parsed.filename,
                           line_texts={**self.lo.inlined_lines, **self.lo.parsed.source_lines},
                           outputs=self.outputs, aux=self.aux)

    def function_body(self, stmts, scope, result, top=False, hint=None, guards=(),
                      discarded=False):
        saved = (self.lo.out, self.lo.current_scope, self.lo.ctx)
        self.lo.current_scope = scope
        # temporaries of a return expression are named after `hint`: the caller's
        # variable for an inlined helper (k1 = rhs(x) gives k1_roll, not rhs_result_roll)
        self.lo.ctx = {"result": result, "loop": None, "result_items": None,
                    "hint": hint or result, "top": top,
                    "discarded": discarded}
        out = []
        self.lo.out = out
        scope.top_block = out
        if top:
            self.lo.root_block = out  # outside_objects.py binds attributes' variables here
        emit_guards(self.lo, guards, self.lo.parsed.node)
        self.block(stmts)
        if top and not always_exits(stmts):
            raise self.lo.error(TransformError, "the function can end without returning a value",
                             self.lo.parsed.node, construct="missing return",
                             hint="end every path with a return statement")
        value = self.lo.ctx.get("result_value") or self.lo.ctx.get("result_items")
        self.lo.out, self.lo.current_scope, self.lo.ctx = saved
        return out if top else (out, value)

    def block(self, stmts):
        """Normalize a statement list into self.lo.out; stops after an exit."""
        for i, stmt in enumerate(stmts):
            self.lo.line = getattr(stmt, "lineno", self.lo.line)
            emit_checks_before(self.lo, stmt)
            if isinstance(stmt, gast.Return):
                self.return_(stmt)
                return
            if isinstance(stmt, gast.Break):
                loop = self.lo.ctx["loop"]
                if loop is None:
                    raise self.lo.error(UnsupportedSyntaxError, "break outside a loop", stmt)
                if loop["break_flag"] is None:
                    loop["break_flag"] = self.lo.namer.fresh("stop")
                self.lo.emit(ir.Assign(loop["break_flag"], ir.Copy(ir.Const(True)), stmt.lineno))
                return
            if isinstance(stmt, gast.Continue):
                if self.lo.ctx["loop"] is None and not self.lo.ctx.get("unrolled"):
                    raise self.lo.error(UnsupportedSyntaxError, "continue outside a loop", stmt)
                return
            if isinstance(stmt, gast.If) and may_exit(stmt):
                rest = list(stmts[i + 1:])
                self.if_(stmt, extra=rest)
                return
            self.statement(stmt)

    def sub_block(self, stmts):
        saved = self.lo.out
        self.lo.out = []
        self.block(stmts)
        result, self.lo.out = self.lo.out, saved
        return result

    def statement(self, s):
        if isinstance(s, gast.Assign):
            # (a = b = e is one assignment per target by now: desugar/evaluate_once.py)
            assert len(s.targets) == 1, "desugar leaves one target per assignment"
            if _writes_its_out(s):  # y = np.clip(y, lo, hi, out=y)
                self.expression_statement(gast.copy_location(gast.Expr(value=s.value), s))
                return
            self.lo.assignments.assign(s.targets[0], s.value, s)
        elif isinstance(s, gast.AnnAssign):
            if s.value is not None:
                self.lo.assignments.assign(s.target, s.value, s)
        elif isinstance(s, gast.AugAssign):
            self.lo.objects.outside.check_in_place(s.target, s)  # CELL.h += v
            self.lo.assignments.augmented(s)
        elif isinstance(s, gast.If):
            self.if_(s)
        elif isinstance(s, gast.For):
            self.lo.loops.for_(s)
        elif isinstance(s, gast.While):
            self.lo.loops.while_(s)
        elif isinstance(s, gast.FunctionDef):
            if s.name not in self.lo.current_scope.defs_once:
                raise self.lo.error(UnsupportedSyntaxError,
                                    f"`def {s.name}`: '{s.name}' is bound more than once "
                                    "(two def statements, or a def and an assignment)", s,
                                    construct=f"def {s.name}",
                                    hint="give each function a name of its own")
            self.lo.current_scope.functions[s.name] = LocalFunction(s, self.lo.current_scope)
        elif isinstance(s, gast.Pass):
            pass
        elif isinstance(s, gast.Expr):
            self.expression_statement(s)
        elif isinstance(s, gast.Assert):
            observe_assert(self.lo, s)  # run in the forward sweep
        elif isinstance(s, gast.Raise):
            observe_raise(self.lo, s)  # on the path that raises (desugar/raising_branches.py)
        elif isinstance(s, gast.With):  # desugar's checkpoint markers
            self.with_(s)
        else:
            self.unsupported_statement(s)

    def with_(self, s):
        """The markers ``desugar/checkpoint_calls.py`` writes: a segment of
        ``tc.checkpoint``'s call or of ``tc.checkpoint_scope``'s block (an
        ``ir.Segment``), the checkpointed loop of ``tc.checkpointed_loop``.  No
        other ``with``."""
        ctx = s.items[0].context_expr if len(s.items) == 1 else None
        marker = self.lo.expressions.static_value(ctx.func) if isinstance(ctx, gast.Call) \
            else None
        if marker in (checkpointed_segment, checkpointed_scope):
            # (name, label, min_bytes or enabled): constants but the last
            hint = "min_bytes" if marker is checkpointed_segment else "enabled"
            option = self.lo.expressions.atomize(self.lo.expressions.value(ctx.args[2], hint),
                                                 hint)
            option = None if isinstance(option, ir.Const) and option.value is None else option
            segment = ir.Segment("checkpoint" if marker is checkpointed_segment else "scope",
                                 ctx.args[0].value, self.sub_block(s.body), s.lineno,
                                 label=ctx.args[1].value)
            if marker is checkpointed_segment:
                segment.min_bytes = option
            else:
                segment.enabled = option
            self.lo.emit(segment)
        elif marker is checkpointed_steps:  # (num_checkpoints, header), around one loop
            start = len(self.lo.out)
            self.block(s.body)
            loop = next((stmt for stmt in reversed(self.lo.out[start:])
                         if isinstance(stmt, ir.For)), None)
            if loop is None:
                raise self.lo.error(TransformError, "tc.checkpointed_loop(): its loop is no "
                                    "loop once lowered", s, construct="checkpointed_loop")
            loop.checkpoint, loop.header = True, ctx.args[1].value
            loop.options = CheckpointOptions(checkpoint=True, snapshots=ctx.args[0].value)
        else:
            self.unsupported_statement(s)

    def unsupported_statement(self, s):
        kinds = {
            gast.Try: ("try/except", "move error handling outside the differentiated function"),
            gast.With: ("with", "only `with tangent_ckpt.checkpoint_scope(...)` and a "
                                "`with np.errstate(...)` that only ignores or warns are "
                                "supported"),
            gast.Global: ("global", "pass values in as arguments and return them"),
            gast.Nonlocal: ("nonlocal", "pass values in as arguments and return them"),
            gast.Delete: ("del", "remove the del statement"),
            gast.ClassDef: ("class definition", "define classes outside the function"),
            gast.Import: ("import", "import at module level"),
            gast.ImportFrom: ("import", "import at module level"),
        }
        name, hint = kinds.get(type(s), (type(s).__name__, "rewrite it with supported statements"))
        raise self.lo.error(UnsupportedSyntaxError, f"unsupported statement: {name}", s,
                         hint=hint, construct=name)

    def object_method(self, func):
        """Whether ``func`` is a method of an object made in the function, or of a
        user's object made outside it (called as a statement, it is inlined: it may
        set the object's attributes)."""
        method = self.lo.expressions.static_value(func) if isinstance(func, gast.Attribute) \
            else None
        return isinstance(method, MethodValue) and isinstance(method.owner, ObjectValue) or \
            outside_method(method)

    def expression_statement(self, s):
        value = s.value
        if isinstance(value, gast.Constant):
            return  # docstring
        if isinstance(value, (gast.Yield, gast.YieldFrom, gast.Await)):
            raise self.lo.error(UnsupportedSyntaxError, "generators (yield) cannot be differentiated",
                             s, construct="yield", hint="return a value instead")
        write = as_subscript_write(self.lo, value, s) if isinstance(value, gast.Call) else None
        if write is not None:  # np.fill_diagonal(a, v), np.copyto(a, b), f(x, out=y)
            self.lo.assignments.assign(*write, s)
            return
        if isinstance(value, gast.Call):
            self.lo.calls.reject_out_argument(value)
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr in ("append", "extend") and \
                isinstance(value.func.value, gast.Name) and \
                (self.lo.containers.holds_container(value.func.value) or
                 self.lo.run_time.is_rows(self.lo.expressions.load_name(
                     value.func.value.id, value.func.value))):
            self.lo.container_statements.grow(value, s)
            return
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr in ("append", "extend") and \
                self.lo.container_statements.attribute_list(value.func.value) is not None:
            self.lo.container_statements.grow_attribute(value, s)  # self.hs.append(h)
            return
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
            outside = self.lo.expressions.static_value(value.func.value) \
                if isinstance(value.func.value, gast.Name) else None
            if isinstance(outside, (list, dict, set)):  # HISTORY.append(loss) of the module's
                kind = type(outside).__name__
                raise self.lo.error(
                    UnsupportedSyntaxError, f"{to_source(value)} changes the {kind} "
                    f"'{value.func.value.id}' of the module or an enclosing function, which "
                    "outlives this call", s, construct=f"write into an outside {kind}",
                    hint="collect the values in a local list and return np.array(values) "
                         "beside the output (tc.grad(f, has_aux=True) hands it back), or "
                         "print them")
            if value.func.attr in ("append", "extend") and \
                    isinstance(value.func.value, gast.Name):
                name = value.func.value.id
                raise self.lo.error(
                    UnsupportedSyntaxError, f"`{to_source(value)}`: .{value.func.attr}() grows "
                    f"'{name}', which the compiler does not hold as a list of known length "
                    "here (a list given as an argument that is not differentiated, or made "
                    "from one, is known only when the code runs; an array has no .append)", s,
                    construct=f"in-place .{value.func.attr}() of '{name}'",
                    hint="grow a list the function makes (ys = []; ys.append(v)), or "
                         "differentiate with respect to the list given (wrt=...) too, so "
                         "that its length is known")
            if value.func.attr in ("append", "extend"):
                # (no array has them: a list the function holds other than by a name)
                raise self.lo.error(
                    UnsupportedSyntaxError, f"`{to_source(value)}`: .{value.func.attr}() grows "
                    "a list that is not bound to a name of the function (an item of a dict "
                    "or list, or what a call returns, like d.setdefault(k, [])), which the "
                    "compiler does not follow", s,
                    construct=f"in-place .{value.func.attr}() of a list",
                    hint="grow a list bound to a name (xs = []; xs.append(v)) and store "
                         "it where it belongs (d[k] = xs)")
            if value.func.attr in ARRAY_WRITING_METHODS:
                raise self.lo.error(UnsupportedSyntaxError,
                                 f"in-place method .{value.func.attr}() changes an array",
                                 s, construct=f"in-place .{value.func.attr}()",
                                 hint=f"use the functional form, e.g. x = np.{value.func.attr}(x)"
                                 if value.func.attr == "sort" else "assign a new value instead")
        if isinstance(value, gast.Call):
            if value in self.lo.fenced.marks.writer_calls or self.object_method(value.func) or \
                    self.lo.callables.hands_object(value) or \
                    isinstance(self.lo.expressions.static_value(value.func), LocalFunction):
                # a helper writing its arguments, model.decay(0.9) writing model's attributes,
                # train(net, lr) rebinding net's, a nested def desugar left (no object to
                # call: its body is lowered, or refused where it cannot be)
                self.lo.discarded_calls[value] = True  # it may end without a return
                self.lo.expressions.value(value, "result")
                return
            observe_call(self.lo, s)  # print(...), logger.info(...), plt.plot(...)
            return
        raise self.lo.error(UnsupportedSyntaxError,
                         "an expression statement whose value is discarded", s,
                         construct="expression statement",
                         hint="assign the value to a variable")

    def return_(self, s):
        if self.lo.ctx["loop"] is not None:
            raise self.lo.error(UnsupportedSyntaxError, "return inside a loop", s,
                             construct="return in loop",
                             hint="assign the result, break, and return after the loop")
        if s.value is None:
            raise self.lo.error(TransformError, "return without a value", s,
                             construct="return", hint="return the value to differentiate")
        if self.lo.ctx.get("discarded") and only_computes(s.value, self.lo.expressions.static_value):
            return  # m.forward() as a statement returning a report string: nothing to do
        value = self.lo.expressions.value(s.value, self.lo.ctx["hint"])
        result = self.lo.ctx["result"]
        if isinstance(value, CompileTimeValue):  # a factory's `return loss`
            self.lo.callables.return_value(value, s)
            return
        if self.lo.ctx["top"]:
            value = self.differentiated_output(value, s)
        if isinstance(value, TupleValue):
            items = self.lo.ctx["result_items"]
            if items == "single" or (items is not None and
                                     structure(items) != structure(value)):
                raise self.lo.error(UnsupportedSyntaxError,
                                 "returns of different kinds (tuple and value)", s)
            if items is None:
                items = rebuild(value, (ir.Name(self.lo.namer.fresh(path))
                                        for path in leaf_paths(value, result)))
                self.lo.ctx["result_items"] = items
                if self.lo.ctx["top"]:
                    self.outputs = container_node(items)
            for name, item in zip(leaves(items), leaves(value)):
                self.lo.emit(ir.Assign(name.id, ir.Copy(item), s.lineno))
                self.lo.run_time.note_binding(name.id, item)  # a dict built at run time
            return
        if self.lo.ctx["result_items"] not in (None, "single"):
            raise self.lo.error(UnsupportedSyntaxError, "returns of different kinds (tuple and value)",
                             s)
        self.lo.ctx["result_items"] = "single"
        self.lo.assignments.emit_value(result, value, s.lineno)

    def differentiated_output(self, value, s):
        """The value a top-level ``return`` gives to differentiate: with
        ``has_aux`` the first item of the returned pair (the second, the aux value,
        is kept in variables of its own and returned as computed).  A tuple or
        list of outputs is refused where one output is differentiated (reverse
        mode), and so is a string or ``None``."""
        if self.lo.has_aux:
            value = self.aux_pair(value, s)
        if self.lo.run_time.is_rows(value) or self.lo.run_time.is_dict(value):
            kind = "list" if self.lo.run_time.is_rows(value) else "dict"
            raise self.lo.error(
                TransformError, f"the function returns a {kind} built at run time where a "
                "gradient needs one float or array output", s, construct=f"{kind} output",
                hint="return the value to differentiate, and the dict as the aux of "
                     "`return output, aux` with has_aux=True"
                     if kind == "dict" else "return np.stack(...) of it, an array")
        if isinstance(value, TupleValue) and self.lo.one_output:
            kind = "dict" if isinstance(value, DictValue) else \
                "list" if value.is_list else "tuple"
            raise self.lo.error(
                TransformError, f"the function returns a {kind} of {len(value.items)} items "
                "where a gradient needs one float or array output", s,
                construct=f"{kind} output",
                hint="return only the value to differentiate, or return (output, aux) and "
                     "pass has_aux=True: the gradient function then returns the aux value "
                     "as computed, next to the gradient")
        for leaf in leaves(value):
            if isinstance(leaf, ObjectValue):  # return y, keep with keep = [opt]
                raise self.lo.object_as_value(leaf, s.lineno)
            if isinstance(leaf, ir.Const) and not _is_number(leaf.value):
                raise self.lo.error(
                    TransformError, f"the function returns {leaf.value!r} "
                    f"({type(leaf.value).__name__}) as the output to differentiate", s,
                    construct="non-numeric output",
                    hint="return a float or an array; a value returned only for information "
                         "goes in the aux of `return output, aux` with has_aux=True")
        return value

    def aux_pair(self, value, s):
        """``return output, aux`` with ``has_aux``: ``aux`` copied into variables
        of its own (every return of the function gives an aux of one structure);
        gives ``output``."""
        if not isinstance(value, TupleValue) or isinstance(value, DictValue) or \
                len(value.items) != 2:
            raise self.lo.error(
                TransformError, "with has_aux=True the function must return a pair "
                "(output, aux)", s, construct="has_aux return",
                hint="return output, aux: the value to differentiate first, then the "
                     "auxiliary value returned as computed")
        output, aux = value.items
        if any(self.lo.run_time.is_rows(leaf) for leaf in leaves(aux)):
            raise self.lo.error(
                TransformError, "the aux value holds a list built at run time", s,
                construct="aux value", hint="return np.stack(...) of it, an array")
        if any(isinstance(leaf, CompileTimeValue) for leaf in leaves(aux)):
            raise self.lo.error(
                TransformError, "the aux value holds a function or an object of a user class",
                s, construct="aux value",
                hint="return arrays, numbers, strings and lists, tuples or dicts of them")
        names = self.lo.ctx.get("aux_items")
        if names is None:
            names = rebuild(aux, (ir.Name(self.lo.namer.fresh(path))
                                  for path in leaf_paths(aux, "aux")))
            self.lo.ctx["aux_items"] = names
            self.aux = container_node(names)
        elif structure(names) != structure(aux):
            raise self.lo.error(UnsupportedSyntaxError,
                                "returns of aux values of different structures", s,
                                construct="aux value",
                                hint="return an aux of one structure (the same keys, "
                                     "items and nesting) from every return")
        for name, item in zip(leaves(names), leaves(aux)):
            self.lo.emit(ir.Assign(name.id, ir.Copy(item), s.lineno))
        return output

    def if_(self, s, extra=()):
        truth = self.lo.container_loops.static_truth(s.test)
        if truth is not None:  # a condition of constants: only the path that runs
            self.block(list(s.body if truth else s.orelse) + list(extra))
            return
        loop = self.lo.current_scope.parsed.comprehension_conditions.get(s)
        if loop is not None and any(u is loop for u in self.lo.container_loops.unrolling):
            raise self.lo.containers.refuse(
                f"a condition known only at run time in a comprehension over a list or "
                f"tuple ({to_source(s.test)})", s.test,
                "compute the values and choose with np.where, or write the loop")
        cond = self.condition(s.test, s.lineno)
        tuples = self.lo.current_scope.tuples
        before = dict(tuples)
        bound = set(self.lo.current_scope.rename)  # the names bound before the if
        body = self.sub_block(list(s.body) + list(extra))
        after_body = dict(tuples)
        body_names = dict(self.lo.current_scope.rename)  # what the body's path leaves
        # the else path starts from the containers there were before the if: a
        # container the body rebound, grew or removed is the old one there; one the
        # body made or changed lends its element variables to the else path's binding
        # of the same structure (assignments.bind_tuple: one variable per element
        # after the if, whichever path ran)
        made = {name: value for name, value in after_body.items()
                if before.get(name) is not value}
        tuples.clear()
        tuples.update(before)
        scope = self.lo.current_scope
        saved, scope.other_path_tuples = scope.other_path_tuples, {
            **scope.other_path_tuples, **made}
        try:
            orelse = self.sub_block(list(s.orelse) + list(extra))
        finally:
            scope.other_path_tuples = saved
        self.lo.container_statements.unpack_on_the_other_path(
            s, extra, (before, bound), (after_body, body, body_names), (dict(tuples), orelse))
        self.lo.container_statements.same_structures(s, before, after_body, tuples, extra)
        self.lo.emit(ir.If(cond, body, orelse, s.lineno))

    def condition(self, test, line):
        name = self.lo.namer.fresh("cond")
        value = self.lo.expressions.nondiff(self._truth_of_rows(test))
        if isinstance(test, gast.BoolOp) and not is_boolean(test):
            # ``flag or t >= 2`` is one of its operands; the test uses its truth only,
            # which ``bool(...)`` makes a value of its own (also for a program made
            # from this one, the tangent program tc.hvp differentiates)
            value = ir.NonDiff(sx.builtin_call("bool", value.node), value.names,
                               draws=value.draws)
        self.lo.emit(ir.Assign(name, value, line))
        return name


    def _truth_of_rows(self, test):
        """``test`` with a list built at run time (its rows, an array) tested for its
        truth (``if hs:``, ``not hs``, ``hs and ...``) as ``len(hs) > 0``: a
        list's truth is whether it has items, an array's is refused by NumPy."""
        def truth(node):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                    self.lo.run_time.is_rows(self.lo.expressions.load_name(node.id, node)):
                length = gast.Call(func=gast.Name(id="len", ctx=gast.Load(), annotation=None,
                                                  type_comment=None), args=[node], keywords=[])
                return gast.copy_location(gast.Compare(left=length, ops=[gast.Gt()],
                                                       comparators=[gast.Constant(0, None)]),
                                          node)
            if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
                return gast.copy_location(gast.UnaryOp(op=node.op, operand=truth(node.operand)),
                                          node)
            if isinstance(node, gast.BoolOp):
                return gast.copy_location(gast.BoolOp(op=node.op,
                                                      values=[truth(v) for v in node.values]),
                                          node)
            return node
        return truth(test)


def _is_number(value):
    return isinstance(value, (int, float, complex, np.number, np.bool_))


def _writes_its_out(s):
    """``y = f(..., out=y)``: the call's value is ``y`` itself."""
    target = s.targets[0]
    return isinstance(s.value, gast.Call) and isinstance(target, gast.Name) and any(
        k.arg == "out" and isinstance(k.value, gast.Name) and k.value.id == target.id
        for k in s.value.keywords)

