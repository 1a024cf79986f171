"""Lower: containers of static structure -- tuples, lists and dicts whose length
and keys are known when the function is lowered.

They are scalarized: each element is an operand of its own (a variable named
after the container and the element's place, ``params_0_1``, ``d_w``), so the
rest of the compiler only ever sees arrays and numbers.  A container's structure
is its kind, length, keys and the structure of its elements; rebinding a name to
a container of the same structure reuses its element variables, so a container
updated in a loop or a branch is carried like any variable.

What follows the structure at lower time: literals (``[(W1, b1), (W2, b2)]``,
``{'w': w}``, ``dict(w=w)``), indexing with constants and slices (``params[0]``,
``params[1:]``, ``d['w']``), ``len``, ``+`` and ``* k`` with a constant ``k``,
``.get``, ``.items()``, ``.keys()``, ``.values()``, ``.copy()``, ``append`` and
``extend`` outside loops, writes ``d['w'] = v`` with a constant key, ``for``
loops and comprehensions over them (unrolled, one copy of the body per
element).  What does not -- an index or key only known at run time, a container
whose length changes inside a loop -- is refused with the user's line.
The values themselves (``TupleValue`` / ``DictValue``, their structure, leaves
and names) are in ``container_values.py``.
"""


import operator

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.desugar.pure_values import only_computes
from tangent_ckpt.compiler.lower.container_values import (
    DictValue, is_container, iteration_items, key_part, leaves, text_as_tuple,
)
from tangent_ckpt.compiler.lower.expressions import BINOPS
from tangent_ckpt.compiler.lower.scopes import MethodValue, ObjectValue, TupleValue, to_source
from tangent_ckpt.compiler.frontend.static_keys import static_key
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError
from tangent_ckpt.runtime.rows import repeat_row

# integer arithmetic (and str + str) folded when every operand is known
#: the integer and string operations folded when their operands are known
FOLDED = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
           gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod}


class UserLine:
    """A place in the user's file for an error raised without a syntax node."""

    def __init__(self, lineno):
        self.lineno = lineno


class ContainerLowering:
    """Reading, building and updating containers of static structure."""

    def __init__(self, lowering):
        self.lo = lowering
        self.loop_indices = set()  # user names bound by `for t in range(...)`: integers
        self.constant_variables = {}  # variable -> the int or str constant it was last bound to

    # --- errors -------------------------------------------------------------------
    def refuse(self, what, node, hint):
        construct = to_source(node) if isinstance(node, (gast.expr, gast.stmt)) else what
        at = node if getattr(node, "lineno", None) else UserLine(self.lo.line)
        return self.lo.error(UnsupportedSyntaxError, what, at, hint=hint, construct=construct)

    def key_value(self, node, hint):
        """A constant key: a literal, or a name bound to a constant (an unrolled loop's key),
        or arithmetic of those (``obs[i - 1]``, ``p["W" + str(l + 1)]``)."""
        key = static_key(node)
        if key is not None:
            return key
        key = self.static_scalar(node)
        if key is not None:
            return key
        value = self.lo.expressions.value(node, hint)
        if isinstance(value, ir.Const) and isinstance(value.value, (int, str)) and \
                not isinstance(value.value, bool):
            return value.value
        return None

    # --- building -------------------------------------------------------------
    def dict_literal(self, node, hint):
        keys, items = [], []
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise self.refuse("`**` inside a dict literal", node,
                                  "list the keys one by one")
            key = self.key_value(k, hint)
            if key is None:
                raise self.refuse(f"a dict key that is not a constant ({to_source(k)})", node,
                                  "use constant keys ('w', 0); for values indexed by a loop "
                                  "variable use an array or a list built with append")
            self._put(keys, items, key, self.element(v, f"{hint}_{key_part(key)}"))
        return DictValue(keys, items)

    def dict_call(self, node, hint):
        """``dict(w=w, b=b)``, ``dict(d)``, ``dict(d, w=w)``, ``dict()``."""
        keys, items = [], []
        if len(node.args) > 1:
            raise self.refuse("dict() with more than one positional argument", node,
                              "pass a dict and keywords")
        if node.args:
            base = self.lo.expressions.value(node.args[0], hint)
            if isinstance(base, DictValue):
                keys, items = list(base.keys), list(base.items)
            elif isinstance(base, TupleValue) and all(
                    isinstance(p, TupleValue) and len(p.items) == 2 and
                    isinstance(p.items[0], ir.Const) for p in base.items):
                for pair in base.items:  # dict(zip(names, values)) over constant names
                    self._put(keys, items, pair.items[0].value, pair.items[1])
            else:
                raise self.refuse("dict() of a value whose keys are not known", node,
                                  "build the dict from a literal or constant keys")
        for kw in node.keywords:
            self._put(keys, items, kw.arg, self.element(kw.value, f"{hint}_{kw.arg}"))
        return DictValue(keys, items)

    @staticmethod
    def _put(keys, items, key, item):
        if key in keys:
            items[keys.index(key)] = item
        else:
            keys.append(key)
            items.append(item)

    def element(self, node, hint):
        """An item of a container built in the code: a container or an object made
        in the code (``[Opt(w) for w in ws]``, ``{"opt": opt}``) is held as it is
        (its attributes stay variables), any other value in a variable."""
        value = self.lo.expressions.value(node, hint)
        if is_container(value) or isinstance(value, ObjectValue) and not value.given:
            return value
        return self.lo.expressions.atomize(value, hint)

    def concatenate(self, left, right, node):
        if isinstance(left, DictValue) or isinstance(right, DictValue):
            raise self.refuse("`+` of dicts", node, "use dict(a, **b) or a dict literal")
        return TupleValue(list(left.items) + list(right.items))

    def repeat(self, seq, times, node):
        if isinstance(seq, DictValue):
            raise self.refuse("`*` of a dict", node, "repeat a list instead")
        if not (isinstance(times, ir.Const) and isinstance(times.value, int)):
            if len(seq.items) != 1 or is_container(seq.items[0]):
                return None
            # [h0] * n: n rows equal to h0, written row by row later (hs[t] = ...)
            return ir.Prim(repeat_row, [seq.items[0], self.lo.expressions.atomize(times, "n")],
                           {}, "call", ref="rt.repeat_row")
        return TupleValue(list(seq.items) * max(times.value, 0))

    # --- reading --------------------------------------------------------------
    def subscript(self, base, node, hint):
        """``c[k]`` with a constant ``k`` (or a constant slice of a sequence)."""
        if isinstance(node.slice, gast.Slice) and not isinstance(base, DictValue):
            bounds = []
            for part in (node.slice.lower, node.slice.upper, node.slice.step):
                bounds.append(None if part is None else self.key_value(part, hint))
                if part is not None and not isinstance(bounds[-1], int):
                    raise self.refuse("a list or tuple sliced with bounds known only at run "
                                      "time", node, "slice with constants, or use an array")
            return TupleValue(base.items[slice(*bounds)])
        key = self.key_value(node.slice, hint)
        if key is None:
            kind = "dict" if isinstance(base, DictValue) else "list or tuple"
            raise self.refuse(f"a {kind} indexed by a value known only at run time "
                              f"({to_source(node)})", node,
                              "index containers with constants, or loop over them "
                              "(for x in xs); for values indexed by a loop variable use an "
                              "array (np.zeros((n, ...)), x[t] = ...) or a list built with "
                              "append")
        return self.lookup(base, key, node)

    def lookup(self, base, key, node, default=None):
        if isinstance(base, DictValue):
            if key in base.keys:
                return base.items[base.keys.index(key)]
            if default is not None:
                return default
            raise self.refuse(f"key {key!r} is not in the dict", node,
                              "the dict's keys are " + ", ".join(map(repr, base.keys)))
        if not isinstance(key, int) or not -len(base.items) <= key < len(base.items):
            raise self.refuse(f"index {key!r} is out of range for a container of length "
                              f"{len(base.items)}", node, "check the index")
        return base.items[key]

    def method(self, base, node, hint):
        """``d.get(k[, default])``, ``d.items()``, ``d.keys()``, ``d.values()``,
        ``c.copy()``, ``c.index(x)`` of constants; None for other methods."""
        name = node.func.attr
        if name == "copy" and not node.args:
            if isinstance(node.func.value, gast.Tuple):  # (1.0, 2.0).copy()
                raise self.lo.error(TransformError, "a tuple has no method .copy(): Python "
                                    "raises AttributeError here", node,
                                    construct=to_source(node),
                                    hint="a tuple never changes: use it as it is")
            return base
        if isinstance(base, DictValue):
            if name == "items":
                return TupleValue([TupleValue([ir.Const(k), v])
                                   for k, v in zip(base.keys, base.items)])
            if name == "keys":
                return TupleValue([ir.Const(k) for k in base.keys])
            if name == "values":
                return TupleValue(list(base.items))
            if name == "get":
                key = self.key_value(node.args[0], hint) if node.args else None
                if key is None:
                    raise self.refuse("dict .get() with a key known only at run time", node,
                                      "use a constant key")
                if key in base.keys:
                    if len(node.args) > 1 and not only_computes(
                            node.args[1], self.lo.expressions.static_value):
                        # an argument: Python evaluates the default (a draw) anyway
                        self.element(node.args[1], hint)
                    return base.items[base.keys.index(key)]
                if len(node.args) > 1:
                    return self.element(node.args[1], hint)
                return ir.Const(None)
        kind = "dict" if isinstance(base, DictValue) else "list or tuple"
        raise self.refuse(f"method .{name}() of a {kind}", node,
                          "supported: .get, .items, .keys, .values, .copy, and "
                          ".append/.extend as statements")

    # --- updating -------------------------------------------------------------
    def with_item(self, base, key, item, node):
        """``base`` after ``base[key] = item`` (a constant key)."""
        if isinstance(base, DictValue):
            keys, items = list(base.keys), list(base.items)
            self._put(keys, items, key, item)
            return DictValue(keys, items)
        items = list(base.items)
        self.lookup(base, key, node)
        items[key] = item
        return TupleValue(items)

    def as_sequence(self, value, hint):
        """A container passed to a NumPy function: the sequence operand NumPy sees
        (a dict is refused: NumPy would see an object array)."""
        if isinstance(value, DictValue):
            raise self.refuse("a dict passed to a NumPy function", None,
                              "pass d['key'] or list(d.values())")
        items = []
        for item in value.items:
            if is_container(item):
                # a nested list is np.stack of its items, as NumPy builds it
                inner = ir.Prim(np.stack, [self.as_sequence(item, hint)], {}, "call",
                                ref="np.stack")
                items.append(self.lo.expressions.atomize(inner, hint))
            else:
                items.append(item)
        return ir.Seq(tuple(items), "tuple")


    def as_array(self, value, node, hint):
        """A list or tuple where NumPy takes an array (``a[i] = (x, 0.0)``,
        ``a + [x, y]``): the array ``np.asarray`` makes of it -- ``np.array`` of
        the constant when every item is a number, else ``np.stack`` of its
        items, as ``np.array([x, y])`` is lowered (a nested list: ``np.stack`` of
        each inner one).  Items of different shapes fail when the code runs, as
        they do in NumPy."""
        if isinstance(value, DictValue) or any(
                isinstance(x, DictValue) for x in _nested(value)):
            raise self.refuse("a dict used where an array is expected", node,
                              "pass d['key'] or np.stack(list(d.values()))")
        held = [x for x in leaves(value) if not isinstance(x, (ir.Name, ir.Const))]
        if held:
            raise self.refuse("a list or tuple holding an object used where an array is "
                              "expected", node, "put arrays or numbers in it")
        numbers = all(isinstance(x, ir.Const) and
                      isinstance(x.value, (bool, int, float, complex)) for x in leaves(value))
        if numbers:
            made = ir.Prim(np.array, [ir.Const(_as_tuples(value))], {}, "call", ref="np.array")
            return self.lo.expressions.atomize(made, hint)
        if any(isinstance(x, ir.Const) and not isinstance(x.value, (bool, int, float, complex))
               for x in leaves(value)):
            raise self.refuse("a list or tuple of other values than numbers and arrays "
                              "used where an array is expected", node,
                              "put arrays or numbers in it")
        stacked = ir.Prim(np.stack, [self.as_sequence(value, hint)], {}, "call", ref="np.stack")
        return self.lo.expressions.atomize(stacked, hint)

    def require_numpy(self, operand, operator, line):
        """Run ``rt.require_numpy_operand`` on ``operand`` (a name) in the forward
        sweep: the list it meets is read as an array only when it is a NumPy
        array (runtime/assertions.py).  An observation (as observers.py emits
        them) that the analysis drops where it proves the operand an array
        (analyze/numpy_operands.py)."""
        if not isinstance(operand, ir.Name):
            return
        if type(self.lo.bindings.get(operand.id)) is np.ndarray:
            return  # a module-level array (rebound, the gradient is compiled again)
        check = sx.rt("require_numpy_operand", sx.name(operand.id), sx.const(operator),
                      line=sx.const(line))
        local = () if operand.id in self.lo.bindings else (operand.id,)
        self.lo.emit(ir.Assign(self.lo.namer.fresh("observed"), ir.NonDiff(check, local), line,
                               observes=True, numpy_operand=(operand.id, operator)))

    def operand(self, node, hint):
        """An argument of a NumPy function: an operand, or a container as the
        sequence NumPy sees (``np.zeros(shape)`` with ``shape = (n,)``)."""
        value = self.lo.expressions.value(node, hint)
        if is_container(value):
            return self.as_sequence(value, hint)
        return self.lo.expressions.atomize(value, hint)

    def binop(self, left, right, node, hint="value"):
        """``a + b`` of sequences, ``[x] * k`` with a constant ``k`` (or ``[x] * n``:
        rows); a sequence and a variable (``a + [x, y]``): NumPy's operator."""
        if self.lo.run_time.is_rows(left) and isinstance(node.op, gast.Add) and \
                isinstance(right, TupleValue) and not isinstance(right, DictValue) and \
                right.is_list and not any(is_container(v) for v in right.items) and \
                not self.lo.run_time.is_nested(left):
            return self.lo.run_time.concatenated(left, right.items, hint)  # errs + [e]
        if self.lo.run_time.is_rows(left) or self.lo.run_time.is_rows(right):
            raise self.refuse(f"`{to_source(node)}` on a list built at run time", node,
                              "build the list with append in the loop; for arithmetic on "
                              "its items use np.stack(...) explicitly")
        if isinstance(node.op, gast.Add) and is_container(left) and is_container(right):
            return self.concatenate(left, right, node)
        variable = is_container(left) != is_container(right) and \
            isinstance(left if is_container(right) else right, ir.Name)
        if isinstance(node.op, gast.Mult):
            seq, times = (left, right) if is_container(left) else (right, left)
            if isinstance(times, ir.Const) and not isinstance(times.value, int):
                raise self.refuse(f"a list or tuple in arithmetic ({to_source(node)})", node,
                                  "NumPy arithmetic needs an array: np.stack(...) the list "
                                  "first")
            if not is_container(times):
                repeated = self.repeat(seq, times, node)
                if repeated is not None:
                    return repeated
                written = node.right if is_container(left) else node.left
                if variable and not self.surely_int(written):
                    return self.with_array(left, right, node, hint)  # [x, y] * a
                raise self.refuse("a list repeated a number of times known only at run time "
                                  f"({to_source(node)})", node,
                                  "build an array instead: np.zeros((n, ...)) or "
                                  "np.repeat(x[None], n, axis=0), then write rows x[t] = ...")
        elif variable:
            return self.with_array(left, right, node, hint)
        raise self.refuse(f"operator on a list, tuple or dict ({to_source(node)})", node,
                          "for element-wise arithmetic use arrays (np.stack(...))")

    def surely_int(self, node):
        """A loop counter of ``range`` or ``len(...)``: ``[x, y] * n`` repeats."""
        if isinstance(node, gast.Name):
            return node.id in self.loop_indices
        return isinstance(node, gast.Call) and \
            self.lo.expressions.static_value(node.func) in (len, int)

    def with_array(self, left, right, node, hint):
        """``a + [x, y]``, ``[x, y] * a``: an operator between a variable and a
        list or tuple is NumPy's when the variable holds a NumPy array: the list
        becomes the array np.asarray makes of it (dtype and broadcasting as NumPy
        gives them).  Python gives it another meaning for a list (``+``
        concatenates), an int (``*`` repeats) or a number (an error), so the
        variable is checked when the code runs (``rt.require_numpy_operand``)."""
        fn, symbol, _ = BINOPS[type(node.op)]
        if is_container(left):
            other, left = right, self.as_array(left, node, hint)
        else:
            other, right = left, self.as_array(right, node, hint)
        self.require_numpy(other, symbol, getattr(node, "lineno", self.lo.line))
        return ir.Prim(fn, [left, right], {}, f"binop:{symbol}")

    def call(self, node, hint):
        """Builtins and methods that act on containers; None for any other call."""
        func = node.func
        if isinstance(func, gast.Attribute):
            if not self.holds_container(func.value) or isinstance(func.value, gast.Constant):
                return None
            base = self.lo.expressions.value(func.value, hint)
            if getattr(base, "cls", None) is not None:  # a named tuple's
                if isinstance(self.lo.expressions.static_value(func), MethodValue):
                    return None  # pair.total(): a method of its class, inlined
                self.lo.objects.named_field(base, func)  # pair._replace(): refused
            return self.method(base, node, hint)
        fn = self.lo.expressions.static_value(func)
        if fn is dict:
            return self.dict_call(node, hint)
        if fn in (len, sum, list, tuple, zip, enumerate, reversed) and node.args and \
                all(self.holds_container(a) or self.constant_range(a) is not None
                    for a in node.args[:1]) and not node.keywords:
            values = [self.constant_range(a) or text_as_tuple(self.lo.expressions.value(a, hint))
                      for a in node.args]
            first = values[0]
            if fn is len:
                return ir.Const(len(first.items))
            if fn in (list, tuple):
                return TupleValue(iteration_items(first))
            if fn is reversed:
                return TupleValue(iteration_items(first)[::-1])
            if fn is enumerate:   # enumerate(ws, 1): counted from its start
                start = values[1] if len(values) > 1 else ir.Const(0)
                if not (isinstance(start, ir.Const) and type(start.value) is int):
                    return None
                return TupleValue([TupleValue([ir.Const(k), v]) for k, v in
                                   enumerate(iteration_items(first), start.value)])
            if fn is zip:
                if not all(is_container(v) for v in values):
                    return None
                columns = [iteration_items(v) for v in values]
                return TupleValue([TupleValue(list(row)) for row in zip(*columns)])
            return self.total(iteration_items(first), values[1:], node, hint)
        return None

    def total(self, items, start, node, hint):
        """``sum(xs)``: ``start + xs[0] + xs[1] + ...`` (start 0), left to right as
        Python adds them."""
        acc = start[0] if start else ir.Const(0)
        for item in items:
            if is_container(item):
                raise self.refuse("sum() of nested lists or tuples", node,
                                  "sum arrays or numbers")
            if isinstance(acc, ir.Const) and acc.value == 0 and not start:
                acc = item
                continue
            acc = self.lo.expressions.atomize(
                ir.Prim(np.add, [self.lo.expressions.atomize(acc, hint), item], {}, "binop:+"),
                hint)
        return acc

    def holds_container(self, node):
        """Does ``node`` surely denote a container of static structure?  Decided
        from the syntax and the scope alone, before any code is emitted for it."""
        if isinstance(node, (gast.Tuple, gast.List, gast.Dict)):
            return True
        if isinstance(node, gast.Constant) and isinstance(node.value, str):
            return True  # its characters: for c in "xyz", zip("xyz", ws)
        if isinstance(node, gast.Name):
            scope = self.lo.current_scope
            while scope is not None:
                if node.id in scope.tuples:
                    return True
                if node.id in scope.rename or node.id in scope.locals:
                    return False
                scope = scope.parent
            return False
        if isinstance(node, (gast.Subscript, gast.Attribute)):
            if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice):
                return self.holds_container(node.value)
            return is_container(self.peek(node))
        if isinstance(node, gast.Call):
            func = node.func
            if isinstance(func, gast.Attribute) and func.attr in ("items", "keys", "values",
                                                                  "copy"):
                return self.holds_container(func.value)
            fn = self.lo.expressions.static_value(func)
            if fn is dict:
                return True
            if fn in (list, tuple, zip, enumerate, reversed) and node.args:
                return all(self.holds_container(a) or self.constant_range(a) is not None
                           for a in node.args)
        return False

    def constant_range(self, node):
        """``range(3)`` (constants only) as the tuple of its numbers, or None."""
        if isinstance(node, gast.Call) and not node.keywords and \
                self.lo.expressions.static_value(node.func) is range and \
                all(static_key(a) is not None for a in node.args):
            return TupleValue([ir.Const(k) for k in range(*[static_key(a) for a in node.args])])
        return None

    def note_constant(self, name, value):
        """Variable ``name`` is now bound to ``value``: an int or str constant is kept."""
        if isinstance(value, ir.Const) and type(value.value) in (int, str):
            self.constant_variables[name] = value.value
        else:
            self.constant_variables.pop(name, None)

    def constant_of_name(self, node):
        """The int or str constant a name is bound to while a loop over a constant
        container is unrolled (``for name in ('enc', 'dec'): layers[name]``), or that
        a name bound once in its function (not a parameter) was bound to (``n =
        len(ps)``, ``L = len(parameters) // 2``), else None.  Emits nothing."""
        if not isinstance(node, gast.Name):
            return None
        scope = self.lo.current_scope
        while scope is not None:
            if node.id in scope.rename:
                value = scope.rename[node.id]
                if isinstance(value, ir.Const) and isinstance(value.value, (int, str)) and \
                        not isinstance(value.value, bool):
                    return value.value
                if isinstance(value, ir.Name) and value.id in self.constant_variables and \
                        _bound_once(self._function_node(scope), node.id):
                    return self.constant_variables[value.id]
                return None
            if node.id in scope.locals:
                return None
            scope = scope.parent
        return None

    def _function_node(self, scope):
        """The syntax of the function whose variables ``scope`` holds: a nested
        ``def`` being inlined, else its parse's function (which holds any nested
        ``def``: counting bindings there over-counts, never under-counts)."""
        innermost = self.lo.current_scope
        while innermost is not None and innermost.top_block is None:  # comprehensions
            innermost = innermost.parent
        if scope is innermost and self.lo.inline_stack and \
                isinstance(self.lo.inline_stack[-1], gast.FunctionDef):
            return self.lo.inline_stack[-1]
        return scope.parsed.node

    def static_scalar(self, node):
        """The int or str ``node`` surely is when the function is lowered: a
        constant, a name bound to one (:meth:`constant_of_name`), ``len`` of a
        container, and ``+ - * // %`` (``+`` also of strings), ``-x``, ``str(x)``
        and ``int(x)`` of those (``obs[i - 1]``, ``"W" + str(l + 1)`` in a loop
        over a constant range, unrolled); None otherwise.  Emits nothing."""
        if isinstance(node, gast.Constant):
            return node.value if type(node.value) in (int, str) else None
        if isinstance(node, gast.Name):
            return self.constant_of_name(node)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            operand = self.static_scalar(node.operand)
            return -operand if type(operand) is int else None
        if isinstance(node, gast.BinOp) and type(node.op) in FOLDED:
            left, right = self.static_scalar(node.left), self.static_scalar(node.right)
            if left is None or right is None or (type(left) is str) != (type(right) is str):
                return None
            if type(left) is str and not isinstance(node.op, gast.Add) or \
                    isinstance(node.op, (gast.FloorDiv, gast.Mod)) and right == 0:
                return None
            return FOLDED[type(node.op)](left, right)
        if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords:
            fn = self.lo.expressions.static_value(node.func)
            if fn is len:
                held = self.peek(node.args[0])
                return len(held.items) if is_container(held) else None
            if fn in (str, int):
                arg = self.static_scalar(node.args[0])
                return fn(arg) if type(arg) is int or fn is str and type(arg) is str else None
        return None

    def peek(self, node):
        """The value of ``name[k1][k2]...`` with constant keys, when ``name`` holds a
        container; None otherwise.  Emits nothing."""
        if isinstance(node, gast.Subscript):
            base = self.peek(node.value)
            key = static_key(node.slice)
            if key is None:
                key = self.static_scalar(node.slice)
            if not is_container(base) or key is None:
                return None
            if isinstance(base, DictValue):
                return base.items[base.keys.index(key)] if key in base.keys else None
            return base.items[key] if isinstance(key, int) and \
                -len(base.items) <= key < len(base.items) else None
        if isinstance(node, gast.Name) and self.holds_container(node):
            return self.lo.expressions.load_name(node.id, node)
        if isinstance(node, gast.Attribute):  # net.Ws, a list held by an object
            owner = self.lo.expressions.static_value(node.value)
            if isinstance(owner, ObjectValue) and is_container(owner.attributes.get(node.attr)):
                return owner.attributes[node.attr]
        return None


def _nested(value):
    """``value`` and every container inside it."""
    yield value
    for item in value.items:
        if is_container(item):
            yield from _nested(item)


def _as_tuples(value):
    """A container of constants as nested tuples of their values."""
    return tuple(_as_tuples(x) if is_container(x) else x.value for x in value.items)


def _bound_once(fnode, name):
    """Whether ``fnode`` binds ``name`` in exactly one place and not as a parameter."""
    args = fnode.args
    if name in {a.id for a in args.args + args.kwonlyargs + args.posonlyargs} or \
            args.vararg is not None and args.vararg.id == name or \
            args.kwarg is not None and args.kwarg.id == name:
        return False
    stores = 0
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, (gast.Store,
                                                                         gast.Del)):
            stores += 1
        elif isinstance(n, (gast.Global, gast.Nonlocal)) and name in n.names:
            return False
    return stores == 1
