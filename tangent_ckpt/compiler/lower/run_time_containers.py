"""Lower: containers whose length or keys are known only at run time.

- A list appended to in a loop (``hs.append(h)``), a run-time comprehension, and
  ``[h0] * n`` are held as the array of their rows: ``hs = rt.append_row(hs, h)``,
  ``rt.repeat_row(h0, n)`` (runtime/rows.py); a slice of one (``hs = hs[1:]``,
  what desugar writes for ``hs.pop(0)``) is one too.  A list of tuples arrives as
  one list per tuple position (desugar/tuple_lists.py); one grown at its front,
  appended and read backwards (desugar/prepended_lists.py); one grown by
  ``errs = errs + [e]`` that no other name holds, appended
  (desugar/concatenated_lists.py; where another name holds it, :meth:`prepare_loop`
  makes it rows and each concatenation a new list).  An array put in
  such a list and written in place after is refused by the fence (it shares memory
  with the list), as for any list.
- A dict written at a run-time key (``hs[t] = ...``) is a dict at run time:
  ``hs = rt.dict_set(hs, t, v)``, ``rt.dict_get(hs, t - 1)`` (runtime/keyed.py).

Both are functional updates, so a loop carries them like any value and a
checkpoint's snapshot holds them.  A list of static length becomes one of these
at the loop that grows it (:meth:`RunTimeContainers.prepare_loop`).
"""

import ast
import operator

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.container_values import DictValue, is_container
from tangent_ckpt.compiler.lower.containers import FOLDED
from tangent_ckpt.compiler.lower.container_loops import MOST_UNROLLED_COPIES
from tangent_ckpt.compiler.lower.scopes import TupleValue, to_source, walk_no_defs
from tangent_ckpt.compiler.frontend.static_keys import static_key
from tangent_ckpt.runtime.keyed import dict_get, dict_set
from tangent_ckpt.runtime.rows import append_row, repeat_row, rows_holding


class RunTimeContainers:
    """Lists built and dicts written at run time: which variables hold them, and
    their reads and writes."""

    def __init__(self, lowering):
        self.lo = lowering
        self.rows = set()  # variables holding a list built at run time, as its rows
        self.nested = {}  # those whose items are lists of one length: variable -> length
        self.dicts = set()  # variables holding a dict written at run-time keys
        # scope -> the user names a write at a run-time key made one of `dicts`
        # there: a helper's parameter so converted is refused (carry_back)
        self.converted = {}

    def is_rows(self, value):
        return isinstance(value, ir.Name) and value.id in self.rows

    def is_dict(self, value):
        return isinstance(value, ir.Name) and value.id in self.dicts

    def is_nested(self, value):
        """A list of lists built at run time (``rows.append([v, m])``), held as
        the array of its rows, which is what NumPy makes of it."""
        return isinstance(value, ir.Name) and value.id in self.nested

    def refuse_nested(self, value, what, node):
        """Refuse ``what`` done to ``value`` when it is a list of lists built at
        run time.  Read whole by a NumPy function (``np.asarray(rows)``) or by
        ``len``, it is the array of its rows exactly: NumPy converts the lists
        (and refuses lists of arrays of different shapes, as the appends do).
        Its items are lists in Python, which no row is; and such a list of
        ``(W, b)`` pairs, read item by item, would fail when the code runs
        where Python's does not."""
        if self.is_nested(value):
            spelled = f" ({to_source(node)})" if node is not None else ""
            raise self.lo.containers.refuse(
                f"{what} of a list of lists built at run time{spelled}", node,
                "it is held as the array NumPy makes of it: read it whole with a NumPy "
                "function (np.asarray(rows)[k, j], np.stack(rows)) or len(rows); a list of "
                "tuples appended in a loop (traj.append((s, a, r))) is read item by item "
                "where every read is traj[t][j], traj[t], len(traj) or a for loop over "
                "traj, reversed(traj) or enumerate(traj)")

    def note_binding(self, name, value):
        """``name`` now holds ``value``: a list built at run time, a dict written at
        run-time keys, or neither."""
        fn = value.fn if isinstance(value, ir.Prim) else None
        if _row_slice(value) and self.is_rows(value.args[0]):
            value = value.args[0]  # buf = buf[1:] (buf.pop(0), del buf[0]): rows still
            fn = None
        for kind, makers in ((self.rows, (append_row, repeat_row)), (self.dicts, (dict_set,))):
            if (isinstance(value, ir.Name) and value.id in kind) or fn in makers:
                kind.add(name)
            else:
                kind.discard(name)
        if fn is append_row:  # rows = rt.append_row(rows, row): still a list of lists
            value = value.args[0]
        if self.is_nested(value):
            self.nested[name] = self.nested[value.id]
        else:
            self.nested.pop(name, None)

    def to_dict(self, user, node):
        """A dict of known keys -> a dict written at run-time keys (``hs[t] = ...``)."""
        value = self.lo.expressions.load_name(user, node)
        if any(is_container(v) for v in value.items):
            raise self.lo.containers.refuse(f"a dict of lists or dicts written at a run-time key "
                              f"({to_source(node)})", node, "keep arrays or numbers in it")
        name = self.lo.assignments.store_name(user)
        self.lo.current_scope.tuples.pop(user, None)
        self.converted.setdefault(self.lo.current_scope, set()).add(user)
        self.lo.emit(ir.Assign(name, ir.NonDiff(sx.rt("empty_dict"), ()), self.lo.line))
        for key, item in zip(value.keys, value.items):
            self.lo.assignments.emit_value(name, self.dict_set(ir.Name(name), ir.Const(key),
                                                              item), self.lo.line)
        self.dicts.add(name)

    def carry_back(self, fnode, call, scope, arguments, label):
        """After a helper the lowering inlined: a dict parameter it wrote at a
        run-time key (``p["W" + str(i)] = ...``) would be the caller's dict,
        changed in place, which the caller's lowered code does not follow:
        refused.  Desugar inlines the user's functions, where the dict is the
        caller's own name; the lowering inlines only what desugar leaves (methods
        of objects it keeps), and no test or program reaches this write there."""
        converted = self.converted.pop(scope, set())
        args = fnode.args
        params = {a.id for a in args.args + args.kwonlyargs + args.posonlyargs}
        for p in sorted(converted & params):
            if p in arguments:
                node = arguments[p]
                spelled = to_source(node) if isinstance(node, gast.expr) else p
                raise self.lo.containers.refuse(
                    f"{label}() writes its dict parameter '{p}' ({spelled}) at a key known "
                    "only at run time", call,
                    "write the keys as constants (a loop over a constant range is unrolled: "
                    "for i in range(2): p['W' + str(i)] = ...), or return the dict from a "
                    "plain function and assign it (p = f(p))")

    @staticmethod
    def dict_set(base, key, item):
        return ir.Prim(dict_set, [base, key, item], {}, "call", ref="rt.dict_set")

    def dict_get(self, base, node, hint):
        key = self.lo.expressions.atomize(self.lo.expressions.value(node.slice, f"{hint}_key"),
                                          f"{hint}_key")
        return ir.Prim(dict_get, [base, key], {}, "call", ref="rt.dict_get")

    def store_at_run_time_key(self, base, target, value, hint):
        """``d[k] = v`` on a dict written at run-time keys."""
        key = self.lo.expressions.atomize(self.lo.expressions.value(target.slice, f"{hint}_key"),
                                          f"{hint}_key")
        item = value()
        if is_container(item):
            raise self.lo.containers.refuse("a list, tuple or dict stored in a dict at a "
                                            "run-time key", target, "store arrays or numbers")
        item = self.lo.expressions.atomize(item, hint)
        self.lo.assignments.emit_value(base.id, self.dict_set(base, key, item), self.lo.line)

    def prepare_loop(self, s):
        """Before a loop whose body appends to a list of static length: the list
        becomes the array of its rows (its length will depend on the trip count)."""
        unrolled = self.unrolled_counters(s)
        for sub, _ in walk_no_defs(s):
            if isinstance(sub, gast.Call) and isinstance(sub.func, gast.Attribute) and \
                    sub.func.attr in ("append", "extend") and \
                    isinstance(sub.func.value, gast.Name) and \
                    self.lo.containers.holds_container(sub.func.value):
                self.to_rows(sub.func.value.id, sub)
            elif isinstance(sub, gast.Call) and isinstance(sub.func, gast.Attribute) and \
                    sub.func.attr in ("append", "extend") and \
                    isinstance(self.lo.container_statements.attribute_list(sub.func.value),
                               TupleValue):  # self.hs.append(h) in the loop
                owner, attr = self.lo.container_statements.attribute_owner(sub.func.value)
                if self.lo.loops.open > getattr(owner, "loops_open", 0):  # in an outer loop too
                    before = owner.attributes[attr]
                    self.lo.container_statements.refuse_growing_in_a_loop(
                        owner, attr, before, TupleValue(list(before.items) + [None]), sub)
                holder = self.lo.namer.fresh(f"{owner.label}_{attr}")
                self.lo.current_scope.tuples[holder] = owner.attributes[attr]
                self.to_rows(holder, sub)
                owner.attributes[attr] = self.lo.expressions.load_name(holder, sub)
            grown = _grown_by_concatenation(sub)
            if grown is not None and self.lo.containers.holds_container(grown.targets[0]):
                # errs = errs + [e] where another name holds the list (desugar's
                # concatenated_lists.py appends to one no other name holds): a new list,
                # built at run time, each concatenation leaving the one before as it was
                extended = gast.Call(func=gast.Attribute(value=grown.value.left, attr="extend",
                                                         ctx=gast.Load()),
                                     args=[grown.value.right], keywords=[])
                self.to_rows(grown.targets[0].id, gast.copy_location(extended, grown))
            if isinstance(sub, gast.Subscript) and isinstance(sub.ctx, gast.Store) and \
                    isinstance(sub.value, gast.Name) and static_key(sub.slice) is None and \
                    not (_names(sub.slice) and _names(sub.slice) <= unrolled | _BUILTIN_CASTS) and \
                    isinstance(self.lo.containers.peek(sub.value), DictValue):
                self.to_dict(sub.value.id, sub)  # hs[t] = ...: keys known at run time

    def unrolled_counters(self, s):
        """The names bound in ``s`` only as the variable of ``for`` loops the lowering
        unrolls -- over a container of static structure (``for key in params``) or
        a range of constants (``for l in range(L)``, ``L = len(params) // 2`` bound
        in ``s``) -- and the names bound from those: each copy of the body reads a
        constant there (``p["W" + str(l + 1)]``)."""
        loops, stores, values = {}, {}, {}
        for sub, _ in walk_no_defs(s):
            if isinstance(sub, gast.Name) and isinstance(sub.ctx, (gast.Store, gast.Del)):
                stores[sub.id] = stores.get(sub.id, 0) + 1
            if isinstance(sub, gast.Assign) and len(sub.targets) == 1 and \
                    isinstance(sub.targets[0], gast.Name):
                values[sub.targets[0].id] = sub.value
        for sub, _ in walk_no_defs(s):
            if isinstance(sub, gast.For) and isinstance(sub.target, gast.Name) and (
                    isinstance(self.lo.containers.peek(sub.iter), (DictValue, TupleValue)) or
                    self.constant_trip_count(sub.iter, values, stores)):
                loops[sub.target.id] = loops.get(sub.target.id, 0) + 1
        counters = {name for name, count in loops.items() if stores.get(name) == count}
        grown = True
        while grown:  # key = "W" + str(l): computed from a counter
            grown = False
            for name, value in values.items():
                if name not in counters and stores.get(name) == 1 and \
                        any(isinstance(n, gast.Name) and n.id in counters
                            for n in gast.walk(value)):
                    counters.add(name)
                    grown = True
        return counters

    def constant_trip_count(self, it, values, stores):
        """Is ``it`` ``range(...)`` of bounds known when lowering (constants, lengths
        of containers, names bound once in the loop to those), short enough for
        the lowering to unroll?"""
        if not (isinstance(it, gast.Call) and not it.keywords and
                self.lo.expressions.static_value(it.func) is range):
            return False
        def bound(node, depth=0):
            known = self.lo.containers.static_scalar(node)
            if known is not None or depth > 8:
                return known
            if isinstance(node, gast.Name) and stores.get(node.id) == 1 and node.id in values:
                return bound(values[node.id], depth + 1)
            if isinstance(node, gast.BinOp) and type(node.op) in FOLDED:
                left, right = bound(node.left, depth + 1), bound(node.right, depth + 1)
                if type(left) is int and type(right) is int and not (
                        isinstance(node.op, (gast.FloorDiv, gast.Mod)) and right == 0):
                    return FOLDED[type(node.op)](left, right)
            return None
        bounds = [bound(a) for a in it.args]
        return all(type(b) is int for b in bounds) and \
            len(range(*bounds)) <= MOST_UNROLLED_COPIES

    def concatenated(self, rows, items, hint):
        """``rows + [a, b]`` on a list built at run time: a new list, the rows with
        ``a`` and ``b`` appended (``rt.append_row`` leaves ``rows`` as it was); what
        ``rows.append(a)`` and ``rows.extend([a, b])`` bind to the name."""
        value = rows
        for k, item in enumerate(items):
            if k:
                value = self.lo.expressions.atomize(value, hint)
            value = ir.Prim(append_row, [value, item], {}, "call", ref="rt.append_row")
        return value

    def to_rows(self, user, node):
        value = self.lo.expressions.load_name(user, node)
        length = self.item_length(user, value, node)
        if isinstance(value, DictValue) or (length is None and any(
                is_container(v) for v in value.items)):
            raise self.lo.containers.refuse(f"{user}.{node.func.attr}() in a loop, on a list of lists or "
                              "a dict", node, "append arrays or numbers to a flat list, or "
                              "lists of one length ([v, m, h]) to a list of such lists")
        if value.items:
            items = value.items if length is None else \
                [self.lo.containers.as_array(item, node, user) for item in value.items]
            expr = ir.Prim(np.stack, [ir.Seq(tuple(items), "list")], {}, "call",
                           ref="np.stack")
        else:
            expr = ir.NonDiff(sx.rt("empty_rows"), ())
        name = self.lo.assignments.store_name(user)
        self.lo.current_scope.tuples.pop(user, None)
        self.lo.emit(ir.Assign(name, expr, self.lo.line))
        self.rows.add(name)
        if length is not None:
            self.nested[name] = length

    def item_length(self, user, value, node):
        """The length of the lists a list of lists holds (``[[v, m]]``, or ``[]``
        appended a list display in the loop, ``rows.append([v, m])``): each is
        one row of its array.  None for a list of arrays or numbers; refused
        where the lists differ in length or hold lists themselves (each
        item must be a row)."""
        lengths = {len(v.items) for v in value.items if is_container(v)}
        appended = node.args[0] if node.func.attr == "append" and node.args else None
        if not value.items and isinstance(appended, (gast.List, gast.Tuple)):
            lengths.add(len(appended.elts))
        if not lengths:
            return None
        flat = all(is_container(v) and not isinstance(v, DictValue) and
                   not any(is_container(x) for x in v.items) for v in value.items)
        if len(lengths) > 1 or not flat:
            raise self.lo.containers.refuse(
                f"{user}.{node.func.attr}() in a loop, on a list whose items are not lists of "
                "one length", node, "append lists of one length ([v, m, h]) of numbers or "
                "arrays, or arrays")
        return lengths.pop()

    def holding(self, rows, item):
        """``hs[t] = item`` on a list built at run time writes the object itself:
        the rows, in a dtype that holds ``item`` too (``[0] * n`` filled with
        floats), before the row is written (runtime/rows.py)."""
        return ir.Prim(rows_holding, [rows, item], {}, "call",
                       ref="rt.rows_holding")

    def append(self, name, call, hint):
        """``hs.append(x)`` / ``hs.extend([...])`` on a list built at run time."""
        if call.func.attr == "append":
            item = self.lo.expressions.value(call.args[0], hint)
            if self.is_nested(name) or is_container(item):
                item = self.nested_row(name, item, call, hint)
            items = [self.lo.expressions.atomize(item, hint)]
        else:
            other = self.lo.expressions.value(call.args[0], hint)
            if self.is_nested(name):
                raise self.lo.containers.refuse(f"{to_source(call)} on a list of lists built "
                                                "at run time", call,
                                                "append the lists one by one")
            if not is_container(other) or any(is_container(v) for v in other.items):
                raise self.lo.containers.refuse(f"{to_source(call)}: extend a list built at run time with "
                                  "a list of known length", call, "append the items one by one")
            items = list(other.items)
        self.lo.assignments.emit_value(name.id, self.concatenated(name, items, hint),
                                       self.lo.line)

    def nested_row(self, rows, item, call, hint):
        """``rows.append([v, m, h])`` on a list of lists: the row
        ``np.stack((v, m, h))`` (what ``np.asarray(rows)`` makes of the list)."""
        length = self.nested.get(rows.id)
        if not is_container(item) or isinstance(item, DictValue) or \
                len(item.items) != length or any(is_container(x) for x in item.items) or \
                not isinstance(call.args[0], (gast.List, gast.Tuple)):
            spelled = "lists of one length" if length is None else f"lists of length {length}"
            what, hint = (("holds no dicts", "keep each entry in a list of its own "
                           "(ss.append(s)), or drop the list where nothing reads it")
                          if isinstance(item, DictValue) else
                          (f"holds {spelled} only when each is appended as a list display "
                           "of numbers or arrays", "append [a, b, ...] of one length each "
                           "time (or arrays to a list of arrays)"))
            raise self.lo.containers.refuse(
                f"{to_source(call)}: a list built at run time {what}", call, hint)
        return self.lo.containers.as_array(item, call, hint)


_BUILTIN_CASTS = frozenset({"str", "int"})


def _names(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _grown_by_concatenation(node):
    """``node`` when it is ``xs = xs + [...]`` (a list display added to the name
    itself), else None."""
    if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
            isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.BinOp) and \
            isinstance(node.value.op, gast.Add) and isinstance(node.value.right, gast.List) and \
            isinstance(node.value.left, gast.Name) and node.value.left.id == node.targets[0].id:
        return node
    return None


def _row_slice(value):
    """Is ``value`` a slice of rows along the list's axis (``buf[1:]``, ``hs[-m:]``)?
    Of a list built at run time, held as the array of its rows, it is the array of
    the sliced list's rows: a list built at run time still."""
    return isinstance(value, ir.Prim) and value.fn is operator.getitem and \
        len(value.args) == 2 and isinstance(value.args[1], ir.Index) and \
        isinstance(value.args[1].node, ast.Slice)
