"""Lower: the statements that act on containers -- a parameter given as a
container (one parameter per element), ``xs.append(x)`` / ``xs.extend(ys)``,
``d['w'] = v`` and ``hs[t] = v``, nested subscript writes ``xs[t][i] = v``, and
the check that a container has one structure after an ``if``."""

import itertools
import operator

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.desugar.liveness import NameLiveness, read_names
from tangent_ckpt.compiler.desugar.local_bindings import LocalBindings
from tangent_ckpt.compiler.lower.container_values import (
    DictValue, is_container, key_part, leaf_paths, leaves, structure, value_of_structure,
)
from tangent_ckpt.compiler.lower.observers import emit_observation
from tangent_ckpt.compiler.lower.scopes import ObjectValue, TupleValue, always_exits, to_source
from tangent_ckpt.compiler.frontend.static_keys import static_key
from tangent_ckpt.errors import UnsupportedSyntaxError
from tangent_ckpt.runtime.keyed import dict_get


class ContainerStatements:
    """Statements on containers, called from :mod:`.statements`."""

    def __init__(self, lowering):
        self.lo = lowering
        self._counters = {}  # id(function node) -> (the node, its range counters)

    def parameters(self, params, scope):
        """A parameter given as a list, tuple or dict (``self.lo.containers_given``:
        position -> structure) is one parameter per element: ``params_0_1``."""
        flat = []
        for k, p in enumerate(params):
            structure = self.lo.containers_given.get(k)
            if structure is None:
                flat.append(p)
                continue
            shape = value_of_structure(structure, itertools.repeat(None))
            names = [self.lo.namer.fresh(path) for path in leaf_paths(shape, p)]
            self.lo.namer.reserve(set(names))
            value = value_of_structure(structure, (ir.Name(n) for n in names))
            _label_objects(value, p)
            if isinstance(value, ObjectValue):  # a wrt object: methods inline on it
                scope.functions[p] = value
            else:
                scope.tuples[p] = value
            del scope.rename[p]
            flat.extend(names)
        return flat

    def grow(self, call, s):
        """``xs.append(x)`` / ``xs.extend(ys)`` on a list of static length: the
        new items are bound (``assignments.grow_tuple``; in a loop its length
        would change: refused by bind_tuple)."""
        user = call.func.value.id
        if len(call.args) != 1 or call.keywords:
            raise self.lo.containers.refuse(f".{call.func.attr}() takes one argument", call,
                                            "pass one value")
        if self.lo.ctx["loop"] is not None and self.lo.containers.holds_container(
                call.func.value) and not self.filled_in_one_trip(user):
            self.lo.run_time.to_rows(user, call)  # a list grown in a loop: its rows
        base = self.lo.expressions.load_name(user, call.func.value)
        if self.lo.run_time.is_rows(base):
            self.lo.run_time.append(base, call, user)
            return
        start = len(self.lo.out)
        if call.func.attr == "append":  # (a comprehension's, named after its statement)
            hint = self.lo.current_scope.parsed.comprehension_appends.get(s, user)
            added = [self.lo.containers.element(call.args[0], hint)]
        else:
            other = self.lo.expressions.value(call.args[0], user)
            if not is_container(other):
                raise self.lo.containers.refuse("extend() with a value that is not a list "
                                                "or tuple", call, "extend with a list")
            added = list(other.items)
        self.lo.assignments.store_name(user)
        self.lo.assignments.grow_tuple(user, base, added, s.lineno,
                                       self._temporaries(self.lo.out[start:]))

    def _temporaries(self, emitted):
        """The variables ``emitted`` (what an append just wrote) computes that are
        no user's variable: an item held in one is the list's own (no copy)."""
        users = set()
        scope = self.lo.current_scope
        while scope is not None:
            users |= {v.id for v in scope.rename.values() if isinstance(v, ir.Name)}
            scope = scope.parent
        run_time = self.lo.run_time
        return {st.target for st in emitted if isinstance(st, ir.Assign) and
                isinstance(st.expr, (ir.Prim, ir.NonDiff))} - users - \
            run_time.rows - run_time.dicts

    def filled_in_one_trip(self, user):
        """Whether ``user``, a list of static structure appended to in a loop's trip,
        stays one: it is made in this trip (``ps = []``), the append is in the
        trip's own block (written there, or by a loop unrolled there; no ``if`` of
        a run-time condition around it), and no read after the
        loop or in the next trip meets it (its length is then the same in every
        trip).  Else it is held as its rows."""
        loop = self.lo.ctx["loop"]
        scope = self.lo.current_scope
        if (scope, user) not in loop.get("made", ()) or self.lo.out is not loop.get("block") \
                or user not in scope.tuples:
            return False
        fnode = scope.parsed.node
        node = loop.get("node")
        if any(isinstance(n, gast.Assign) and isinstance(n.value, gast.Name) and
               n.value.id == user and not all(isinstance(t, gast.Name) and
                                              t.id in scope.tuples for t in n.targets)
               for n in gast.walk(fnode)):
            return False  # keep = ps, keep None before: it would change kind in the loop
        return node is not None and any(n is node for n in gast.walk(fnode)) and \
            id(node) not in NameLiveness(fnode, user, read_names).heads

    def attribute_owner(self, node):
        """(object, attribute) of ``obj.attr`` on an object made in the function
        (not one named in wrt), else (None, None)."""
        if not isinstance(node, gast.Attribute):
            return None, None
        owner = self.lo.expressions.static_value(node.value)
        if not isinstance(owner, ObjectValue) or owner.given:
            return None, None
        return owner, node.attr

    def attribute_list(self, node):
        """The list ``obj.attr`` holds (a TupleValue, or the variable of its rows
        when it is built at run time), or None."""
        owner, attr = self.attribute_owner(node)
        value = owner.attributes.get(attr) if owner is not None else None
        if isinstance(value, TupleValue) and not isinstance(value, DictValue) or \
                self.lo.run_time.is_rows(value):
            return value
        return None

    def grow_attribute(self, call, s):
        """``self.hs.append(h)`` on a list held by an attribute: grown as a list
        bound to a name would be (its rows when it grows in a loop)."""
        owner, attr = self.attribute_owner(call.func.value)
        holder = self.lo.namer.fresh(f"{owner.label}_{attr}")
        value = owner.attributes[attr]
        if self.lo.run_time.is_rows(value):
            self.lo.run_time.append(value, call, holder)
            return
        self.lo.current_scope.tuples[holder] = value
        if self.lo.loops.open > getattr(owner, "loops_open", 0):
            self.refuse_growing_in_a_loop(owner, attr, value, TupleValue(list(value.items) + [
                None]), call)
        named = gast.Call(func=gast.Attribute(value=_name(holder, gast.Load()),
                                              attr=call.func.attr, ctx=gast.Load()),
                          args=call.args, keywords=call.keywords)
        self.grow(gast.copy_location(named, call), s)
        owner.attributes[attr] = self.lo.expressions.load_name(holder, call)

    def flat_subscript(self, target, s):
        """``xs[t][i] = v`` writes through the view ``xs[t]``: for an array and
        integer indices (constants, range-loop indices) it is ``xs[t, i] = v``.
        Other nested writes (a slice, a fancy index: a copy in NumPy) are refused."""
        if not isinstance(target.value, gast.Subscript) or \
                self.lo.containers.holds_container(target.value):
            return target
        inner = target.value
        base = inner
        while isinstance(base, gast.Subscript):
            base = base.value
        if isinstance(base, gast.Name) and self.lo.run_time.is_rows(
                self.lo.expressions.load_name(base.id, base)):
            raise self.lo.containers.refuse(
                f"an array inside a list written in place ({to_source(target)})", s,
                "the list may hold the same array several times ([x] * n): assign a "
                f"whole item instead, {to_source(inner)} = ...")
        if isinstance(base, gast.Name) and (
                self.lo.run_time.is_dict(self.lo.expressions.load_name(base.id, base)) or
                self.lo.containers.holds_container(base)):
            # xs[t, i] would be a tuple key (or index) of the container, not of its item
            raise self.lo.containers.refuse(
                f"an array inside a list, tuple or dict written in place "
                f"({to_source(target)})", s,
                f"build the array first, then store it: x = np.zeros(...); "
                f"x[{to_source(target.slice)}] = ...; {to_source(inner)} = x")
        if not (self.integer_index(inner.slice) and self.integer_index(target.slice)):
            raise self.lo.error(UnsupportedSyntaxError, "assignment into a nested subscript",
                                s, construct=to_source(target),
                                hint="write one subscript with every index: x[t, i] = v")
        flat = gast.Subscript(value=self.flat_subscript(inner, s).value,
                              slice=gast.Tuple(elts=_index_parts(inner.slice) +
                                               _index_parts(target.slice), ctx=gast.Load()),
                              ctx=gast.Store())
        return gast.copy_location(flat, target)

    def item_of_run_time_dict(self, target):
        """Whether ``target`` is ``xs[t][...]``, ``xs`` a dict written at run-time keys."""
        inner = target.value
        return isinstance(inner, gast.Subscript) and isinstance(inner.value, gast.Name) and \
            self.lo.run_time.is_dict(self.lo.expressions.load_name(inner.value.id, inner.value))

    def write_into_dict_item(self, target, value, s):
        """``xs[t][i] = v`` (min-char-rnn's one-hot input) as ``x = np.copy(xs[t]);
        x[i] = v; xs[t] = x``: exact when no other entry of ``xs`` is the same
        array, which ``rt.check_sole_item`` makes sure of when it runs (other names
        of the array are the aliasing fence's)."""
        inner = target.value
        user = inner.value.id
        base = self.lo.expressions.load_name(user, inner.value)
        key = self.lo.expressions.atomize(self.lo.expressions.value(inner.slice, f"{user}_key"),
                                          f"{user}_key")
        emit_observation(self.lo, sx.rt("check_sole_item", ir.operand_node(base),
                                        ir.operand_node(key),
                                        sx.const(self.lo.current_scope.parsed.filename),
                                        sx.const(s.lineno)),
                         ir.operand_names(base) + ir.operand_names(key), s.lineno)
        item = self.lo.expressions.atomize(ir.Prim(dict_get, [base, key], {}, "call",
                                                   ref="rt.dict_get"), f"{user}_item")
        held = self.lo.namer.fresh(f"{user}_item")
        self.lo.assignments.assign_operand(_name(held, gast.Store()), ir.Prim(
            np.copy, [item], {}, "call", ref="np.copy"), s)
        written = gast.Subscript(value=_name(held, gast.Load()), slice=target.slice,
                                 ctx=gast.Store())
        self.lo.assignments.store_item(gast.copy_location(written, target), value, s)
        stored = gast.Subscript(value=inner.value, slice=inner.slice, ctx=gast.Store())
        self.lo.assignments.store_item(gast.copy_location(stored, inner), lambda: (
            self.lo.expressions.load_name(held, inner)), s)

    def integer_index(self, node):
        """Whether ``node`` surely is an integer (never a bool, an index array or a
        tuple): an integer constant; a name the function being lowered binds only
        as a ``range`` counter; a name bound to a loop index nothing else binds,
        or to an integer constant (a helper's parameter given one).  A name that
        was a ``range`` counter but is bound again (``t = np.array([t])``, an
        index array: ``xs[t]`` is a copy) is none."""
        if isinstance(node, gast.Tuple):
            return all(self.integer_index(e) for e in node.elts)
        if static_key(node) is not None:
            return type(static_key(node)) is int
        if not isinstance(node, gast.Name):
            return False
        if node.id in self.range_counters():
            return True
        value = self.lo.expressions.load_name(node.id, node)
        return isinstance(value, ir.Name) and value.id in self.lo.loops.integer_indices or \
            isinstance(value, ir.Const) and type(value.value) is int

    def range_counters(self):
        """The names the function being lowered binds only as ``range`` counters."""
        parsed = self.lo.current_scope.parsed
        cached = self._counters.get(id(parsed.node))
        if cached is None or cached[0] is not parsed.node:
            counters = LocalBindings(parsed.node, parsed.resolve).range_counters()
            cached = self._counters[id(parsed.node)] = (parsed.node, counters)
        return cached[1]

    def store_in_container(self, target, value, s):
        key = self.lo.containers.key_value(target.slice, "key")
        if key is None and isinstance(target.value, gast.Name) and isinstance(
                self.lo.expressions.load_name(target.value.id, target.value), DictValue):
            self.lo.run_time.to_dict(target.value.id, target)  # d[k] = v: a run-time key
            base = self.lo.expressions.load_name(target.value.id, target.value)
            self.lo.run_time.store_at_run_time_key(base, target, lambda: value,
                                                     target.value.id)
            return
        if key is None:
            raise self.lo.containers.refuse(
                f"a list or dict written at a key known only at run time "
                f"({to_source(target)})", s,
                "for values indexed by a loop variable use an array: hs = np.zeros((n + 1, "
                "...)); hs[t + 1] = ... (or a list built with append)")
        if isinstance(target.value, gast.Attribute):
            self.store_in_attribute(target, key, value, s)
            return
        if not isinstance(target.value, gast.Name):
            raise self.lo.containers.refuse("assignment into an element of a nested "
                                            "container", s, "rebuild the inner container")
        base = self.lo.expressions.load_name(target.value.id, target.value)
        if isinstance(base, TupleValue) and isinstance(key, int) and base.items:
            key = key % len(base.items) if -len(base.items) <= key < 0 else key  # S[-1]
        start = len(self.lo.out)
        item = value if is_container(value) else self.lo.expressions.atomize(
            value, f"{target.value.id}_{key_part(key)}")
        self.lo.assignments.store_name(target.value.id)
        updated = self.lo.containers.with_item(base, key, item, s)
        if isinstance(base, DictValue) and key not in base.keys:  # d['c'] = v: a new key
            self.lo.assignments.grow_container(target.value.id, base, updated, s.lineno,
                                               self._temporaries(self.lo.out[start:]))
            return
        self.lo.assignments.bind_tuple(target.value.id, updated, s.lineno)

    def store_in_attribute(self, target, key, value, s):
        """``self.h['w'] = v`` (a constant key) on a container held by an attribute of
        an object made in the function: the attribute's container with the item
        rebound (its other items keep their variables, shared with any other name
        of the same container)."""
        attr = target.value
        owner = self.lo.expressions.value(attr.value, "owner")
        base = owner.attributes.get(attr.attr) if isinstance(owner, ObjectValue) else None
        if not isinstance(base, TupleValue) or owner.given:
            raise self.lo.containers.refuse("assignment into an element of a nested "
                                            "container", s, "rebuild the inner container")
        holder = self.lo.namer.fresh(f"{owner.label}_{attr.attr}")
        self.lo.current_scope.tuples[holder] = base
        item = value if is_container(value) else self.lo.expressions.atomize(
            value, f"{holder}_{key_part(key)}")
        updated = self.lo.containers.with_item(base, key, item, s)
        if structure(base) == structure(updated) and \
                not any(isinstance(v, ObjectValue) for v in leaves(updated)) and \
                not all(isinstance(v, ir.Name) for v in leaves(base)):
            # an item still the constant __init__ wrote ({"m": 0.0}) has no variable
            # of its own, which the container's items rebound in place need (once an
            # AttributeError from inside the compiler)
            raise self.lo.containers.refuse("assignment into an item of a container an "
                                            "object's attribute holds, whose items include a "
                                            "constant", s,
                                            "give each item an array or a computed value in "
                                            "__init__ (0.0 * g), or keep the constant in an "
                                            "attribute of its own")
        self.refuse_growing_in_a_loop(owner, attr.attr, base, updated, s)
        self.lo.assignments.bind_tuple(holder, updated, s.lineno)
        owner.attributes[attr.attr] = self.lo.current_scope.tuples.pop(holder)

    def refuse_growing_in_a_loop(self, owner, attr, before, after, node):
        """An attribute's container that changes its length or keys inside a loop
        opened after the object was made (also through a method the loop calls):
        each trip would change it again, which one lowered body cannot follow."""
        if structure(before) != structure(after) and \
                self.lo.loops.open > getattr(owner, "loops_open", 0):
            raise self.lo.containers.refuse(
                f"the list or dict {owner.label}.{attr} changes its length or keys inside a "
                f"loop", node, "give it its final keys before the loop, or append to it in "
                "a loop of the same function (its rows are then built at run time)")

    def unpack_on_the_other_path(self, s, extra, start, body_path, else_path):
        """A name one path of an ``if`` makes a list, tuple or dict (``if
        isinstance(s, int): s = (s, s)``) and the other path leaves a value known
        only at run time: after the ``if`` it is read through the container's
        element variables, which the other path binds too -- from the run-time
        value's items (``s_0, s_1 = s[0], s[1]``), once ``rt.check_structure`` has
        made sure it is a container of the same kind and length (else a clear
        error).  ``start``: (containers, names bound) before the ``if``;
        ``body_path``: (containers after the body, its block, its names);
        ``else_path``: (containers after the else branch, its block).
        Where no read follows, or the other path leaves the name unbound, nothing
        is bound; a value known when compiling is refused."""
        before, bound = start
        after_body, body, body_names = body_path
        after_else, orelse = else_path
        tuples = self.lo.current_scope.tuples
        paths = [(after_body, orelse, after_else, s.orelse, self.lo.current_scope.rename),
                 (after_else, body, after_body, s.body, body_names)]
        for made, block, other, stmts, names in paths:
            for name, value in made.items():
                if name in before or name in other or not is_container(value):
                    continue
                tuples[name] = value  # after the if: the container, on both paths
                path = list(stmts) + list(extra)
                binds = name in bound or any(
                    isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == name
                    for st in path for n in gast.walk(st))
                if not binds or always_exits(path) or not self.read_after(s, extra, name):
                    continue
                self.unpack(name, value, names.get(name), block, s)

    def loop_start(self):
        """What :meth:`refuse_made_in_loop` compares a loop's body with: the
        containers, and the names bound, where the body starts."""
        return dict(self.lo.current_scope.tuples), set(self.lo.current_scope.rename)

    def refuse_made_in_loop(self, loop, start, made):
        """A name a loop's body makes a list, tuple or dict while it is another
        value bound where the body starts (``if isinstance(s, int): s = (s, s)``
        in the loop, ``s`` bound before it), or makes afresh (``made``: (scope,
        name) pairs, ``cache = {}; cache['h'] = h``) with other keys or element
        variables than it has there: the next trip (or the code after a loop of
        no trips) would read the value the name had before the loop, where
        Python reads what the body left -- refused where it is read there."""
        before, bound = start
        fnode = self.lo.current_scope.parsed.node
        found = any(n is loop for n in gast.walk(fnode))
        for name, value in self.lo.current_scope.tuples.items():
            if name not in bound or not is_container(value):
                continue
            if name in before and ((self.lo.current_scope, name) not in made or _same_variables(
                    before[name], value)):
                continue
            if found and id(loop) not in NameLiveness(fnode, name, read_names).heads:
                continue
            if name in before:
                raise self.lo.error(UnsupportedSyntaxError,
                                    f"'{name}' is made again inside this loop with other keys "
                                    "or items than it has where the loop starts (read by the "
                                    "next trip or after the loop)", loop,
                                    construct=f"loop ({name})",
                                    hint="give it the same keys and items before the loop and "
                                         "at the end of each trip, or use another name inside "
                                         "the loop")
            raise self.lo.error(UnsupportedSyntaxError,
                                f"'{name}' becomes a list, tuple or dict inside this loop and "
                                "is another value where the loop starts (read by the next "
                                "trip or after the loop)", loop, construct=f"loop ({name})",
                                hint=f"make '{name}' a container before the loop (for "
                                     f"example if isinstance({name}, int): {name} = ({name}, "
                                     f"{name})), or use another name inside the loop")

    def read_after(self, s, extra, name):
        """Whether ``name`` may be read after the ``if`` ``s`` (and ``extra``, the
        statements lowered inside both of its paths); when ``s`` is not found in
        the function being lowered, it may."""
        fnode = self.lo.current_scope.parsed.node
        last = list(extra)[-1] if extra else s
        if not any(n is last for n in gast.walk(fnode)):
            return True
        return id(last) in NameLiveness(fnode, name, read_names).after

    def unpack(self, name, value, source, block, s):
        """Bind the leaves of ``value`` in ``block`` from the run-time ``source``."""
        targets = leaves(value)
        if not isinstance(source, ir.Name) or type(source) is not ir.Name or \
                self.lo.run_time.is_rows(source) or self.lo.run_time.is_dict(source) or \
                not all(type(t) is ir.Name for t in targets):
            shown = f" and {to_source(ir.operand_node(source))} on the other" \
                if isinstance(source, ir.Const) else " and not on the other"
            raise self.lo.error(UnsupportedSyntaxError,
                                f"'{name}' is a list, tuple or dict on one path of this if"
                                f"{shown}, and is read after the if", s,
                                construct=f"if ({name})",
                                hint="give it one kind on both paths: bind it on both, or "
                                     "use another name for the container")
        saved, self.lo.out = self.lo.out, block
        try:
            emit_observation(self.lo, sx.rt("check_structure", ir.operand_node(source),
                                            sx.const(_kinds(value)), sx.const(name),
                                            sx.const(self.lo.current_scope.parsed.filename),
                                            sx.const(s.lineno)),
                             [source.id], s.lineno)
            self._bind_items(value, source, s.lineno)
        finally:
            self.lo.out = saved

    def _bind_items(self, value, source, line):
        keys = value.keys if isinstance(value, DictValue) else range(len(value.items))
        for key, item in zip(keys, value.items):
            read = ir.Prim(operator.getitem, [source, ir.Index(sx.const(key), (), plain=True)],
                           {}, "getitem")
            if is_container(item):
                self._bind_items(item, self.lo.expressions.atomize(read, f"{source.id}_item"),
                                 line)
            else:
                self.lo.emit(ir.Assign(item.id, read, line))

    def same_structures(self, s, before, after_body, after_else, extra=()):
        """A container has one structure after an ``if``, whichever path ran (its
        element variables are shared by the two paths only then).  A container
        that one path rebinds to an array, or turns into a dict written at
        run-time keys (``p["W" + str(i)] = ...``), is no container on that
        path only: refused (the other path's reads would meet a variable it never
        bound)."""
        # where both paths return, no read after the if meets the merged names
        exits = always_exits(list(s.body) + list(extra)) and \
            always_exits(list(s.orelse) + list(extra))
        else_binds = {n.id for st in list(s.orelse) + list(extra) for n in gast.walk(st)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        for name in before:
            kept = (name in after_body, name in after_else)
            if exits or kept == (False, False) and name in else_binds or kept == (True, True):
                continue
            raise self.lo.error(UnsupportedSyntaxError,
                                f"'{name}' is a list, tuple or dict on one path of this if "
                                "and not on the other (rebound to another value, or written "
                                "at a key known only at run time, on one path only)", s,
                                construct=f"if ({name})",
                                hint="give it one kind on both paths: rebind it on both, or "
                                     "use another name for the new value")
        for name, value in after_body.items():
            # the path through the body has `value`; the other path has what the
            # else branch bound, or (if it bound nothing) what was there before
            other = after_else.get(name) if after_else.get(name) is not value else \
                before.get(name)
            if value is not before.get(name) or other is not value:
                if other is not None and structure(other) != structure(value):
                    raise self.lo.error(UnsupportedSyntaxError,
                                        f"'{name}' is a list, tuple or dict of a different "
                                        "length or keys on the two paths of this if", s,
                                        construct=f"if ({name})",
                                        hint="give it the same structure on both paths")
                if other is not None and not exits and not _same_variables(other, value) \
                        and self.read_after(s, extra, name):
                    # one structure, but the items are other objects (whose attributes
                    # are other variables) on the two paths: no one variable per item
                    raise self.lo.error(UnsupportedSyntaxError,
                                        f"'{name}' holds other objects on the two paths of "
                                        "this if", s, construct=f"if ({name})",
                                        hint="keep the same objects and assign their "
                                             "attributes on each path, or give the "
                                             "container another name on one path")


def _same_variables(a, b):
    """Whether two containers have one structure and the same element variables."""
    return structure(a) == structure(b) and all(
        x is y or isinstance(x, ir.Name) and isinstance(y, ir.Name) and x.id == y.id
        for x, y in zip(leaves(a), leaves(b)))


def _kinds(value):
    """What ``rt.check_structure`` checks a run-time value against: ``None`` for a
    leaf, else (kind, keys or length, the items' kinds)."""
    if isinstance(value, DictValue):
        return ("dict", tuple(value.keys), tuple(_kinds(v) for v in value.items))
    if isinstance(value, TupleValue):
        return ("list" if value.is_list else "tuple", len(value.items),
                tuple(_kinds(v) for v in value.items))
    return None


def _name(user, ctx):
    return gast.Name(id=user, ctx=ctx, annotation=None, type_comment=None)


def _index_parts(node):
    return list(node.elts) if isinstance(node, gast.Tuple) else [node]


def _label_objects(value, label):
    """Name the objects of a wrt argument as the user reaches them (``layers[0]``)."""
    if isinstance(value, ObjectValue):
        value.label = label
        for attr, item in value.attributes.items():
            _label_objects(item, f"{label}.{attr}")
    elif isinstance(value, DictValue):
        for key, item in zip(value.keys, value.items):
            _label_objects(item, f"{label}[{key!r}]")
    elif isinstance(value, TupleValue):
        for k, item in enumerate(value.items):
            _label_objects(item, f"{label}[{k}]")
