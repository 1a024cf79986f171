"""Lower: expressions, to operands in A-normal form -- one primitive per
assignment, temporaries named after the assignment target (``h = np.tanh(h @ W
+ b)`` gives ``h_matmul``, ``h_add``); free names resolved to objects (NumPy
functions written ``np.<name>``, other objects bound as globals)."""

import ast
import operator
import types

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.desugar.pure_values import is_boolean
from tangent_ckpt.compiler.lower.calls import ATTRIBUTE_FUNCTIONS, INDEX_JOINS
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, LocalFunction, Lowered, MethodValue, ObjectValue, TupleValue,
    clone,
    local_names, to_source,
)
from tangent_ckpt.compiler.lower.container_values import (
    DictValue, container_node, is_container, leaves,
)
from tangent_ckpt.compiler.naming import NUMPY, numpy_path
from tangent_ckpt.compiler.lower.call_time_values import call_time_value
from tangent_ckpt.compiler.lower.observers import emit_observation
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED, note_attribute
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError
from tangent_ckpt.runtime import random_state

BINOPS = {
    gast.Add: (np.add, "+", "add"), gast.Sub: (np.subtract, "-", "sub"),
    gast.Mult: (np.multiply, "*", "mul"), gast.Div: (np.divide, "/", "div"),
    gast.Pow: (np.power, "**", "pow"), gast.MatMult: (np.matmul, "@", "matmul"),
    gast.Mod: (np.remainder, "%", "mod"),
}
NONDIFF_BINOPS = {gast.FloorDiv: "//"}
NONDIFF_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "itemsize", "nbytes"}


class ExpressionLowering:
    """Expressions, names and constants."""

    def __init__(self, lowering):
        self.lo = lowering

    def value(self, node, hint):
        """Normalize an expression: returns an operand, a Prim/NonDiff, a
        TupleValue, or a CompileTimeValue (a function, an object)."""
        if isinstance(node, Lowered):
            return node.value
        if isinstance(node, gast.Lambda):
            return self.lo.callables.lambda_value(node)
        if isinstance(node, gast.Constant):
            return ir.Const(node.value)
        if isinstance(node, gast.Name):
            return self.load_name(node.id, node)
        if isinstance(node, gast.BinOp):
            folded = self.lo.containers.static_scalar(node)  # i - 1, "W" + str(l + 1)
            if folded is not None:
                return ir.Const(folded)
            if isinstance(node.op, (gast.Add, gast.Mult)) and (
                    self.shape_tuple(node.left) or self.shape_tuple(node.right)):
                return self.nondiff(node, "a shape")  # x.shape + (k,): Python's tuples
            if type(node.op) in BINOPS:
                fn, symbol, opname = BINOPS[type(node.op)]
                left = self.value(node.left, hint)
                made = [left]   # ([x] * n made here: rows, which `+` would not concatenate)
                left = left if is_container(left) else self.atomize(left, hint)
                right = self.value(node.right, hint)
                made.append(right)
                right = right if is_container(right) else self.atomize(right, hint)
                if is_container(left) or is_container(right) or \
                        self.lo.run_time.is_rows(left) or self.lo.run_time.is_rows(right):
                    if any(isinstance(v, ir.Prim) and v.ref == "rt.repeat_row" for v in made):
                        raise self.lo.containers.refuse(
                            f"`{to_source(node)}` on a list built at run time", node,
                            "build the list with append, or an array with np.repeat")
                    return self.lo.containers.binop(left, right, node, hint)
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
        if isinstance(node, gast.BoolOp) and not all(is_boolean(v) for v in node.values):
            raise self.lo.error(UnsupportedSyntaxError, "`and`/`or` used as a value", node,
                                construct=to_source(node).strip(),
                                hint="it returns one of its operands; bind it to a name on "
                                     "its own line (y = a or b), or write np.where(...)")
        if isinstance(node, (gast.Compare, gast.BoolOp)):
            return self.nondiff(node)
        if isinstance(node, gast.JoinedStr):  # a str (a message): no derivative, as written
            return self.nondiff(node, "an f-string")
        if isinstance(node, gast.IfExp):
            target = self.lo.namer.fresh(hint if hint not in self.lo.current_scope.locals else
                                      f"{hint}_choice")
            cond = self.lo.statements.condition(node.test, node.lineno)
            body = self._branch_value(node.body, target, hint, node.lineno)
            orelse = self._branch_value(node.orelse, target, hint, node.lineno)
            self.lo.emit(ir.If(cond, body, orelse, node.lineno))
            return ir.Name(target)
        if isinstance(node, (gast.Tuple, gast.List)):
            items = []
            for k, e in enumerate(node.elts):
                if isinstance(e, gast.Starred):
                    raise self.lo.error(UnsupportedSyntaxError, "starred expression", node,
                                     construct="starred expression",
                                     hint="build the tuple from explicit items")
                v = self.value(e, f"{hint}_{k}")
                kept = isinstance(v, (TupleValue, ObjectValue))  # [Affine(W1, b1), ...]
                items.append(v if kept else self.atomize(v, f"{hint}_{k}"))
            return TupleValue(items, is_list=isinstance(node, gast.List))
        if isinstance(node, gast.Attribute):
            return self.attribute(node, hint)
        if isinstance(node, gast.Subscript):
            return self.subscript(node, hint)
        if isinstance(node, gast.Call):
            value = self.lo.containers.call(node, hint)
            return value if value is not None else self.lo.calls.call(node, hint)
        if isinstance(node, gast.Dict):
            return self.lo.containers.dict_literal(node, hint)
        if isinstance(node, (gast.ListComp, gast.GeneratorExp, gast.DictComp, gast.SetComp)):
            # desugar/comprehension_loops.py writes the others as the loop Python runs
            kind = {gast.ListComp: "a list comprehension", gast.DictComp: "a dict comprehension",
                    gast.SetComp: "a set comprehension"}.get(type(node), "a generator expression")
            raise self.lo.error(
                UnsupportedSyntaxError, f"{kind} where it is not written as a loop before its "
                f"statement (in a lambda, after a method call on an attribute's object, in "
                f"x[i] += ...)", node, construct=kind.split(" ", 1)[1],
                hint="compute it in a statement of its own before (items = [f(x) for x in "
                     "xs]) and use the variable")
        kinds = {gast.Lambda: "lambda", gast.ListComp: "list comprehension",
                 gast.GeneratorExp: "generator expression", gast.DictComp: "dict comprehension",
                 gast.SetComp: "set comprehension", gast.Dict: "dict literal",
                 gast.Yield: "yield", gast.YieldFrom: "yield", gast.Await: "await",
                 gast.Starred: "starred expression", gast.NamedExpr: "assignment expression",
                 gast.JoinedStr: "f-string"}
        name = kinds.get(type(node), type(node).__name__)
        raise self.lo.error(UnsupportedSyntaxError, f"unsupported expression: {name}", node,
                         construct=name, hint="rewrite it with loops and NumPy calls")

    def shape_tuple(self, node):
        """Is ``node`` written as an array's shape, or a slice of one (``x.shape``,
        ``np.shape(x)[1:]``): a tuple of ints, which ``+`` joins and ``*``
        repeats?"""
        if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
            node = node.value
        if isinstance(node, gast.Attribute):
            return node.attr == "shape" and not isinstance(
                self.static_value(node.value), types.ModuleType)
        return isinstance(node, gast.Call) and self.static_value(node.func) is np.shape

    def _branch_value(self, node, target, hint, line):
        saved = self.lo.out
        self.lo.out = []
        v = self.value(node, hint)
        if isinstance(v, TupleValue):
            raise self.lo.error(UnsupportedSyntaxError, "conditional expression of tuples", node)
        if isinstance(v, CompileTimeValue):  # f = (lambda v: 2 * v) if c else g
            raise self.lo.error(UnsupportedSyntaxError, "a function or object chosen at run "
                                "time by a conditional expression", node,
                                construct=to_source(node).strip(),
                                hint="call each in its branch: y = f(x) if c else g(x)")
        self.lo.assignments.emit_value(target, v, line)
        result, self.lo.out = self.lo.out, saved
        return result

    def atomize(self, value, hint):
        """Make ``value`` an operand, emitting a temporary assignment if needed."""
        if isinstance(value, (ir.Name, ir.Const)):
            return value
        if isinstance(value, TupleValue):
            raise TransformError("a tuple or list used where an array is expected",
                                 filename=self.lo.current_scope.parsed.filename,
                                 lineno=self.lo.line or None, construct="tuple value",
                                 hint="for a list of arrays use np.stack(...); unpack a "
                                      "tuple into variables first")
        if isinstance(value, ir.Prim):
            suffix = _prim_suffix(value)
            name = self.lo.namer.fresh(f"{hint}_{suffix}" if not hint.endswith("_" + suffix)
                                    else hint)
        else:
            name = self.lo.namer.fresh(f"{hint}_value" if not hint.endswith("_value") else hint)
        self.lo.emit(ir.Assign(name, value, self.lo.line))
        return ir.Name(name)

    def load_name(self, user_name, node):
        scope = self.lo.current_scope
        while scope is not None:
            if user_name in scope.tuples:
                return scope.tuples[user_name]
            if user_name in scope.rename:
                return scope.rename[user_name]
            if user_name in scope.functions:
                fn = scope.functions[user_name]
                return fn if isinstance(fn, CompileTimeValue) else self.constant(fn, user_name)
            if user_name in scope.locals:
                if scope.identity:
                    return ir.Name(user_name)
                name = self.lo.namer.fresh(user_name)
                scope.rename[user_name] = ir.Name(name)
                return ir.Name(name)
            scope = scope.parent
        parsed = self.lo.current_scope.parsed
        obj = parsed.resolve(user_name)
        if obj is _UNRESOLVED:
            raise self.lo.error(TransformError, f"name '{user_name}' is not defined", node,
                             construct=user_name)
        if type(obj) is float and user_name not in parsed.closure and \
                user_name in parsed.globals:
            return call_time_value(self.lo, obj, user_name, parsed.globals)
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
            return ir.Name(NUMPY)
        self.lo.objects.outside.refuse_as_value(obj)  # CELL.h = h in the code, print(CELL)
        key = id(obj)
        if key in self.lo.binding_names:
            return ir.Name(self.lo.binding_names[key])
        if hint not in self.lo.bindings and \
                self.lo.parsed.resolve(hint) is obj and \
                hint not in local_names(self.lo.parsed.node):
            name = hint  # the user's own global name (reserved: no generated name uses it)
        else:
            name = self.lo.namer.fresh(hint)
        self.lo.bindings[name] = obj
        self.lo.binding_names[key] = name
        return ir.Name(name)

    def static_value(self, node):
        """The object a Name/Attribute chain of globals denotes, or _UNRESOLVED."""
        if isinstance(node, Lowered):  # an operand, or a function or object
            return _UNRESOLVED if isinstance(node.value, (ir.Name, ir.Const, ir.Prim, ir.NonDiff,
                                                          ir.Seq, TupleValue)) else node.value
        if isinstance(node, gast.Name):
            scope = self.lo.current_scope
            while scope is not None:
                if node.id in scope.functions:
                    self.lo.container_loops.check_object_read(node, scope)
                    return scope.functions[node.id]
                if node.id in scope.locals or node.id in scope.rename:
                    return _UNRESOLVED
                scope = scope.parent
            return self.lo.current_scope.parsed.resolve(node.id)
        if isinstance(node, gast.Subscript):  # layers[0] of a wrt list of objects
            return self._object_item(node)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "super" and self.static_value(node.func) is super:
            raise self.lo.error(UnsupportedSyntaxError, "super() in a method that desugar "
                                "did not inline (of an object the compiler keeps as an "
                                "object, or called in a comprehension)", node,
                                construct=to_source(node),
                                hint="call the method on an object made under one name, "
                                     "in a statement of its own")
        if isinstance(node, gast.Attribute):
            base = self.static_value(node.value)
            if isinstance(base, ObjectValue):
                return self.lo.objects.class_attribute(base, node.attr)
            if base is _UNRESOLVED and isinstance(node.value, gast.Name):
                held = self._held_tuple(node.value.id)
                if isinstance(held, TupleValue) and held.cls is not None:  # pair.total()
                    return self.lo.objects.named_tuple_method(held, node.attr)
            if base is _UNRESOLVED or isinstance(base, CompileTimeValue):
                return _UNRESOLVED
            self.lo.objects.outside.refuse_renamed(base, node.attr, node)
            assigned = self.lo.objects.outside.attribute_of(base, node.attr)
            if assigned is not None:  # CELL.h = h in the code: a variable from there on
                return assigned if isinstance(assigned, CompileTimeValue) else _UNRESOLVED
            prop = self.lo.objects.static_property(base, node.attr)
            if prop is not None:  # MODEL.scaled_W: its getter is inlined
                return prop
            self.lo.objects.outside.note_read(base, node.attr)
            value = getattr(base, node.attr, _UNRESOLVED)
            note_attribute(base, node.attr, value)  # MODEL.W rebound: compile again
            return value
        return _UNRESOLVED

    def _held_tuple(self, user_name):
        """The container a name holds (a TupleValue, DictValue), or None."""
        scope = self.lo.current_scope
        while scope is not None:
            if user_name in scope.tuples:
                return scope.tuples[user_name]
            if user_name in scope.rename or user_name in scope.functions or \
                    user_name in scope.locals:
                return None
            scope = scope.parent
        return None

    def _object_item(self, node):
        """The object ``layers[0]`` (a constant index into a container of
        objects) denotes, or _UNRESOLVED."""
        key = node.slice.value if isinstance(node.slice, gast.Constant) else \
            self._unrolled_constant(node.slice)  # layers[i] in an unrolled loop
        if not isinstance(node.value, gast.Name) or key is _UNRESOLVED:
            return _UNRESOLVED
        scope = self.lo.current_scope
        while scope is not None and node.value.id not in scope.tuples:
            if node.value.id in scope.rename or node.value.id in scope.functions:
                return _UNRESOLVED
            scope = scope.parent
        container = None if scope is None else scope.tuples[node.value.id]
        if isinstance(container, DictValue):
            item = container.items[container.keys.index(key)] if key in container.keys \
                else None
        elif isinstance(container, TupleValue) and isinstance(key, int) and \
                -len(container.items) <= key < len(container.items):
            item = container.items[key]
        else:
            item = None
        return item if isinstance(item, ObjectValue) else _UNRESOLVED

    def _unrolled_constant(self, node):
        """The constant a loop target of an unrolled loop is bound to, or _UNRESOLVED."""
        if isinstance(node, gast.Name):
            bound = self.lo.current_scope.rename.get(node.id)
            if isinstance(bound, ir.Const):
                return bound.value
        return _UNRESOLVED

    def object_attribute_value(self, node):
        """The value held by ``obj.attr`` (or ``obj.part.attr``) where ``obj`` is an
        object made in the function, whose attributes are variables; None for
        anything else (a property, a global, an argument's attribute)."""
        assigned = self.lo.objects.outside.value_of(node)
        if assigned is not None:  # CELL.h, assigned in the code on an object made outside
            return assigned
        if isinstance(node.value, gast.Name):
            if not isinstance(node.value.ctx, gast.Load):
                return None
            base = self.load_name(node.value.id, node.value)
        elif isinstance(node.value, gast.Attribute):
            base = self.object_attribute_value(node.value)
        else:
            return None
        if isinstance(base, ObjectValue):
            return base.attributes.get(node.attr)
        return None

    def attribute(self, node, hint):
        if node in self.lo.parsed.read_when_called:  # CELL_h = CELL.h, at the top
            operand = self.bind(self.static_value(node.value), node.value.id)
            number = self.lo.parsed.read_when_called.get(node)
            if isinstance(number, tuple):  # CELL.t += 1 rebinds a number, changes an array
                written, line = number
                emit_observation(self.lo, sx.rt("refuse_outside_in_place",
                                                sx.attr(sx.name(operand.id), node.attr),
                                                written=sx.const(written), line=sx.const(line)),
                                 (operand.id,), line)
            return ir.Prim(getattr, [operand], {}, f"attr:{node.attr}",
                           ref=f"{operand.id}.{node.attr}")
        if node.attr == "__dict__":  # CELL.__dict__: the object's own attributes
            owner = self.lo.objects.outside.owner(node.value)
            if owner is not None and not isinstance(owner, ObjectValue):
                self.lo.objects.outside.note_attribute_dict(owner, node)
        obj = self.static_value(node)
        if isinstance(obj, MethodValue) and obj.is_property:
            return self.lo.objects.read_property(obj, node, hint)
        if obj is not _UNRESOLVED:
            return obj if isinstance(obj, CompileTimeValue) else self.constant(obj, node.attr)
        assigned = self.lo.objects.outside.value_of(node)
        if assigned is not None:  # CELL.h, assigned in the code on an object made outside
            return assigned
        base = self.value(node.value, hint)
        if isinstance(base, ObjectValue):  # model.W, a property
            return self.lo.objects.object_attribute(base, node, hint)
        if isinstance(base, TupleValue) and base.cls is not None:  # mixture.mu
            return self.lo.objects.named_field(base, node)
        base = self.atomize(base, hint)
        if node.attr == "T":
            return ir.Prim(np.transpose, [base], {}, "attr:T")
        if node.attr in ATTRIBUTE_FUNCTIONS:  # x.real is np.real(x)
            fn = ATTRIBUTE_FUNCTIONS[node.attr]
            return ir.Prim(fn, [base], {}, "call", ref=numpy_path(fn))
        if node.attr in NONDIFF_ATTRIBUTES:
            return ir.NonDiff(sx.attr(ir.operand_node(base), node.attr), ir.operand_names(base))
        # params.W of an argument (self.W in tc.grad(model.loss)): read when the code
        # runs, without a derivative -- refused by the transform where differentiated
        self.lo.objects.outside.note_run_time_read(node)
        return ir.Prim(getattr, [base], {}, f"attr:{node.attr}", ref=to_source(node))

    def subscript(self, node, hint):
        joined = INDEX_JOINS.get(id(self.static_value(node.value)))
        if joined is not None:       # np.r_[a, b] and np.c_[a, b]: calls in disguise
            return self.lo.calls.index_join(joined, node, hint)
        base = self.value(node.value, hint)
        if isinstance(base, TupleValue):
            return self.lo.containers.subscript(base, node, hint)
        if self.lo.run_time.is_dict(base):
            return self.lo.run_time.dict_get(base, node, hint)
        self.lo.run_time.refuse_nested(base, "an item", node)  # rows[k]: a list in Python
        base = self.atomize(base, hint)
        index = self.index(node.slice, hint)
        return ir.Prim(operator.getitem, [base, index], {}, "getitem")

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
            v = self.value(n, f"{hint}_index")
            if _index_display(v):  # r = [e, e + 1]; K[:, r] (t = (0, 1); M[t]): as written
                names.extend(i.id for i in v.items if isinstance(i, ir.Name))
                elts = [ir.operand_node(i) for i in v.items]
                return ast.List(elts=elts, ctx=ast.Load()) if v.is_list else \
                    ast.Tuple(elts=elts, ctx=ast.Load())
            v = self.atomize(v, f"{hint}_index")
            if isinstance(v, ir.Name):
                names.append(v.id)
            return ir.operand_node(v)

        tree = part(node)
        simple = isinstance(node, (gast.Name, gast.Constant)) and not (
            isinstance(node, gast.Constant) and node.value is Ellipsis)
        plain = simple or (len(names) == 1 and isinstance(tree, ast.Name) and tree.id == names[0])
        return ir.Index(tree, tuple(names), plain)

    def nondiff(self, node, where="a condition"):
        """Keep ``node`` as written, with local names renamed and globals bound
        (``where``: what the expression is, for a refusal's message); an already
        lowered operand in it (``Lowered``) is read from its variable."""
        for sub in gast.walk(node):  # `if (y := f(x)) > 0:` would bind y behind our back
            if isinstance(sub, gast.NamedExpr):
                raise self.lo.error(UnsupportedSyntaxError, "unsupported expression: assignment "
                                 "expression (:=)", sub, construct="assignment expression",
                                 hint="assign the value on its own line first")
        names = []
        node = clone(node)

        class Renamer(gast.NodeTransformer):
            def visit_Name(inner, n):  # noqa: N805
                if not isinstance(n.ctx, gast.Load):
                    return n
                return inner.operand(self.load_name(n.id, n), n)

            def operand(inner, v, n):  # noqa: N805
                """The syntax that reads ``v``, the value of ``n`` (a name or an
                attribute of an object made in the function)."""
                if isinstance(v, TupleValue):
                    held = [x for x in leaves(v) if isinstance(x, ObjectValue)]
                    if held:  # print(layers[0]), print(layers): objects are no values
                        raise self.lo.object_as_value(held[0], getattr(n, "lineno", None))
                    names.extend(x.id for x in leaves(v) if isinstance(x, ir.Name))
                    return gast.ast_to_gast(container_node(v))
                if isinstance(v, LocalFunction):
                    raise self.lo.error(UnsupportedSyntaxError,
                                        f"a function defined inside another, named in {where} "
                                        "where it may not run (a short-circuit, a conditional "
                                        "expression, a comprehension)" if where != "a condition"
                                        else "a nested function used in a condition", n,
                                        construct=to_source(n).strip(),
                                        hint="call it on a line of its own (v = f(x)) and use v"
                                        if where != "a condition" else
                                        "call it and test its result")
                if isinstance(v, ir.Name):
                    names.append(v.id)
                    return gast.Name(id=v.id, ctx=gast.Load(), annotation=None, type_comment=None)
                if isinstance(v, ObjectValue):  # print(params)
                    raise self.lo.object_as_value(v, getattr(n, "lineno", None))
                return gast.ast_to_gast(ir.operand_node(v))

            def visit_Attribute(inner, n):  # noqa: N805
                obj = self.static_value(n)
                if obj is not _UNRESOLVED and not isinstance(obj, LocalFunction):
                    path = numpy_path(obj)
                    if path:
                        return gast.ast_to_gast(sx.dotted(path))
                    v = self.constant(obj, n.attr)
                    return gast.ast_to_gast(ir.operand_node(v))
                held = self.object_attribute_value(n)
                if isinstance(held, (ir.Name, ir.Const, TupleValue, ObjectValue)):
                    # `if self.n > 2:`: the attribute's variable
                    return inner.operand(held, n)
                inner.generic_visit(n)
                return n

            def visit_Lowered(inner, n):  # noqa: N805
                return inner.operand(n.value, n)

            def visit_Lambda(inner, n):  # noqa: N805
                raise self.lo.error(UnsupportedSyntaxError, "unsupported expression: lambda", n,
                                 construct="lambda", hint="use a def")

        node = gast.gast_to_ast(Renamer().visit(node))
        draws = any(isinstance(n, ast.Name) and n.id in self.lo.bindings and
                    random_state.uses_global_state(self.lo.bindings[n.id])
                    for n in ast.walk(node))
        return ir.NonDiff(node, tuple(dict.fromkeys(names)), draws=draws)


def _prim_suffix(prim):
    if prim.render.startswith("binop:"):
        symbol = prim.render[6:]
        return {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow",
                "@": "matmul", "%": "mod"}[symbol]
    if prim.render == "unary:-":
        return "neg"
    if prim.render == "getitem":
        return "item"
    if prim.render.startswith("attr:"):
        return prim.render[len("attr:"):]
    return getattr(prim.fn, "__name__", "call")


def _index_display(value):
    """A list or tuple the lowering holds (``r = [e, e + 1]``) of names and integer
    constants: written as the display in a subscript, it indexes as Python's
    object does (a list: one fancy index; a tuple: one index per axis)."""
    return isinstance(value, TupleValue) and not isinstance(value, DictValue) and \
        bool(value.items) and all(
            isinstance(i, ir.Name) or isinstance(i, ir.Const) and type(i.value) in (int, bool)
            for i in value.items)
