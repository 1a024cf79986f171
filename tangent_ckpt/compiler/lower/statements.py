"""Lower: statements -- assignments (tuples one variable per element, subscript
writes, augmented assignment), ``if``, ``return``, and the blocks that hold them.
Early ``return``, ``break`` and ``continue`` become branches and flags."""

import operator

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.calls import IN_PLACE_METHODS
from tangent_ckpt.compiler.lower.checkpoint_markers import lower_with
from tangent_ckpt.compiler.lower.container_values import (
    DictValue, is_container, iteration_items, leaf_paths, leaves, rebuild, structure,
)
from tangent_ckpt.compiler.lower.containers import UserLine
from tangent_ckpt.compiler.lower.observers import observe_assert, observe_call
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, LocalFunction, ObjectValue, Scope, TupleValue, all_names, always_exits,
    function_alias_candidates, is_function, load_context, local_names, may_exit, to_source,
)
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError


class StatementLowering:
    """The statements of a function (and of the helpers inlined into it)."""

    def __init__(self, lowering):
        self.lo = lowering

    def run(self):
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
                      alias_candidates=function_alias_candidates(fnode))
        for p in params:
            scope.rename[p] = ir.Name(p)
        params = self.lo.container_statements.parameters(params, scope)
        result = fnode.name if fnode.name not in scope.locals else self.lo.namer.fresh("result")
        self.lo.namer.reserve({result})
        self.lo.inline_stack.append(self.lo.parsed.fn)  # f calling f is recursion
        body = self.function_body(fnode.body, scope, result, top=True)
        return ir.Function(name=fnode.name, params=params, defaults=defaults, body=body,
                           result=result, line=fnode.lineno, filename=self.lo.parsed.filename,
                           line_texts={**self.lo.inlined_lines, **self.lo.parsed.source_lines})

    def function_body(self, stmts, scope, result, top=False, hint=None, yield_to=None):
        saved = (self.lo.out, self.lo.current_scope, self.lo.ctx)
        self.lo.current_scope = scope
        # temporaries of a return expression are named after `hint`: the caller's
        # variable for an inlined helper (k1 = rhs(x) gives k1_roll, not rhs_result_roll)
        self.lo.ctx = {"result": result, "loop": None, "result_items": None,
                    "hint": hint or result, "yield_to": yield_to}
        out = []
        self.lo.out = out
        scope.top_block = out
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
            if len(s.targets) != 1:
                for t in s.targets:  # a = b = expr
                    self.assign(t, s.value, s)
                return
            self.assign(s.targets[0], s.value, s)
        elif isinstance(s, gast.AnnAssign):
            if s.value is not None:
                self.assign(s.target, s.value, s)
        elif isinstance(s, gast.AugAssign):
            op_value = gast.BinOp(left=load_context(s.target), op=s.op, right=s.value)
            gast.copy_location(op_value, s)
            self.assign(s.target, op_value, s)
        elif isinstance(s, gast.If):
            self.if_(s)
        elif isinstance(s, gast.For):
            self.lo.loops.for_(s)
        elif isinstance(s, gast.While):
            self.lo.loops.while_(s)
        elif isinstance(s, gast.FunctionDef):
            self.lo.current_scope.functions[s.name] = LocalFunction(s, self.lo.current_scope)
        elif isinstance(s, gast.Pass):
            pass
        elif isinstance(s, gast.Expr):
            self.expression_statement(s)
        elif isinstance(s, gast.Assert):
            observe_assert(self.lo, s)  # run in the forward sweep
        elif isinstance(s, gast.With):  # only `with tc.checkpoint_scope(...)`
            lower_with(self.lo, s)
        else:
            self.unsupported_statement(s)

    def unsupported_statement(self, s):
        kinds = {
            gast.Try: ("try/except", "move error handling outside the differentiated function"),
            gast.With: ("with", "only `with tangent_ckpt.checkpoint_scope(...)` is supported"),
            gast.Global: ("global", "pass values in as arguments and return them"),
            gast.Nonlocal: ("nonlocal", "pass values in as arguments and return them"),
            gast.Delete: ("del", "remove the del statement"),
            gast.Raise: ("raise", "check inputs before calling the gradient"),
            gast.ClassDef: ("class definition", "define classes outside the function"),
            gast.Import: ("import", "import at module level"),
            gast.ImportFrom: ("import", "import at module level"),
        }
        name, hint = kinds.get(type(s), (type(s).__name__, "rewrite it with supported statements"))
        raise self.lo.error(UnsupportedSyntaxError, f"unsupported statement: {name}", s,
                         hint=hint, construct=name)

    def expression_statement(self, s):
        value = s.value
        if isinstance(value, gast.Constant):
            return  # docstring
        if isinstance(value, gast.Yield) and self.lo.ctx.get("yield_to"):
            self.lo.ctx["yield_to"](value)  # a generator inlined into a loop
            return
        if isinstance(value, (gast.Yield, gast.YieldFrom, gast.Await)):
            raise self.lo.error(UnsupportedSyntaxError, "generators (yield) cannot be differentiated",
                             s, construct="yield", hint="return a value instead")
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
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
            if value.func.attr in IN_PLACE_METHODS or value.func.attr in ("append", "extend"):
                raise self.lo.error(UnsupportedSyntaxError,
                                 f"in-place method .{value.func.attr}() changes an array",
                                 s, construct=f"in-place .{value.func.attr}()",
                                 hint=f"use the functional form, e.g. x = np.{value.func.attr}(x)"
                                 if value.func.attr == "sort" else "assign a new value instead")
        if isinstance(value, gast.Call):
            if getattr(value, "writes_parameters", False):  # a helper writing its arguments
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
        value = self.lo.expressions.value(s.value, self.lo.ctx["hint"])
        result = self.lo.ctx["result"]
        if isinstance(value, CompileTimeValue):  # a factory's `return loss`
            self.lo.calls.return_value(value, s)
            return
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
            for name, item in zip(leaves(items), leaves(value)):
                self.lo.emit(ir.Assign(name.id, ir.Copy(item), s.lineno))
            return
        if self.lo.ctx["result_items"] not in (None, "single"):
            raise self.lo.error(UnsupportedSyntaxError, "returns of different kinds (tuple and value)",
                             s)
        self.lo.ctx["result_items"] = "single"
        self.emit_value(result, value, s.lineno)

    def assign(self, target, value_node, s):
        line = s.lineno
        if isinstance(target, gast.Name) and self.function_alias(target.id, value_node):
            return
        if isinstance(target, gast.Name):
            name = self.store_name(target.id)
            value = self.lo.expressions.value(value_node, target.id)
            if isinstance(value, CompileTimeValue):  # loss = make_loss(3.0), model = Model(W)
                self.lo.calls.bind_value(target.id, value, s)
                return
            if isinstance(value, TupleValue):
                self.bind_tuple(target.id, value, line)
                return
            self.lo.current_scope.tuples.pop(target.id, None)
            self.emit_value(name, value, line)
            self.lo.run_time.note_binding(name, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in target.elts):
                raise self.lo.error(UnsupportedSyntaxError, "starred assignment", s,
                                 construct="starred assignment",
                                 hint="index the array instead: a, rest = x[0], x[1:]")
            value = self.lo.expressions.value(value_node, "_".join(
                e.id for e in target.elts if isinstance(e, gast.Name)) or "item")
            if isinstance(value, DictValue):  # a, b = d: its keys, as in Python
                value = TupleValue(iteration_items(value))
            if isinstance(value, TupleValue):
                if len(value.items) != len(target.elts):
                    raise self.lo.error(TransformError, "tuple unpacking with the wrong length", s)
                items = []
                targets = {e.id for e in gast.walk(target) if isinstance(e, gast.Name)}
                for item in value.items:  # a, b = b, a: copy before overwriting
                    if isinstance(item, ir.Name) and self._user_name_of(item.id) & targets:
                        tmp = self.lo.namer.fresh(item.id + "_old")
                        self.lo.emit(ir.Assign(tmp, ir.Copy(item), line))
                        item = ir.Name(tmp)
                    items.append(item)
                for elt, item in zip(target.elts, items):
                    self.assign_operand(elt, item, s)
            else:
                source = self.lo.expressions.atomize(value, "item")
                for k, elt in enumerate(target.elts):
                    self.assign_operand(elt, self.getitem_value(source, k, line), s)
        elif isinstance(target, gast.Subscript):
            self.setitem(target, value_node, s)
        elif isinstance(target, gast.Attribute):  # self.W = W in a user class
            self.lo.calls.set_attribute(target, value_node, s)
        else:
            raise self.lo.error(UnsupportedSyntaxError,
                             f"assignment to {type(target).__name__.lower()}", s,
                             hint="assign to plain variables or array elements")

    def _user_name_of(self, ir_name):
        return {k for k, v in self.lo.current_scope.rename.items()
                if isinstance(v, ir.Name) and v.id == ir_name}

    def assign_operand(self, target, value, s):
        """Assign an already-computed operand (or TupleValue / Prim) to a target."""
        if isinstance(target, gast.Name):
            name = self.store_name(target.id)
            if isinstance(value, TupleValue):
                self.bind_tuple(target.id, value, s.lineno)
                return
            self.lo.current_scope.tuples.pop(target.id, None)
            self.emit_value(name, value, s.lineno)
            self.lo.run_time.note_binding(name, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, DictValue):  # its keys, as in Python
                value = TupleValue(iteration_items(value))
            if isinstance(value, TupleValue):
                for elt, item in zip(target.elts, value.items):
                    self.assign_operand(elt, item, s)
            else:
                source = self.lo.expressions.atomize(value, "item")
                for k, elt in enumerate(target.elts):
                    self.assign_operand(elt, self.getitem_value(source, k, s.lineno), s)
        elif isinstance(target, gast.Subscript):  # S[0], I[0] = S0, I0
            if is_container(value):
                raise self.lo.error(UnsupportedSyntaxError, "a tuple stored into an array "
                                    "element", s, construct=to_source(target),
                                    hint="store arrays or numbers: x[i] = np.stack(...)")
            self.store_item(target, lambda: value, s)
        else:
            raise self.lo.error(UnsupportedSyntaxError, "nested assignment target", s)

    def bind_tuple(self, user_name, value, line):
        """One variable per element.  Rebinding a tuple of the same length reuses its
        element variables, so a tuple updated in a loop or in a branch is carried
        like any variable."""
        old = self.lo.current_scope.tuples.get(user_name)
        if old is not None and structure(old) == structure(value):
            names = leaves(old)
            items = self._unclobbered(leaves(value), [n.id for n in names])
        else:
            if old is not None and self.lo.ctx["loop"] is not None:
                raise self.lo.error(UnsupportedSyntaxError,
                                    f"'{user_name}' changes its length or keys inside a loop",
                                    UserLine(line), construct=f"{user_name} rebound in a loop",
                                    hint="keep a container's length fixed in a loop; to "
                                         "collect values per step, write rows of an array "
                                         "or append to a list")
            names = [ir.Name(self.lo.namer.fresh(path))
                     for path in leaf_paths(value, user_name)]
            items = leaves(value)
        for element, item in zip(names, items):
            self.lo.emit(ir.Assign(element.id, ir.Copy(item) if not isinstance(
                item, (ir.Prim, ir.NonDiff)) else item, line))
        self.lo.current_scope.tuples[user_name] = rebuild(value, iter(names))

    def _unclobbered(self, items, targets):
        """``items`` assigned to ``targets`` in order: an item reading a target
        that is written before it (or by itself) is first copied to a temporary."""
        safe = []
        for k, item in enumerate(items):
            reads = ir.expr_reads(item) if isinstance(item, (ir.Prim, ir.NonDiff)) \
                else ir.operand_names(item)
            if isinstance(item, ir.Name) and item.id == targets[k]:
                safe.append(item)  # state_0 = state_0: nothing to protect
            elif any(r in targets[:k + 1] for r in reads):
                safe.append(self.lo.expressions.atomize(item, targets[k] + "_new")
                            if not isinstance(item, ir.Name) else self._copy(item))
            else:
                safe.append(item)
        return safe

    def _copy(self, name):
        tmp = self.lo.namer.fresh(name.id + "_old")
        self.lo.emit(ir.Assign(tmp, ir.Copy(name), self.lo.line))
        return ir.Name(tmp)

    def getitem_value(self, source, k, line):
        return ir.Prim(operator.getitem, [source, ir.Index(sx.const(k), (), plain=True)], {}, "getitem")

    def emit_value(self, name, value, line):
        if isinstance(value, ir.Prim) and name in ir.expr_reads(value):
            value = self.lo.expressions.atomize(value, name)
        if isinstance(value, (ir.Prim, ir.NonDiff)):
            self.lo.emit(ir.Assign(name, value, line))
        elif isinstance(value, (ir.Name, ir.Const)):
            self.lo.emit(ir.Assign(name, ir.Copy(value), line))
        elif isinstance(value, ObjectValue):  # refused by emit: an object is no value
            self.lo.emit(ir.Assign(name, value, line))
        else:  # pragma: no cover - defensive
            raise TypeError(value)

    def function_alias(self, user_name, value_node):
        """``act = np.tanh``, ``step = helper``: a local bound once to a function
        names it like a module-level name does (calls of ``act`` resolve to
        ``np.tanh``); nothing is emitted.  False for any other assignment."""
        scope = self.lo.current_scope
        if user_name not in scope.alias_candidates:
            return False
        fn = self.lo.expressions.static_value(value_node)
        if not (isinstance(fn, LocalFunction) or is_function(fn)):
            return False
        scope.functions[user_name] = fn
        return True

    def store_name(self, user_name):
        scope = self.lo.current_scope
        if self.lo.out is scope.top_block:  # surely rebound: no longer the caller's array
            scope.shared_arrays.discard(user_name)
        if user_name in scope.functions:
            del scope.functions[user_name]
        if scope.identity:
            scope.rename[user_name] = ir.Name(user_name)
            return user_name
        current = scope.rename.get(user_name)
        if isinstance(current, ir.Name) and current.id not in getattr(scope, "aliases", set()):
            return current.id
        name = self.lo.namer.fresh(user_name)
        scope.rename[user_name] = ir.Name(name)
        return name

    def setitem(self, target, value_node, s):
        self.store_item(target, lambda: self.lo.expressions.value(value_node, _base_name(target)),
                        s)

    def store_item(self, target, value, s):
        """``target[index] = value``; ``value()`` lowers the value (after the index,
        in the order the generated code has always read)."""
        target = self.lo.container_statements.flat_subscript(target, s)
        if isinstance(target.value, gast.Name):
            base = self.lo.expressions.load_name(target.value.id, target.value)
            if self.lo.run_time.is_dict(base):  # hs[t] = v: keys known at run time
                self.lo.run_time.store_at_run_time_key(base, target, value, target.value.id)
                return
        if self.lo.containers.holds_container(target.value):  # d['w'] = v, params[0] = v
            self.lo.container_statements.store_in_container(target, value(), s)
            return
        if not isinstance(target.value, gast.Name):
            raise self.lo.error(UnsupportedSyntaxError, "assignment into a nested subscript", s,
                             construct=f"{to_source(target)} = ...",
                             hint="assign into a named array: x[i] = v")
        base = self.lo.expressions.load_name(target.value.id, target.value)
        if not isinstance(base, ir.Name):
            raise self.lo.error(UnsupportedSyntaxError, "assignment into a global array", s,
                             construct=f"{to_source(target)} = ...",
                             hint="copy the array into a local variable first")
        user = target.value.id
        scope = self.lo.current_scope
        if user in scope.shared_arrays or (user not in scope.rename and user not in scope.locals
                                            and not scope.identity):
            raise self.lo.error(UnsupportedSyntaxError,
                             f"assignment into '{user}', an array the caller also sees "
                             f"({user}[...] = ... would change the caller's array)", s,
                             construct="subscript assignment into a caller's array",
                             hint=f"copy it first: {user} = {user}.copy()")
        index = self.lo.expressions.index(target.slice, target.value.id)
        if self.lo.run_time.is_rows(base) and isinstance(s, gast.Assign):
            self.lo.run_time.refuse_mutated(s.value, s)  # hs[t] = h: a reference to h
        value = self.lo.expressions.atomize(value(), target.value.id + "_value")
        name = self.store_name(target.value.id)
        if name != base.id:  # an inlined parameter bound to the caller's array
            self.lo.emit(ir.Assign(name, ir.Copy(base), s.lineno))
        self.lo.emit(ir.SetItem(name, index, value, s.lineno))

    def if_(self, s, extra=()):
        truth = self.lo.comprehensions.static_truth(s.test)
        if truth is not None:  # a condition of constants: only the path that runs
            self.block(list(s.body if truth else s.orelse) + list(extra))
            return
        cond = self.condition(s.test, s.lineno)
        tuples = self.lo.current_scope.tuples
        before = dict(tuples)
        body = self.sub_block(list(s.body) + list(extra))
        after_body = dict(tuples)
        orelse = self.sub_block(list(s.orelse) + list(extra))
        self.lo.container_statements.same_structures(s, before, after_body, tuples)
        self.lo.emit(ir.If(cond, body, orelse, s.lineno))

    def condition(self, test, line):
        name = self.lo.namer.fresh("cond")
        self.lo.emit(ir.Assign(name, self.lo.expressions.nondiff(test), line))
        return name


def _base_name(target):
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id if isinstance(target, gast.Name) else "item"


