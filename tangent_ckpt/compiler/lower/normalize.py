"""Normalize: a parsed user function -> the A-normal-form IR of :mod:`ir`.

- one primitive per assignment, temporaries named after the assignment target
  (``h = np.tanh(h @ W + b)`` gives ``h_matmul``, ``h_add``);
- augmented assignment, tuple packing/unpacking (tuples become one variable
  per element), methods (``x.sum(axis=0)`` is ``np.sum``) and ``x.T`` desugared;
- ``for`` over ``range``, array rows, ``enumerate`` and ``zip`` become ``For``
  over a range; early ``return``, ``break`` and ``continue`` become branches
  and flags;
- calls (:mod:`calls`): NumPy primitives, array methods, and the user's own
  Python functions (module level, closures, nested ``def``), inlined with their
  locals renamed; the variables of each function live in :mod:`scopes`.

Free names are resolved to objects; NumPy functions are written ``np.<name>``.
"""

import ast
import operator

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.lower.checkpoint_markers import lower_with
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.parse import _UNRESOLVED
from tangent_ckpt.compiler.lower.calls import IN_PLACE_METHODS, INDEX_JOINS, CallNormalizer
from tangent_ckpt.compiler.naming import Namer, numpy_path
from tangent_ckpt.compiler.lower.scopes import (LocalFunction, Scope, TupleValue, all_names,
                                          always_exits, clone, load_context, local_names,
                                          may_exit, rebinds, to_source)
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError

BINOPS = {
    gast.Add: (np.add, "+", "add"), gast.Sub: (np.subtract, "-", "sub"),
    gast.Mult: (np.multiply, "*", "mul"), gast.Div: (np.divide, "/", "div"),
    gast.Pow: (np.power, "**", "pow"), gast.MatMult: (np.matmul, "@", "matmul"),
    gast.Mod: (np.remainder, "%", "mod"),
}
NONDIFF_BINOPS = {gast.FloorDiv: "//"}
NONDIFF_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}


class Normalizer(CallNormalizer):
    def __init__(self, parsed, namer=None):
        self.parsed = parsed
        self.namer = namer or Namer()
        self.bindings = {}  # generated global name -> object
        self.binding_names = {}  # id(obj) -> generated name
        self.out = None
        self.inline_stack = []
        self.inlined_lines = {}  # source lines of helpers from the same file

    # --- entry ---------------------------------------------------------------
    def run(self):
        fnode = self.parsed.node
        self.namer.reserve(all_names(fnode))
        self.namer.reserve({"np", "rt"})
        args = fnode.args
        if args.vararg or args.kwarg:
            raise self.error(UnsupportedSyntaxError, "*args/**kwargs parameters", fnode,
                             hint="give the function named parameters")
        params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
        defaults = {}
        if self.parsed.fn.__defaults__:
            positional = [a.id for a in args.posonlyargs + args.args]
            for name, value in zip(positional[-len(self.parsed.fn.__defaults__):],
                                   self.parsed.fn.__defaults__):
                defaults[name] = value
        if self.parsed.fn.__kwdefaults__:
            defaults.update(self.parsed.fn.__kwdefaults__)
        scope = Scope(self.parsed, local_names(fnode), identity=True)
        for p in params:
            scope.rename[p] = ir.Name(p)
        result = fnode.name if fnode.name not in scope.locals else self.namer.fresh("result")
        self.namer.reserve({result})
        body = self.function_body(fnode.body, scope, result, top=True)
        return ir.Function(name=fnode.name, params=params, defaults=defaults, body=body,
                           result=result, line=fnode.lineno, filename=self.parsed.filename,
                           line_texts={**self.inlined_lines, **self.parsed.source_lines})

    def error(self, cls, what, node, hint=None, construct=None, parsed=None):
        parsed = parsed or (self.current_scope.parsed if getattr(self, "current_scope", None)
                            else self.parsed)
        return cls(what, filename=parsed.filename, lineno=getattr(node, "lineno", None),
                   construct=construct or what, hint=hint)

    # --- blocks --------------------------------------------------------------
    def function_body(self, stmts, scope, result, top=False, hint=None):
        saved = (self.out, getattr(self, "current_scope", None), getattr(self, "ctx", None))
        self.current_scope = scope
        # temporaries of a return expression are named after `hint`: the caller's
        # variable for an inlined helper (k1 = rhs(x) gives k1_roll, not rhs_result_roll)
        self.ctx = {"result": result, "loop": None, "result_items": None,
                    "hint": hint or result}
        out = []
        self.out = out
        scope.top_block = out
        self.block(stmts)
        if top and not always_exits(stmts):
            raise self.error(TransformError, "the function can end without returning a value",
                             self.parsed.node, construct="missing return",
                             hint="end every path with a return statement")
        value = self.ctx.get("result_items")
        self.out, self.current_scope, self.ctx = saved
        return out if top else (out, value)

    def block(self, stmts):
        """Normalize a statement list into self.out; stops after an exit."""
        for i, stmt in enumerate(stmts):
            self._line = getattr(stmt, "lineno", self._line)
            if isinstance(stmt, gast.Return):
                self.return_(stmt)
                return
            if isinstance(stmt, gast.Break):
                loop = self.ctx["loop"]
                if loop is None:
                    raise self.error(UnsupportedSyntaxError, "break outside a loop", stmt)
                if loop["break_flag"] is None:
                    loop["break_flag"] = self.namer.fresh("stop")
                self.emit(ir.Assign(loop["break_flag"], ir.Copy(ir.Const(True)), stmt.lineno))
                return
            if isinstance(stmt, gast.Continue):
                if self.ctx["loop"] is None:
                    raise self.error(UnsupportedSyntaxError, "continue outside a loop", stmt)
                return
            if isinstance(stmt, gast.If) and may_exit(stmt):
                rest = list(stmts[i + 1:])
                self.if_(stmt, extra=rest)
                return
            self.statement(stmt)

    def emit(self, stmt):
        self.out.append(stmt)

    def sub_block(self, stmts):
        saved = self.out
        self.out = []
        self.block(stmts)
        result, self.out = self.out, saved
        return result

    # --- statements ----------------------------------------------------------
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
            self.for_(s)
        elif isinstance(s, gast.While):
            self.while_(s)
        elif isinstance(s, gast.FunctionDef):
            self.current_scope.functions[s.name] = LocalFunction(s, self.current_scope)
        elif isinstance(s, gast.Pass):
            pass
        elif isinstance(s, gast.Expr):
            self.expression_statement(s)
        elif isinstance(s, gast.Assert):
            pass  # a check, not a computation
        elif isinstance(s, gast.With):  # only `with tc.checkpoint_scope(...)`
            lower_with(self, s)
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
        raise self.error(UnsupportedSyntaxError, f"unsupported statement: {name}", s,
                         hint=hint, construct=name)

    def expression_statement(self, s):
        value = s.value
        if isinstance(value, gast.Constant):
            return  # docstring
        if isinstance(value, (gast.Yield, gast.YieldFrom, gast.Await)):
            raise self.error(UnsupportedSyntaxError, "generators (yield) cannot be differentiated",
                             s, construct="yield", hint="return a value instead")
        if isinstance(value, gast.Call):
            self.reject_out_argument(value)
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
            if value.func.attr in IN_PLACE_METHODS or value.func.attr in ("append", "extend"):
                raise self.error(UnsupportedSyntaxError,
                                 f"in-place method .{value.func.attr}() changes an array",
                                 s, construct=f"in-place .{value.func.attr}()",
                                 hint=f"use the functional form, e.g. x = np.{value.func.attr}(x)"
                                 if value.func.attr == "sort" else "assign a new value instead")
        if isinstance(value, gast.Call):
            obj = self.static_value(value.func)
            if obj is print:
                return
        raise self.error(UnsupportedSyntaxError,
                         "an expression statement whose value is discarded", s,
                         construct="expression statement",
                         hint="assign the value to a variable")

    def return_(self, s):
        if self.ctx["loop"] is not None:
            raise self.error(UnsupportedSyntaxError, "return inside a loop", s,
                             construct="return in loop",
                             hint="assign the result, break, and return after the loop")
        if s.value is None:
            raise self.error(TransformError, "return without a value", s,
                             construct="return", hint="return the value to differentiate")
        value = self.value(s.value, self.ctx["hint"])
        result = self.ctx["result"]
        if isinstance(value, TupleValue):
            items = self.ctx["result_items"]
            if items == "single":
                raise self.error(UnsupportedSyntaxError,
                                 "returns of different kinds (tuple and value)", s)
            if items is None:
                items = [self.namer.fresh(f"{result}_{k}") for k in range(len(value.items))]
                self.ctx["result_items"] = items
            for name, item in zip(items, value.items):
                self.emit(ir.Assign(name, ir.Copy(item), s.lineno))
            return
        if self.ctx["result_items"] not in (None, "single"):
            raise self.error(UnsupportedSyntaxError, "returns of different kinds (tuple and value)",
                             s)
        self.ctx["result_items"] = "single"
        self.emit_value(result, value, s.lineno)

    def assign(self, target, value_node, s):
        line = s.lineno
        if isinstance(target, gast.Name):
            name = self.store_name(target.id)
            value = self.value(value_node, target.id)
            if isinstance(value, TupleValue):
                self.bind_tuple(target.id, value, line)
                return
            self.current_scope.tuples.pop(target.id, None)
            self.emit_value(name, value, line)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(e, gast.Starred) for e in target.elts):
                raise self.error(UnsupportedSyntaxError, "starred assignment", s,
                                 construct="starred assignment",
                                 hint="index the array instead: a, rest = x[0], x[1:]")
            value = self.value(value_node, "_".join(
                e.id for e in target.elts if isinstance(e, gast.Name)) or "item")
            if isinstance(value, TupleValue):
                if len(value.items) != len(target.elts):
                    raise self.error(TransformError, "tuple unpacking with the wrong length", s)
                items = []
                targets = {e.id for e in gast.walk(target) if isinstance(e, gast.Name)}
                for item in value.items:  # a, b = b, a: copy before overwriting
                    if isinstance(item, ir.Name) and self._user_name_of(item.id) & targets:
                        tmp = self.namer.fresh(item.id + "_old")
                        self.emit(ir.Assign(tmp, ir.Copy(item), line))
                        item = ir.Name(tmp)
                    items.append(item)
                for elt, item in zip(target.elts, items):
                    self.assign_operand(elt, item, s)
            else:
                source = self.atomize(value, "item")
                for k, elt in enumerate(target.elts):
                    self.assign_operand(elt, self.getitem_value(source, k, line), s)
        elif isinstance(target, gast.Subscript):
            self.setitem(target, value_node, s)
        else:
            raise self.error(UnsupportedSyntaxError,
                             f"assignment to {type(target).__name__.lower()}", s,
                             hint="assign to plain variables or array elements")

    def _user_name_of(self, ir_name):
        return {k for k, v in self.current_scope.rename.items()
                if isinstance(v, ir.Name) and v.id == ir_name}

    def assign_operand(self, target, value, s):
        """Assign an already-computed operand (or TupleValue / Prim) to a target."""
        if isinstance(target, gast.Name):
            name = self.store_name(target.id)
            if isinstance(value, TupleValue):
                self.bind_tuple(target.id, value, s.lineno)
                return
            self.current_scope.tuples.pop(target.id, None)
            self.emit_value(name, value, s.lineno)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, TupleValue):
                for elt, item in zip(target.elts, value.items):
                    self.assign_operand(elt, item, s)
            else:
                source = self.atomize(value, "item")
                for k, elt in enumerate(target.elts):
                    self.assign_operand(elt, self.getitem_value(source, k, s.lineno), s)
        else:
            raise self.error(UnsupportedSyntaxError, "nested assignment target", s)

    def bind_tuple(self, user_name, value, line):
        """One variable per element.  Rebinding a tuple of the same length reuses its
        element variables, so a tuple updated in a loop or in a branch is carried
        like any variable."""
        if any(isinstance(item, TupleValue) for item in value.items):
            raise self.error(UnsupportedSyntaxError, "nested tuples", None)
        old = self.current_scope.tuples.get(user_name)
        if old is not None and len(old) == len(value.items):
            names = list(old)
            items = self._unclobbered(value.items, [n.id for n in names])
        else:
            names = [ir.Name(self.namer.fresh(f"{user_name}_{k}"))
                     for k in range(len(value.items))]
            items = value.items
        for element, item in zip(names, items):
            self.emit(ir.Assign(element.id, ir.Copy(item) if not isinstance(
                item, (ir.Prim, ir.NonDiff)) else item, line))
        self.current_scope.tuples[user_name] = names

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
                safe.append(self.atomize(item, targets[k] + "_new")
                            if not isinstance(item, ir.Name) else self._copy(item))
            else:
                safe.append(item)
        return safe

    def _copy(self, name):
        tmp = self.namer.fresh(name.id + "_old")
        self.emit(ir.Assign(tmp, ir.Copy(name), self._line))
        return ir.Name(tmp)

    def getitem_value(self, source, k, line):
        return ir.Prim(operator.getitem, [source, ir.Index(sx.const(k), (), plain=True)], {}, "getitem")

    def emit_value(self, name, value, line):
        if isinstance(value, ir.Prim) and name in ir.expr_reads(value):
            value = self.atomize(value, name)
        if isinstance(value, (ir.Prim, ir.NonDiff)):
            self.emit(ir.Assign(name, value, line))
        elif isinstance(value, (ir.Name, ir.Const)):
            self.emit(ir.Assign(name, ir.Copy(value), line))
        else:  # pragma: no cover - defensive
            raise TypeError(value)

    def store_name(self, user_name):
        scope = self.current_scope
        if self.out is scope.top_block:  # surely rebound: no longer the caller's array
            scope.shared_arrays.discard(user_name)
        if user_name in scope.functions:
            del scope.functions[user_name]
        if scope.identity:
            scope.rename[user_name] = ir.Name(user_name)
            return user_name
        current = scope.rename.get(user_name)
        if isinstance(current, ir.Name) and current.id not in getattr(scope, "aliases", set()):
            return current.id
        name = self.namer.fresh(user_name)
        scope.rename[user_name] = ir.Name(name)
        return name

    def setitem(self, target, value_node, s):
        if not isinstance(target.value, gast.Name):
            raise self.error(UnsupportedSyntaxError, "assignment into a nested subscript", s,
                             hint="assign into a named array: x[i] = v")
        base = self.load_name(target.value.id, target.value)
        if not isinstance(base, ir.Name):
            raise self.error(UnsupportedSyntaxError, "assignment into a global array", s,
                             hint="copy the array into a local variable first")
        user = target.value.id
        scope = self.current_scope
        if user in scope.shared_arrays or (user not in scope.rename and user not in scope.locals
                                            and not scope.identity):
            raise self.error(UnsupportedSyntaxError,
                             f"assignment into '{user}', an array the caller also sees "
                             f"({user}[...] = ... would change the caller's array)", s,
                             construct="subscript assignment into a caller's array",
                             hint=f"copy it first: {user} = {user}.copy()")
        index = self.index(target.slice, target.value.id)
        value = self.atomize(self.value(value_node, target.value.id), target.value.id + "_value")
        name = self.store_name(target.value.id)
        if name != base.id:  # an inlined parameter bound to the caller's array
            self.emit(ir.Assign(name, ir.Copy(base), s.lineno))
        self.emit(ir.SetItem(name, index, value, s.lineno))

    def if_(self, s, extra=()):
        cond = self.condition(s.test, s.lineno)
        body = self.sub_block(list(s.body) + list(extra))
        orelse = self.sub_block(list(s.orelse) + list(extra))
        self.emit(ir.If(cond, body, orelse, s.lineno))

    def condition(self, test, line):
        name = self.namer.fresh("cond")
        self.emit(ir.Assign(name, self.nondiff(test), line))
        return name

    def loop_body(self, stmts, loop):
        saved = self.ctx["loop"]
        self.ctx["loop"] = loop
        body = self.sub_block(stmts)
        self.ctx["loop"] = saved
        return body

    def for_(self, s):
        if s.orelse:
            raise self.error(UnsupportedSyntaxError, "for ... else", s, construct="for-else",
                             hint="use a flag variable instead of the else clause")
        header = f"for {to_source(s.target)} in {to_source(s.iter)}"
        it = s.iter
        prologue = []  # (target node, sequence operand) assigned at the top of each iteration
        index_target = None
        if isinstance(it, gast.Call):
            fn = self.static_value(it.func)
            if fn is range:
                if not isinstance(s.target, gast.Name):
                    raise self.error(UnsupportedSyntaxError, "range loop with a tuple target", s)
                bounds = [self.atomize(self.value(a, "bound"), "bound") for a in it.args]
                index_target = s.target.id
            elif fn is enumerate:
                if not (isinstance(s.target, gast.Tuple) and len(s.target.elts) == 2):
                    raise self.error(UnsupportedSyntaxError, "enumerate needs `i, x` targets", s)
                seq = self.atomize(self.value(it.args[0], "rows"), "rows")
                bounds = [self.length(seq, s.lineno)]
                first = s.target.elts[0]
                if not isinstance(first, gast.Name):
                    raise self.error(UnsupportedSyntaxError, "enumerate index must be a name", s)
                index_target = first.id
                if len(it.args) > 1 or it.keywords:
                    raise self.error(UnsupportedSyntaxError, "enumerate(..., start)", s,
                                     hint="add the start to the index in the body")
                prologue.append((s.target.elts[1], seq))
            elif fn is zip:
                seqs = [self.atomize(self.value(a, "rows"), "rows") for a in it.args]
                if not (isinstance(s.target, gast.Tuple) and len(s.target.elts) == len(seqs)):
                    raise self.error(UnsupportedSyntaxError, "zip needs one target per sequence", s)
                lengths = [self.length(q, s.lineno) for q in seqs]
                if len(lengths) == 1:
                    bounds = lengths
                else:
                    n = self.namer.fresh("n")
                    self.emit(ir.Assign(n, ir.NonDiff(
                        sx.call("min", *[ir.operand_node(x) for x in lengths]),
                        tuple(x.id for x in lengths if isinstance(x, ir.Name))), s.lineno))
                    bounds = [ir.Name(n)]
                prologue.extend(zip(s.target.elts, seqs))
            else:
                raise self.error(UnsupportedSyntaxError, f"loop over {to_source(it)}", s,
                                 construct="for over an iterator",
                                 hint="loop over range(...), an array, enumerate or zip")
        else:
            if isinstance(it, (gast.List, gast.Tuple)):   # for a in [x, y]: the rows of
                seq = self.atomize(ir.Prim(np.stack, [self.sequence_argument(it, "rows")],
                                           {}, "call", ref="np.stack"), "rows")  # np.stack
            else:
                seq = self.atomize(self.value(it, "rows"), "rows")
            if isinstance(it, gast.Name) and rebinds(s.body, it.id):
                # Python iterates over the array bound at loop entry, even if the
                # body rebinds the name: pin it (found by tests/test_fuzz.py)
                pinned = self.namer.fresh(f"{it.id}_rows")
                self.emit(ir.Assign(pinned, ir.Copy(seq), s.lineno))
                seq = ir.Name(pinned)
            bounds = [self.length(seq, s.lineno)]
            prologue.append((s.target, seq))
        if index_target is None:
            index = self.namer.fresh("i")
        else:
            index = self.store_name(index_target)
        loop = {"break_flag": None}
        saved = self.out
        self.out = []
        for target, seq in prologue:
            self.assign_operand(target, ir.Prim(operator.getitem,
                                                [seq, ir.Index(sx.name(index), (index,), plain=True)], {},
                                                "getitem"), s)
        head = self.out
        self.out = saved
        body = head + self.loop_body(s.body, loop)
        flag = loop["break_flag"]
        if flag:
            self.emit(ir.Assign(flag, ir.Copy(ir.Const(False)), s.lineno))
            body.append(ir.Break(flag, s.lineno))
        self.emit(ir.For(index, bounds, body, s.lineno, header=header, break_flag=flag))

    def length(self, seq, line):
        n = self.namer.fresh("n")
        self.emit(ir.Assign(n, ir.NonDiff(sx.call("len", ir.operand_node(seq)),
                                          ir.operand_names(seq)), line))
        return ir.Name(n)

    def while_(self, s):
        if s.orelse:
            raise self.error(UnsupportedSyntaxError, "while ... else", s)
        header = f"while {to_source(s.test)}"
        test = self.nondiff(s.test)
        loop = {"break_flag": None}
        body = self.loop_body(s.body, loop)
        flag = loop["break_flag"]
        if flag:
            self.emit(ir.Assign(flag, ir.Copy(ir.Const(False)), s.lineno))
            body.append(ir.Break(flag, s.lineno))
        self.emit(ir.While(test, body, s.lineno, header=header, break_flag=flag))

    # --- expressions ---------------------------------------------------------
    def value(self, node, hint):
        """Normalize an expression: returns an operand, a Prim/NonDiff, or a TupleValue."""
        if isinstance(node, gast.Constant):
            return ir.Const(node.value)
        if isinstance(node, gast.Name):
            return self.load_name(node.id, node)
        if isinstance(node, gast.BinOp):
            if type(node.op) in BINOPS:
                fn, symbol, opname = BINOPS[type(node.op)]
                left = self.atomize(self.value(node.left, hint), hint)
                right = self.atomize(self.value(node.right, hint), hint)
                return ir.Prim(fn, [left, right], {}, f"binop:{symbol}")
            return self.nondiff(node)
        if isinstance(node, gast.UnaryOp):
            if isinstance(node.op, gast.USub):
                operand = self.value(node.operand, hint)
                if isinstance(operand, ir.Const):
                    return ir.Const(-operand.value)
                return ir.Prim(np.negative, [self.atomize(operand, hint)], {}, "unary:-")
            if isinstance(node.op, gast.UAdd):
                return self.value(node.operand, hint)
            return self.nondiff(node)
        if isinstance(node, gast.BoolOp) and not all(_is_boolean(v) for v in node.values):
            raise self.error(UnsupportedSyntaxError, "`and`/`or` used as a value", node,
                             construct=to_source(node).strip(),
                             hint="it returns one of its operands; write np.where(...) or "
                                  "an if statement")
        if isinstance(node, (gast.Compare, gast.BoolOp)):
            return self.nondiff(node)
        if isinstance(node, gast.IfExp):
            target = self.namer.fresh(hint if hint not in self.current_scope.locals else
                                      f"{hint}_choice")
            cond = self.condition(node.test, node.lineno)
            body = self._branch_value(node.body, target, hint, node.lineno)
            orelse = self._branch_value(node.orelse, target, hint, node.lineno)
            self.emit(ir.If(cond, body, orelse, node.lineno))
            return ir.Name(target)
        if isinstance(node, (gast.Tuple, gast.List)):
            items = []
            for k, e in enumerate(node.elts):
                if isinstance(e, gast.Starred):
                    raise self.error(UnsupportedSyntaxError, "starred expression", node,
                                     construct="starred expression",
                                     hint="build the tuple from explicit items")
                v = self.value(e, f"{hint}_{k}")
                items.append(v if isinstance(v, TupleValue) else self.atomize(v, f"{hint}_{k}"))
            return TupleValue(items)
        if isinstance(node, gast.Attribute):
            return self.attribute(node, hint)
        if isinstance(node, gast.Subscript):
            return self.subscript(node, hint)
        if isinstance(node, gast.Call):
            return self.call(node, hint)
        kinds = {gast.Lambda: "lambda", gast.ListComp: "list comprehension",
                 gast.GeneratorExp: "generator expression", gast.DictComp: "dict comprehension",
                 gast.SetComp: "set comprehension", gast.Dict: "dict literal",
                 gast.Yield: "yield", gast.YieldFrom: "yield", gast.Await: "await",
                 gast.Starred: "starred expression", gast.NamedExpr: "assignment expression",
                 gast.JoinedStr: "f-string"}
        name = kinds.get(type(node), type(node).__name__)
        raise self.error(UnsupportedSyntaxError, f"unsupported expression: {name}", node,
                         construct=name, hint="rewrite it with loops and NumPy calls")

    def _branch_value(self, node, target, hint, line):
        saved = self.out
        self.out = []
        v = self.value(node, hint)
        if isinstance(v, TupleValue):
            raise self.error(UnsupportedSyntaxError, "conditional expression of tuples", node)
        self.emit_value(target, v, line)
        result, self.out = self.out, saved
        return result

    def atomize(self, value, hint):
        """Make ``value`` an operand, emitting a temporary assignment if needed."""
        if isinstance(value, (ir.Name, ir.Const)):
            return value
        if isinstance(value, TupleValue):
            raise TransformError("a tuple or list used where an array is expected",
                                 filename=self.current_scope.parsed.filename,
                                 lineno=self._line or None, construct="tuple value",
                                 hint="for a list of arrays use np.stack(...); unpack a "
                                      "tuple into variables first")
        if isinstance(value, ir.Prim):
            suffix = _prim_suffix(value)
            name = self.namer.fresh(f"{hint}_{suffix}" if not hint.endswith("_" + suffix)
                                    else hint)
        else:
            name = self.namer.fresh(f"{hint}_value" if not hint.endswith("_value") else hint)
        self.emit(ir.Assign(name, value, self._line))
        return ir.Name(name)

    def load_name(self, user_name, node):
        scope = self.current_scope
        while scope is not None:
            if user_name in scope.tuples:
                return TupleValue(scope.tuples[user_name])
            if user_name in scope.rename:
                return scope.rename[user_name]
            if user_name in scope.functions:
                return scope.functions[user_name]
            if user_name in scope.locals:
                if scope.identity:
                    return ir.Name(user_name)
                name = self.namer.fresh(user_name)
                scope.rename[user_name] = ir.Name(name)
                return ir.Name(name)
            scope = scope.parent
        obj = self.current_scope.parsed.resolve(user_name)
        if obj is _UNRESOLVED:
            raise self.error(TransformError, f"name '{user_name}' is not defined", node,
                             construct=user_name)
        return self.constant(obj, user_name)

    def constant(self, obj, hint="const"):
        if obj is None or isinstance(obj, (bool, int, float, complex, str)):
            return ir.Const(obj)
        if isinstance(obj, np.generic):
            return ir.Const(obj.item()) if np.ndim(obj) == 0 else self.bind(obj, hint)
        if isinstance(obj, tuple) and all(isinstance(x, (int, float, bool)) for x in obj):
            return ir.Const(obj)
        return self.bind(obj, hint)

    def bind(self, obj, hint):
        """A global name under which generated code sees ``obj``."""
        if obj is np:
            return ir.Name("np")
        key = id(obj)
        if key in self.binding_names:
            return ir.Name(self.binding_names[key])
        if hint not in self.bindings and hint not in ("np", "rt") and \
                self.parsed.resolve(hint) is obj and \
                hint not in local_names(self.parsed.node):
            name = hint  # the user's own global name (reserved: no generated name uses it)
        else:
            name = self.namer.fresh(hint)
        self.bindings[name] = obj
        self.binding_names[key] = name
        return ir.Name(name)

    def static_value(self, node):
        """The object a Name/Attribute chain of globals denotes, or _UNRESOLVED."""
        if isinstance(node, gast.Name):
            scope = self.current_scope
            while scope is not None:
                if node.id in scope.functions:
                    return scope.functions[node.id]
                if node.id in scope.locals or node.id in scope.rename:
                    return _UNRESOLVED
                scope = scope.parent
            return self.current_scope.parsed.resolve(node.id)
        if isinstance(node, gast.Attribute):
            base = self.static_value(node.value)
            if base is _UNRESOLVED or isinstance(base, LocalFunction):
                return _UNRESOLVED
            return getattr(base, node.attr, _UNRESOLVED)
        return _UNRESOLVED

    def attribute(self, node, hint):
        obj = self.static_value(node)
        if obj is not _UNRESOLVED:
            return self.constant(obj, node.attr)
        base = self.atomize(self.value(node.value, hint), hint)
        if node.attr == "T":
            return ir.Prim(np.transpose, [base], {}, "attr:T")
        if node.attr in NONDIFF_ATTRIBUTES:
            return ir.NonDiff(sx.attr(ir.operand_node(base), node.attr), ir.operand_names(base))
        raise self.error(UnsupportedSyntaxError, f"unsupported attribute .{node.attr}", node,
                         construct=f".{node.attr}",
                         hint="use the NumPy function form instead")

    def subscript(self, node, hint):
        joined = INDEX_JOINS.get(id(self.static_value(node.value)))
        if joined is not None:       # np.r_[a, b] and np.c_[a, b]: calls in disguise
            return self.index_join(joined, node, hint)
        base = self.value(node.value, hint)
        if isinstance(base, TupleValue):
            k = self.static_int(node.slice)
            if k is None:
                raise self.error(UnsupportedSyntaxError, "tuple indexed by a variable", node,
                                 hint="index tuples with constant integers")
            return base.items[k]
        base = self.atomize(base, hint)
        index = self.index(node.slice, hint)
        return ir.Prim(operator.getitem, [base, index], {}, "getitem")

    def static_int(self, node):
        if isinstance(node, gast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            inner = self.static_int(node.operand)
            return None if inner is None else -inner
        return None

    def index(self, node, hint):
        """An index expression: its parts are atomized, slices kept as syntax."""
        names = []

        def part(n):
            if isinstance(n, gast.Slice):
                lower, upper, step = (part(b) if b is not None else None
                                      for b in (n.lower, n.upper, n.step))
                return ast.Slice(lower=lower, upper=upper, step=step)
            if isinstance(n, gast.Tuple):
                return ast.Tuple(elts=[part(e) for e in n.elts], ctx=ast.Load())
            if isinstance(n, gast.Constant):
                return ast.Constant(value=n.value)
            if isinstance(n, gast.List):     # fancy indexing with a list: x[[0, 2]]
                return ast.List(elts=[part(e) for e in n.elts], ctx=ast.Load())
            v = self.atomize(self.value(n, f"{hint}_index"), f"{hint}_index")
            if isinstance(v, ir.Name):
                names.append(v.id)
            return ir.operand_node(v)

        tree = part(node)
        simple = isinstance(node, (gast.Name, gast.Constant)) and not (
            isinstance(node, gast.Constant) and node.value is Ellipsis)
        plain = simple or (len(names) == 1 and isinstance(tree, ast.Name) and tree.id == names[0])
        return ir.Index(tree, tuple(names), plain)

    def nondiff(self, node):
        """Keep ``node`` as written, with local names renamed and globals bound."""
        for sub in gast.walk(node):  # `if (y := f(x)) > 0:` would bind y behind our back
            if isinstance(sub, gast.NamedExpr):
                raise self.error(UnsupportedSyntaxError, "unsupported expression: assignment "
                                 "expression (:=)", sub, construct="assignment expression",
                                 hint="assign the value on its own line first")
        names = []
        node = clone(node)

        class Renamer(gast.NodeTransformer):
            def visit_Name(inner, n):  # noqa: N805
                if not isinstance(n.ctx, gast.Load):
                    return n
                v = self.load_name(n.id, n)
                if isinstance(v, TupleValue):
                    tup = gast.Tuple(elts=[gast.ast_to_gast(ir.operand_node(x))
                                           for x in v.items], ctx=gast.Load())
                    names.extend(x.id for x in v.items if isinstance(x, ir.Name))
                    return tup
                if isinstance(v, LocalFunction):
                    raise self.error(UnsupportedSyntaxError,
                                     "a nested function used in a condition", n)
                if isinstance(v, ir.Name):
                    names.append(v.id)
                    return gast.Name(id=v.id, ctx=gast.Load(), annotation=None, type_comment=None)
                return gast.ast_to_gast(ir.operand_node(v))

            def visit_Attribute(inner, n):  # noqa: N805
                obj = self.static_value(n)
                if obj is not _UNRESOLVED and not isinstance(obj, LocalFunction):
                    path = numpy_path(obj)
                    if path:
                        return gast.ast_to_gast(sx.dotted(path))
                    v = self.constant(obj, n.attr)
                    return gast.ast_to_gast(ir.operand_node(v))
                inner.generic_visit(n)
                return n

            def visit_Lambda(inner, n):  # noqa: N805
                raise self.error(UnsupportedSyntaxError, "unsupported expression: lambda", n,
                                 construct="lambda", hint="use a def")

        node = Renamer().visit(node)
        return ir.NonDiff(gast.gast_to_ast(node), tuple(dict.fromkeys(names)))

    _line = 0


def _is_boolean(node):
    """An operand of ``and``/``or`` that surely is a bool (so the result is one)."""
    if isinstance(node, (gast.Compare, gast.BoolOp)):
        return all(_is_boolean(v) for v in node.values) if isinstance(node, gast.BoolOp) \
            else True
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        return True
    return isinstance(node, gast.Constant) and isinstance(node.value, bool)


def _prim_suffix(prim):
    if prim.render.startswith("binop:"):
        symbol = prim.render[6:]
        return {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow",
                "@": "matmul", "%": "mod"}[symbol]
    if prim.render == "unary:-":
        return "neg"
    if prim.render == "getitem":
        return "item"
    if prim.render == "attr:T":
        return "T"
    return getattr(prim.fn, "__name__", "call")


def normalize(parsed):
    """Normalize a :class:`ParsedFunction`; returns (ir.Function, bindings, namer)."""
    normalizer = Normalizer(parsed)
    function = normalizer.run()
    return function, normalizer.bindings, normalizer.namer
