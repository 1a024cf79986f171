"""Lower: assignments -- to names (a fresh variable when an inlined helper
rebinds a parameter), to tuples and lists of targets (one variable per element,
``a, b = b, a`` without clobbering), to subscripts (``x[i] = v``, refused on an
array the caller also sees) and to attributes of user objects; and ``act =
np.tanh``, a local that names a function."""

import operator

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.container_values import (
    DictValue, is_container, iteration_items, leaf_paths, leaves, rebuild, structure,
)
from tangent_ckpt.compiler.lower.containers import UserLine
from tangent_ckpt.compiler.lower.scopes import (
    CompileTimeValue, LocalFunction, Lowered, ObjectValue, TupleValue, is_function, load_context,
    to_source,
)
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import in_place_result
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError


class AssignmentLowering:
    """The lowering's part that writes assignments (``lo.assignments``)."""

    def __init__(self, lowering):
        self.lo = lowering

    def augmented(self, s):
        """``a op= b``: ``a = a op b``, where an array ``a`` keeps its dtype and shape
        as NumPy's in-place operator keeps them (``rt.in_place_result``: a float32
        ``a`` stays float32; an int ``a += 0.5`` or a result of another shape
        raises).  ``a`` is read once, before ``b``, as Python reads it."""
        hint = s.target.id if isinstance(s.target, gast.Name) else "item"
        current = self.lo.expressions.value(load_context(s.target), hint)
        if is_container(current) or isinstance(current, CompileTimeValue) or \
                self.lo.run_time.is_rows(current) or self.lo.run_time.is_dict(current):
            op_value = gast.BinOp(left=Lowered(current, s.target), op=s.op, right=s.value)
            self.assign(s.target, gast.copy_location(op_value, s), s)  # lists, tuples
            return
        current = self.lo.expressions.atomize(current, hint)
        op_value = gast.copy_location(
            gast.BinOp(left=Lowered(current, s.target), op=s.op, right=s.value), s)
        result = self.lo.expressions.atomize(self.lo.expressions.value(op_value, hint), hint)
        kept = ir.Prim(in_place_result, [result, current], {}, "call", ref="rt.in_place_result")
        self.assign(s.target, Lowered(kept, s), s)

    def assign(self, target, value_node, s):
        line = s.lineno
        if isinstance(target, gast.Name) and self.function_alias(target.id, value_node):
            return
        if isinstance(target, gast.Name):
            name = self.store_name(target.id)
            value = self.lo.expressions.value(value_node, target.id)
            if isinstance(value, CompileTimeValue):  # loss = make_loss(3.0), model = Model(W)
                self.lo.callables.bind_value(target.id, value, s)
                return
            if isinstance(value, TupleValue):
                self.bind_tuple(target.id, value, line)
                self.made_in_this_trip(target.id)
                return
            self.lo.current_scope.tuples.pop(target.id, None)
            self.emit_value(name, value, line)
            self.lo.run_time.note_binding(name, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            value = self.lo.expressions.value(value_node, "_".join(
                e.id for e in target.elts if isinstance(e, gast.Name)) or "item")
            if isinstance(value, DictValue):  # a, b = d: its keys, as in Python
                value = TupleValue(iteration_items(value))
            if isinstance(value, TupleValue):
                if len(value.items) != len(target.elts):
                    raise self.lo.error(TransformError, "tuple unpacking with the wrong length", s)
                items = []
                targets = {e.id for e in gast.walk(target) if isinstance(e, gast.Name)}
                # self.a, self.b = self.b, self.a: attribute variables are no user names
                attributes = any(isinstance(e, gast.Attribute) for e in target.elts)
                def kept(item):  # a, b = b, a: copy before overwriting
                    if isinstance(item, ir.Name) and (attributes or
                                                      self._user_name_of(item.id) & targets):
                        tmp = self.lo.namer.fresh(item.id + "_old")
                        self.lo.emit(ir.Assign(tmp, ir.Copy(item), line))
                        return ir.Name(tmp)
                    if isinstance(item, TupleValue):  # p, q = q, [p, 2.0]: [p, 2.0] first
                        inner = [kept(v) for v in item.items]
                        if all(a is b for a, b in zip(inner, item.items)):
                            return item  # (the same list: an alias stays one)
                        return DictValue(item.keys, inner) if isinstance(item, DictValue) \
                            else TupleValue(inner, item.is_list, item.cls)
                    return item

                items = [kept(item) for item in value.items]
                for elt, item in zip(target.elts, items):
                    self.assign_operand(elt, item, s)
            else:
                source = self.lo.expressions.atomize(value, "item")
                for k, elt in enumerate(target.elts):
                    self.assign_operand(elt, self.getitem_value(source, k, line), s)
        elif isinstance(target, gast.Subscript):
            self.setitem(target, value_node, s)
        elif isinstance(target, gast.Attribute):  # self.W = W in a user class
            self.lo.objects.set_attribute(target, value_node, s)
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
                self.made_in_this_trip(target.id)
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
            self.store_item(target, lambda: value, s)  # (an item that is a tuple too)
        elif isinstance(target, gast.Attribute):  # self.m, self.v = {}, {}
            self.lo.objects.set_attribute_value(target, value, s)
        else:
            raise self.lo.error(UnsupportedSyntaxError, "nested assignment target", s)

    def bind_tuple(self, user_name, value, line):
        """One variable per element.  Rebinding a tuple of the same length reuses its
        element variables, so a tuple updated in a loop or in a branch is carried
        like any variable."""
        old = self.lo.current_scope.tuples.get(user_name)
        objects = any(isinstance(item, ObjectValue) for item in leaves(value))
        # a name the other path of an if made (or grew) a container of the same
        # structure: its variables, which that path binds too
        other = self.lo.current_scope.other_path_tuples.get(user_name)
        shared = other if other is not None and structure(other) == structure(value) or \
            old is None else old
        if shared is not None and structure(shared) == structure(value) and not objects:
            names = leaves(shared)
            items = self._unclobbered(leaves(value), [n.id for n in names])
        else:
            loop = self.lo.ctx["loop"]
            if old is not None and loop is not None and \
                    (self.lo.current_scope, user_name) not in loop.setdefault("made", set()):
                raise self.lo.error(UnsupportedSyntaxError,
                                    f"'{user_name}' changes its length or keys inside a loop",
                                    UserLine(line), construct=f"{user_name} rebound in a loop",
                                    hint="keep a container's length fixed in a loop; to "
                                         "collect values per step, write rows of an array "
                                         "or append to a list")
            # layers = [Affine(W1, b1), Affine(W2, b2)]: an object stays itself (its
            # attributes are variables already), unrolled by `for layer in layers`
            items = leaves(value)
            names = [item if isinstance(item, ObjectValue) else ir.Name(self.lo.namer.fresh(path))
                     for item, path in zip(items, leaf_paths(value, user_name,
                                                             into_objects=False))]
        for element, item in zip(names, items):
            if not isinstance(item, ObjectValue):
                self.lo.emit(ir.Assign(element.id, ir.Copy(item) if not isinstance(
                    item, (ir.Prim, ir.NonDiff)) else item, line))
                self.lo.run_time.note_binding(element.id, item)
        bound = rebuild(value, iter(names))
        self.lo.current_scope.tuples[user_name] = bound
        self.lo.current_scope.bound_tuples[user_name] = bound

    def grow_tuple(self, user_name, base, added, line, temporaries=()):
        """``xs.append(x)`` / ``xs.extend(ys)`` on the list ``base`` of static
        structure: only the new items get variables of their own (``xs_3 = x``);
        the earlier items keep theirs, where ``base`` is the list bind_tuple bound
        ``user_name`` to here (its variables are no other name's).  Elsewhere (a
        helper's parameter, an attribute's list, a loop, a container the other path
        of an if made, a loop's list not made in the trip) the whole list is bound
        as bind_tuple binds it.  An item in one of ``temporaries`` (a variable the
        append itself computed, ``ys_mul = x * w``) is kept in it, with no copy."""
        self.grow_container(user_name, base, TupleValue(list(base.items) + list(added),
                                                         base.is_list), line, temporaries)

    def grow_container(self, user_name, base, value, line, temporaries=()):
        """``user_name`` rebound from ``base`` to ``value``, whose first leaves are
        ``base``'s and whose others are new (a list's appended items, a dict's new
        key, ``d['c'] = v``): only the new leaves are bound, as
        :meth:`grow_tuple` says; else the whole container, as bind_tuple binds it."""
        scope = self.lo.current_scope
        added = leaves(value)[len(leaves(base)):]
        loop = self.lo.ctx["loop"]
        if not added or loop is not None and (scope, user_name) not in loop.get("made", ()) or \
                scope.tuples.get(user_name) is not base or \
                scope.bound_tuples.get(user_name) is not base or \
                user_name in scope.other_path_tuples:
            self.bind_tuple(user_name, value, line)
            return
        kept = len(leaves(base))
        items = leaves(value)[kept:]
        names = leaves(base) + [
            item if isinstance(item, ObjectValue) or isinstance(item, ir.Name) and
            item.id in temporaries else ir.Name(self.lo.namer.fresh(path))
            for item, path in zip(items, leaf_paths(value, user_name,
                                                    into_objects=False)[kept:])]
        for element, item in zip(names[kept:], items):
            if not isinstance(item, ObjectValue) and element is not item:
                self.lo.emit(ir.Assign(element.id, ir.Copy(item) if not isinstance(
                    item, (ir.Prim, ir.NonDiff)) else item, line))
                self.lo.run_time.note_binding(element.id, item)
        grown = rebuild(value, iter(names))
        scope.tuples[user_name] = grown
        scope.bound_tuples[user_name] = grown

    def made_in_this_trip(self, user_name):
        """``cache = {}`` in a loop's body: a container made afresh in each trip,
        whose keys the trip may add (``cache['h'] = h``) as straight-line code
        does; a container carried from the trip before may not change them."""
        loop = self.lo.ctx["loop"]
        if loop is not None:
            loop.setdefault("made", set()).add((self.lo.current_scope, user_name))

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
        self.lo.run_time.refuse_nested(source, "unpacking the items", None)
        return ir.Prim(operator.getitem, [source, ir.Index(sx.const(k), (), plain=True)], {}, "getitem")

    def emit_value(self, name, value, line):
        """``name = value``; a list or dict built at run time stays one under
        its new name (``p = helper_result``)."""
        self.lo.run_time.note_binding(name, value)
        self.lo.containers.note_constant(name, value)  # n = len(ps): range(n) is known
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
        if self.lo.container_statements.item_of_run_time_dict(target):  # xs[t][i] = 1
            self.lo.container_statements.write_into_dict_item(target, value, s)
            return
        target = self.lo.container_statements.flat_subscript(target, s)
        if isinstance(target.value, gast.Name):
            base = self.lo.expressions.load_name(target.value.id, target.value)
            if self.lo.run_time.is_dict(base):  # hs[t] = v: keys known at run time
                self.lo.run_time.store_at_run_time_key(base, target, value, target.value.id)
                return
        if self.lo.containers.holds_container(target.value):  # d['w'] = v, params[0] = v
            self.lo.container_statements.store_in_container(target, value(), s)
            return
        if isinstance(target.value, gast.Attribute):  # self.acc[j] = v
            self.lo.objects.outside.refuse_subscript_store(target, s)
            held = self.lo.expressions.object_attribute_value(target.value)
            if isinstance(held, ir.Name) and self.lo.objects.made_here(target.value):
                index = self.lo.expressions.index(target.slice, held.id)
                item = self.lo.expressions.atomize(value(), held.id + "_value")
                self.lo.emit(ir.SetItem(held.id, index, item, s.lineno))
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
                             hint=f"make the call that hands '{user}' in a statement of its own "
                                  f"(r = f(...), not inside an expression), where the original "
                                  f"statement ran it: those writes are followed"
                             if user in scope.shared_arrays else
                             f"pass '{user}' to the function as a parameter: a helper's "
                             f"writes into its parameters are followed")
        index = self.lo.expressions.index(target.slice, target.value.id)
        value = value()
        if is_container(value):  # a[0] = (5, 5, 5): NumPy stores np.asarray of it
            if self.lo.run_time.is_rows(base):
                raise self.lo.error(UnsupportedSyntaxError, "a list or tuple stored as an item "
                                    "of a list built at run time", s,
                                    construct=f"{to_source(target)} = ...",
                                    hint="store an array: np.array([...])")
            value = self.lo.containers.as_array(value, s, target.value.id + "_value")
            self.lo.containers.require_numpy(base, "=", s.lineno)
        value = self.lo.expressions.atomize(value, target.value.id + "_value")
        name = self.store_name(target.value.id)
        if self.lo.run_time.is_rows(base):  # a list holds the item itself: rows that hold it
            held = self.lo.expressions.atomize(
                self.lo.run_time.holding(base, value), target.value.id)
            self.lo.emit(ir.Assign(name, ir.Copy(held), s.lineno))
            self.lo.run_time.note_binding(name, base)
        elif name != base.id:  # an inlined parameter bound to the caller's array
            self.lo.emit(ir.Assign(name, ir.Copy(base), s.lineno))
        self.lo.emit(ir.SetItem(name, index, value, s.lineno))


def _base_name(target):
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id if isinstance(target, gast.Name) else "item"


