"""One group of names sharing memory, for the view lowering (``views.py``): a
root array and the names that are views or aliases of it.  :class:`Group`
checks the conditions under which value semantics plus explicit follow-ups
compute what NumPy computes, and inserts the follow-ups."""

import gast

from tangent_ckpt.compiler.desugar.liveness import read_names
from tangent_ckpt.compiler.desugar.view_facts import numpy_function
from tangent_ckpt.compiler.memory_sharing import FRESH_METHODS
from tangent_ckpt.compiler.desugar.view_shape import (LOOPS, copy_node, located, name_node,
                                                      store_node)

class Group:
    """A root name and the names that are views or aliases of it (``links``,
    parents before children)."""

    def __init__(self, shape, facts, root, links):
        self.shape, self.facts, self.root = shape, facts, root
        self.links = {link.name: link for link in links}
        self.members = sorted(links, key=lambda link: shape.order[id(link.stmt)])
        self.names = {root} | set(self.links)
        seen = set()
        self.writes = []  # (statement, name, kind), once per statement and name
        for w in shape.writes:
            if w[1] in self.names and (id(w[0]), w[1]) not in seen:
                seen.add((id(w[0]), w[1]))
                self.writes.append(w)
        self.flags = {}  # member -> the name of its "is a view" flag, when it needs one
        self.followed = set()  # ids of the view expressions the fence may treat as new
        self.dead_after = None  # the root rebound here once no view is used again
        # the numbers of the statements rebinding the root after which no view taken
        # before is used again (those taken after are views of the new object)
        self.splits = []
        # whether a write needed a follow-up (carried up to the root, a view taken
        # again): only then does the code rely on views sharing memory
        self.followed_up = False

    # --- when the group can be followed exactly --------------------------------------
    def followable(self):
        shape = self.shape
        if self.root not in shape.local:
            return False
        # a root that is an argument of the differentiated function is followed as
        # the private copy the gradient works on (its writes never reach the caller)
        if any(kind == "other" for _, _, kind in self.writes) or not self.writes:
            return False
        first = min(shape.order[id(link.stmt)] for link in self.members)
        if any(stmt is not shape.parsed.node and shape.order[id(stmt)] >= first and
               not self._rebound_where_views_are_dead(stmt)
               for stmt, _ in shape.binders.get(self.root, [])):
            return False  # the root rebound once views of it exist
        arrays = [a for a in shape.local if self.facts.array(a) is not None]
        allowed = set(map(id, [link.stmt for link in self.members])) | \
            {("stored in", a) for a in arrays}
        if not self._escapes_after_every_write(
                {(name, where) for name in shape.escaping(self.names, [], arrays)
                 for where in shape.escapes[name] - allowed
                 if not self._unpacked(where) and not self._copied_where_rebound(name, where)}):
            return False
        for link in self.members:
            if not self._link_ok(link) or not self._writes_seen_by(link):
                return False
        return True

    def _copied_where_rebound(self, name, where):
        """Whether ``where`` (a statement id) is the root's own rebinding from its
        earlier object by NumPy (``a = a.copy()``, ``H = np.asarray(H)``): the
        earlier object is kept only by the new one (a copy, or a view NumPy makes),
        and no name holds it after (the rebinding is accepted: ``followable``)."""
        shape = self.shape
        stmt = shape.place[where][1] if name == self.root and isinstance(where, int) and \
            where in shape.place else None
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name and
                isinstance(stmt.value, gast.Call)):
            return False
        call = stmt.value
        if isinstance(call.func, gast.Attribute) and call.func.attr in FRESH_METHODS:
            receiver, others = call.func.value, list(call.args)
        elif numpy_function(call.func, shape.parsed.resolve, shape.local) is not None and \
                call.args:
            receiver, others = call.args[0], list(call.args[1:])
        else:
            return False
        others += [k.value for k in call.keywords]
        return isinstance(receiver, gast.Name) and receiver.id == name and \
            not any(name in read_names(node) for node in others)

    def _unpacked(self, where):
        """Whether the statement numbered by id ``where`` is ``r = (U_2, V_2)`` whose
        ``r`` is read only by a rebinding of the root that starts a new group
        (``U, V = r``, :attr:`splits`), in the same block: what ``r`` keeps is
        never read after that rebinding (an inlined ``U, V = step(U, V)``)."""
        shape = self.shape
        stmt = shape.place[where][1] if isinstance(where, int) and where in shape.place \
            else None
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and
                isinstance(stmt.value, (gast.Tuple, gast.List))):
            return False
        kept = stmt.targets[0].id
        if len(shape.binders.get(kept, ())) != 1 or kept in shape.kept_names():
            return False
        readers = [other for _, other in shape.place.values()
                   if other is not stmt and any(kept in read_names(node)
                                                for node in _own_parts(other))]
        return len(readers) == 1 and shape.order[id(readers[0])] in self.splits and \
            isinstance(readers[0], gast.Assign) and len(readers[0].targets) == 1 and \
            isinstance(readers[0].value, gast.Name) and \
            shape.place[id(readers[0])][0] is shape.place[where][0]

    def _escapes_after_every_write(self, escaping):
        """Whether every place ``escaping`` names (name, statement id) where a name of
        the group may be kept (a list
        display, ``d = {'v': B}``) runs after every write into the group, outside any
        loop that writes into it: what was kept sees every write already made, and
        none is made later (a write through the container is the fence's)."""
        shape = self.shape
        dead = self.dead_after  # what comes after is another object (no view used)
        writes = [(shape.order[id(w)], set(map(id, shape.loops[id(w)])))
                  for w, _, _ in self.writes
                  if dead is None or shape.order[id(w)] <= dead]
        for _, where in escaping:
            if not isinstance(where, int) or where not in shape.place or \
                    isinstance(shape.place[where][1], (gast.FunctionDef, gast.ClassDef)):
                return False  # a nested function may run (and write) anywhere later
            at = shape.order[where]
            if dead is not None and at > dead:
                continue
            around = set(map(id, shape.loops[where]))
            if any(w >= at or loops & around for w, loops in writes):
                return False
        return True

    def _rebound_where_views_are_dead(self, stmt):
        """``mean_theta = theta; mean_theta[b] = ...; theta = mean_theta + ...``: the
        root is rebound (a new object) in the block where each view is taken, and no
        later statement of that block names a view: the views are never used again
        until they are taken again (of the new object), so the rebinding is a
        rebinding like any other."""
        shape = self.shape
        if self._rebound_after_every_use(stmt):
            return True
        at, done = shape.order[id(stmt)], shape.end[id(stmt)]
        for link in self.members:
            first, last = shape.region(link.stmt)
            if shape.place[id(stmt)][0] is not shape.place[id(link.stmt)][0]:
                return False
            if first > done:  # taken after the rebinding, of the new object: read
                if self._read_outside(link.name, first, last):  # only where taken
                    return False
                continue
            if not first <= at <= last:
                return False
            if self._read_outside(link.name, first, last) and any(
                    done < shape.order[id(w)] <= last for w, _, _ in self.writes):
                return False  # read where taken before: the old view, not one taken again
            for _, other in shape.place.values():
                if done < shape.order[id(other)] <= last and any(
                        isinstance(n, gast.Name) and n.id == link.name
                        for n in gast.walk(other)):
                    return False
        self.splits.append(at)
        return True

    def _rebound_after_every_use(self, stmt):
        """``al = B; al[0] = ...`` in one loop, ``B = np.tanh(...)`` later: every
        statement naming a view comes before the rebinding, and none shares a loop
        with it (so none runs again after it).  Writes into the new object are no
        writes into the group (``dead_after``)."""
        shape = self.shape
        at, around = shape.order[id(stmt)], set(map(id, shape.loops[id(stmt)]))
        views = set(self.links)
        for _, other in shape.place.values():
            if other is stmt or not any(isinstance(n, gast.Name) and n.id in views
                                        for n in gast.walk(other)):
                continue
            if shape.order[id(other)] >= at or around & set(map(id, shape.loops[id(other)])):
                return False
        done = shape.end[id(stmt)]
        self.dead_after = done if self.dead_after is None else min(self.dead_after, done)
        return True

    def _link_ok(self, link):
        parent = self.facts.array(link.parent)
        if link.kind == "reshape" and not (link.parent == self.root and parent is not None
                                           and parent.contiguous):
            return False  # a reshape copies a non-contiguous array
        if link.kind == "index" and not link.basic_slices and parent is not None and \
                parent.ndim is not None and parent.ndim <= link.integers:
            return False  # an element, not a view
        first, last = self.shape.region(link.stmt)
        reads = read_names(link.value) - {link.parent}
        for name in reads:  # the index means the same every time the view is taken again
            if name in self.names or any(first <= self.shape.order.get(id(stmt), 0) <= last
                                         for stmt, _ in self.shape.binders.get(name, [])):
                return False
        return not self.condition(link) or self.shape.numpy is not None

    def _writes_seen_by(self, link):
        """Every write into the group happens where ``link``'s name is a view taken
        since the last write, or before it is ever taken."""
        first, last = self.shape.region(link.stmt)
        bound_at = self.shape.order[id(link.stmt)]
        loops = set(map(id, self.shape.loops[id(link.stmt)]))
        for stmt, _, _ in self.writes:
            at = self.shape.order[id(stmt)]
            if first <= at <= last or (self.dead_after is not None and at > self.dead_after):
                continue
            if at < bound_at and not loops & set(map(id, self.shape.loops[id(stmt)])):
                continue
            if at < bound_at and not self._read_outside(link.name, first, last):
                # earlier in a loop that takes the view again on every trip, and the
                # view is read only after it is taken (in its region): no read sees
                # a view taken before the write
                continue
            return False
        return True

    def _read_outside(self, name, first, last):
        """Whether a statement outside the numbers ``first``..``last`` reads ``name``
        (a compound statement: its own test, iterable or items only)."""
        for _, stmt in self.shape.place.values():
            if first <= self.shape.order[id(stmt)] <= last:
                continue
            if any(name in read_names(node) for node in _own_parts(stmt)):
                return True
        return False

    def condition(self, link):
        """The tests under which ``link`` is a view (none: always), as trees."""
        parent = self.facts.array(link.parent)
        tests = []
        if link.kind in ("index", "T", "asarray") and parent is None:
            tests.append(self._call("isinstance", name_node(link.parent), self._numpy("ndarray")))
        elif link.kind == "alias" and parent is None and not self.surely_mutable(link.parent):
            kinds = gast.Tuple(elts=[self._numpy("ndarray"), name_node("list"), name_node("dict")],
                               ctx=gast.Load())
            tests.append(self._call("isinstance", name_node(link.parent), kinds))
        if link.kind == "index" and not link.basic_slices and \
                (parent is None or parent.ndim is None):
            ndim = self._call(self._numpy("ndim"), name_node(link.parent))
            tests.append(gast.Compare(left=ndim, ops=[gast.Gt()],
                                      comparators=[gast.Constant(value=link.integers, kind=None)]))
        return tests

    def surely_mutable(self, name):
        """Whether every binding of ``name`` is a list or dict display or
        comprehension: ``b = name`` then always shares its object (``b += [y]``
        extends the one list both names hold), whatever the items are."""
        binders = self.shape.binders.get(name)
        return bool(binders) and all(isinstance(value, (gast.List, gast.ListComp, gast.Dict,
                                                        gast.DictComp))
                                     for _, value in binders)

    def _numpy(self, attribute):
        return gast.Attribute(value=name_node(self.shape.numpy or "np"), attr=attribute,
                              ctx=gast.Load())

    @staticmethod
    def _call(func, *args):
        func = name_node(func) if isinstance(func, str) else func
        return gast.Call(func=func, args=list(args), keywords=[])

    # --- the follow-ups ----------------------------------------------------------------
    def rewrite(self):
        for link in self.members:
            self._flag(link)
        for stmt, name, kind in sorted(self.writes, key=lambda w: -self.shape.order[id(w[0])]):
            self._follow_write(stmt, name)
        self._loop_heads()
        self.mark_calls()

    def mark_calls(self):
        """Tell the inliner which arguments of a helper it writes back
        (``ViewMarks.written_arguments``)."""
        marks = self.shape.marks.written_arguments
        for stmt, name, _ in self.writes:
            entry = self.shape.call_writes.get(id(stmt))
            if entry is not None:
                call, params = entry
                written = marks.get(call, {})
                written.update({p: a for p, a in params.items() if a in self.names})
                marks[call] = written

    def _flag(self, link):
        """``v_shares = <test>`` after the view is taken, when whether it is a view
        depends on a type; each follow-up of the link is conditional on it.  (A
        link's own test suffices: a write is carried up one link at a time.)"""
        tests = self.condition(link)
        if not tests:
            return
        flag = self._fresh(f"{link.name}_shares")
        self.flags[link.name] = flag
        made = [gast.Assign(targets=[store_node(flag)], value=tests[0], type_comment=None)]
        for test in tests[1:]:  # `a and b` is not a value the lowering takes
            made.append(gast.If(test=name_node(flag), orelse=[], body=[
                gast.Assign(targets=[store_node(flag)], value=test, type_comment=None)]))
        self._insert_after(link.stmt, [located(m, link.stmt) for m in made])

    def _fresh(self, base):
        name, k = base, 1
        while name in self.shape.local:
            k += 1
            name = f"{base}{k}"
        self.shape.local.add(name)
        return name

    def _follow_write(self, stmt, name):
        follow, chain = [], [name]
        while name != self.root:  # carry the write up to the root
            link = self.links[name]
            follow.append(self._guarded(self._write_back(link), link.name,
                                       self.shape.marks.write_backs))
            name = link.parent
            chain.append(name)
        at = self.shape.order[id(stmt)]
        for link in self.members:  # take every other view again (not one left
            first, last = self.shape.region(link.stmt)  # behind by a split: unused)
            if link.name not in chain and first <= at <= last and \
                    not any(first <= split < at for split in self.splits):
                follow.append(self._guarded(self._take(link), link.name,
                                              self.shape.marks.takes))
        self.followed_up = self.followed_up or bool(follow)
        self._insert_after(stmt, [located(s, stmt) for s in follow])

    def _loop_heads(self):
        """A loop that writes into the group takes the views it uses again first:
        its carried state is then the root, not the views."""
        written = [self.shape.order[id(stmt)] for stmt, _, _ in self.writes]
        for loop_id, (block, loop) in list(self.shape.place.items()):
            if not isinstance(loop, LOOPS):
                continue
            start, end = self.shape.order[loop_id], self.shape.end[loop_id]
            if not any(start < w <= end for w in written):
                continue
            takes = []
            for link in self.members:
                first, last = self.shape.region(link.stmt)
                if first <= start <= last:
                    takes.append(located(self._guarded(self._take(link), link.name,
                                                     self.shape.marks.takes), loop))
            loop.body[0:0] = takes

    def _write_back(self, link):
        parent, view = name_node(link.parent), name_node(link.name)
        if link.kind == "index":
            target = gast.Subscript(value=name_node(link.parent), slice=copy_node(link.index),
                                    ctx=gast.Store())
            return gast.Assign(targets=[target], value=view, type_comment=None)
        if link.kind == "T":
            value = gast.Attribute(value=view, attr="T", ctx=gast.Load())
        elif link.kind == "reshape":
            shape = gast.Attribute(value=parent, attr="shape", ctx=gast.Load())
            value = self._call(gast.Attribute(value=view, attr="reshape", ctx=gast.Load()), shape)
        else:
            value = view
        return gast.Assign(targets=[store_node(link.parent)], value=value, type_comment=None)

    def _take(self, link):
        value = copy_node(link.value)
        self.followed.add(id(value))
        return gast.Assign(targets=[store_node(link.name)], value=value, type_comment=None)

    def _guarded(self, stmt, member, marks):
        """``stmt`` marked (as data for the fence: ``marks`` is ``ViewMarks.takes``
        or ``ViewMarks.write_backs``), under the member's flag when it has one."""
        marks[stmt] = True
        flag = self.flags.get(member)
        if flag is None:
            return stmt
        return gast.If(test=name_node(flag), body=[stmt], orelse=[])

    def _insert_after(self, stmt, stmts):
        block, _ = self.shape.place[id(stmt)]
        k = next(i for i, s in enumerate(block) if s is stmt)
        block[k + 1:k + 1] = stmts


def _own_parts(stmt):
    """What statement ``stmt`` itself evaluates (of a compound statement: its
    test, iterable or items only; none of a nested scope, whose reads are
    escapes: ``followable()``)."""
    if isinstance(stmt, (gast.If, gast.While)):
        return [stmt.test]
    if isinstance(stmt, gast.For):
        return [stmt.iter]
    if isinstance(stmt, gast.With):
        return [item.context_expr for item in stmt.items]
    if isinstance(stmt, (gast.Try, gast.FunctionDef, gast.ClassDef)):
        return []
    return [stmt]
