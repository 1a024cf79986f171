"""Desugar: a list of tuples appended in a loop and read by item, as one list
per tuple position (scalar replacement of the tuple structure).

    traj = []                          traj_0 = []; traj_1 = []; traj_2 = []
    for t in range(n):                 for t in range(n):
        traj.append((s, a, r))     ->      traj_0.append(s); traj_1.append(a); traj_2.append(r)
    for s, a, r in reversed(traj):     for s, a, r in zip(traj_0[::-1], traj_1[::-1], traj_2[::-1]):
    for step in traj:                  for step_0, step_1, step_2 in zip(traj_0, traj_1, traj_2):
                                           step = (step_0, step_1, step_2)
    traj[t][2], traj[t], len(traj)     traj_2[t], (traj_0[t], traj_1[t], traj_2[t]), len(traj_0)
    for i, step in enumerate(traj, 1): for i_0, step in enumerate(zip(traj_0, traj_1, traj_2)):
                                           i = i_0 + 1

The episode buffer of reinforcement learning code (REINFORCE's ``(s, a, r)``,
RKF45's ``(t, y)`` steps).  The lowering holds a list appended to in a loop of
run-time length as the array of its rows (``rt.append_row``); a row cannot be a
tuple of an array and a number, so such a list read by item was refused.  One
list per position holds exactly what the tuples held, in the same order, and
reading ``traj[t][2]`` is reading ``traj_2[t]``.

Rewritten only where that is all the list is: a local (not a parameter, global,
nonlocal, nor read by a nested function) every binding of which is ``[]`` or a
list of tuple displays (``[(t0, y0)]``; of names, constants and arithmetic of
those where it holds more than one), grown
only by statements ``traj.append((e0, ..., ek))`` of tuple displays of one length
(at least two; no ``*``, ``:=`` or ``out=``; not reading ``traj`` itself), at
least one of them in a loop of run-time length it is not bound in, or each in
such a loop, one over a constant range or one over the rows of an array given
(:func:`grown_across_trips`), and read only by

- ``traj[i][j]`` with ``j`` an integer constant, ``traj[i]`` assigned or given to a
  call (``i`` a name, a constant, ``len`` of a name or arithmetic of those,
  evaluated once per position then), neither written through (``traj[i][0][:] =
  v``) nor an attribute's owner, ``len(traj)``, its truth (``if traj:``, ``not
  traj``, an operand of ``and``/``or`` whose truth alone is used: the truth of
  ``traj_0``, a list of the same length),
- the iterable of a ``for`` that does not grow it: ``traj``, ``reversed(traj)``,
  ``traj[::-1]``, ``enumerate(traj[, start])``, ``enumerate(reversed(traj)[,
  start])`` (a start, which the lowering does
  not count from, added to an index counted from 0: ``i = i_0 + 1``, a start
  other than an int constant bound to a name before the loop, where Python
  evaluates it),

also through an alias ``other = traj`` (a statement of the function's body
binding a local nothing else binds, read only after it, ``traj`` bound by
nothing after it: both name the one list, read as ``traj``), or by nothing (a
list read only by ``len`` is split too: the lowering's array of rows stacks
each tuple, which fails where its items differ in shape, ``(s, r)``).  Anything else (a list read whole, by ``np.asarray(rows)``) is left as
written, for the lowering.  Each list is appended in the order the
tuple's items were evaluated, and every item is evaluated before the first
append reads nothing of the list, so the lists hold what Python's tuples hold.
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.enumerate_starts import counted_from_zero
from tangent_ckpt.compiler.desugar.local_bindings import (SCOPES, builtins_meant,
                                                          names_seen_outside, parameter_names)
from tangent_ckpt.compiler.desugar.view_shape import fresh_name, names_taken

_SIMPLE_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def split_tuple_lists(parsed, structures=None):
    """Rewrite, in ``parsed.node``, each list of tuples described above as one
    list per tuple position.  ``structures``: {parameter: structure} of the
    lists, tuples and dicts the call gives (a loop over one is no array's rows)."""
    fnode = parsed.node
    if not any(isinstance(n, gast.Attribute) and n.attr == "append" for n in gast.walk(fnode)):
        return
    meant = builtins_meant(("len", "reversed", "enumerate", "zip"), fnode, parsed.resolve)
    if "zip" not in meant:
        return
    parents = {}
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    candidates = _candidates(fnode)
    if not candidates:
        return
    taken = names_taken(fnode)
    outside = names_seen_outside(fnode)
    for name in sorted(candidates):
        undo = _read_through_aliases(fnode, name, outside)
        plan = _Plan(name, fnode, parents, meant).make(set(structures or ()))
        if plan is not None:
            names = [fresh_name(f"{name}_{j}", taken) for j in range(plan.width)]
            _Rewrite(plan, names, taken).visit(fnode)
        else:
            undo()


def _read_through_aliases(fnode, name, outside):
    """Read each alias ``other = traj`` of the list (a statement of the function's
    body, binding a local nothing else binds, read only after it, with ``traj``
    bound by no statement after it) as ``traj`` itself: from there on both names
    are the one list Python holds.  The statement is dropped; returns what puts
    it all back (where the list is not split after all)."""
    body = fnode.body
    replaced, dropped = [], []  # (a read, the alias it read), (position, statement)
    for k, stmt in enumerate(body):
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Name) and
                stmt.value.id == name and stmt.targets[0].id != name):
            continue
        alias = stmt.targets[0].id
        if alias in outside:
            continue
        reads, ok = [], True
        for j, other in enumerate(body):
            for n in gast.walk(other):
                if not isinstance(n, gast.Name):
                    continue
                if n.id == alias and n is not stmt.targets[0]:
                    ok = ok and isinstance(n.ctx, gast.Load) and j > k
                    reads.append(n)
                elif n.id == name and j > k and not isinstance(n.ctx, gast.Load):
                    ok = False  # traj rebound after: the alias still names the old list
        if ok:
            replaced += [(n, alias) for n in reads]
            dropped.append((k, stmt))
    for n, _ in replaced:
        n.id = name
    for k, _ in reversed(dropped):
        del body[k]

    def undo():
        for k, stmt in dropped:
            body.insert(k, stmt)
        for n, alias in replaced:
            n.id = alias
    return undo


def _candidates(fnode):
    """The names bound by ``name = []`` in ``fnode``'s own body and by nothing else
    there; none a parameter, ``global``/``nonlocal``, or mentioned in a nested scope."""
    bound, other, nested = set(), set(), set()
    stack = [(s, False) for s in fnode.body]
    while stack:
        node, inner = stack.pop()
        if isinstance(node, (gast.Global, gast.Nonlocal)):
            other.update(node.names)
        if isinstance(node, gast.Name):
            if inner:
                nested.add(node.id)
            elif isinstance(node.ctx, (gast.Store, gast.Del)):
                other.add(node.id)
        if isinstance(node, gast.Assign) and not inner and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.List) and \
                all(isinstance(e, gast.Tuple) for e in node.value.elts):
            bound.add(node.targets[0].id)
            stack.append((node.value, inner))
            continue
        stack.extend((c, inner or isinstance(node, SCOPES)) for c in gast.iter_child_nodes(node))
    return bound - other - nested - set(parameter_names(fnode))


class _Plan:
    """The reads and writes of one candidate list, each with its rewrite, or None
    (:meth:`make`) where one of them is not a form above."""

    def __init__(self, name, fnode, parents, meant):
        self.name, self.fnode, self.parents, self.meant = name, fnode, parents, meant
        self.width = None
        self.bindings, self.appends, self.items, self.lengths, self.loops = [], [], [], [], []
        self.truths = []  # the reads whose truth alone is used (``if traj:``)

    def make(self, given):
        for node in gast.walk(self.fnode):
            if isinstance(node, gast.Name) and node.id == self.name and not self._take(node):
                return None
        in_loop = any(grown_across_trips(s, self.parents, self.fnode, self.bindings)
                      for s in self.appends) or \
            bool(self.appends) and all(  # each in a range(200) or the like: rows too
                grown_across_trips(s, self.parents, self.fnode, self.bindings, constants=given)
                for s in self.appends)
        grown_in_loop = any(self._grows(loop) for loop, _ in self.loops)
        if not (in_loop and self.width) or grown_in_loop:
            return None
        return self

    def _take(self, node):
        parent = self.parents.get(node)
        if isinstance(node.ctx, gast.Store):  # (only `name = [...]`: see _candidates)
            self.bindings.append(parent)
            return all(self._tuple(t, pure=len(parent.value.elts) > 1)
                       for t in parent.value.elts)
        if isinstance(parent, gast.Attribute) and parent.attr == "append":
            return self._append(parent)
        if isinstance(parent, gast.Call) and node in parent.args and len(parent.args) == 1 and \
                not parent.keywords and _called(parent, "len", self.meant):
            self.lengths.append(parent)
            return True
        if isinstance(parent, gast.Subscript) and parent.value is node:
            return self._subscript(parent)
        if self._tested(node):  # if traj: -- the truth of its length
            self.truths.append(node)
            return True
        if isinstance(parent, gast.For) and parent.iter is node:
            self.loops.append((parent, "forward"))
            return True
        if isinstance(parent, gast.Call) and parent.args and parent.args[0] is node:
            loop = self.parents.get(parent)
            backwards = _called(parent, "reversed", self.meant) and len(parent.args) == 1 and \
                not parent.keywords
            if backwards and self._enumerated(loop):  # enumerate(reversed(traj))
                self.loops.append((self.parents.get(loop), "enumerate_reversed"))
                return True
            if isinstance(loop, gast.For) and loop.iter is parent:
                if backwards:
                    self.loops.append((loop, "reversed"))
                elif self._enumerated(parent):
                    self.loops.append((loop, "enumerate"))
                else:
                    return False
                return True
        return False

    def _tested(self, node):
        """Is only ``node``'s truth used: the test of an ``if``, ``while``, ``assert``
        or ``a if c else b``, the operand of ``not``, or an operand of ``and`` /
        ``or`` whose own truth alone is used?"""
        parent = self.parents.get(node)
        if isinstance(parent, (gast.If, gast.While, gast.IfExp, gast.Assert)):
            return parent.test is node
        if isinstance(parent, gast.UnaryOp) and isinstance(parent.op, gast.Not):
            return True
        return isinstance(parent, gast.BoolOp) and self._tested(parent)

    def _enumerated(self, call):
        """Is ``call`` ``enumerate(..)`` of one argument and maybe a start, the
        iterable of a ``for``?"""
        loop = self.parents.get(call)
        return isinstance(call, gast.Call) and _called(call, "enumerate", self.meant) and \
            len(call.args) + len(call.keywords) <= 2 and \
            all(k.arg == "start" for k in call.keywords) and \
            isinstance(loop, gast.For) and loop.iter is call

    def _append(self, attribute):
        call = self.parents.get(attribute)
        statement = self.parents.get(call)
        if not (isinstance(call, gast.Call) and call.func is attribute and
                isinstance(statement, gast.Expr) and len(call.args) == 1 and
                not call.keywords):
            return False
        if not self._tuple(call.args[0]):
            return False
        self.appends.append(statement)
        return True

    def _tuple(self, display, pure=False):
        """Is ``display`` a tuple display of the list's width (the first sets it),
        of items that neither read the list nor bind or write anything (``pure``:
        names, constants and arithmetic of those, whose order of evaluation does
        not matter: ``[(t0, y0), (t1, y1)]`` is ``[t0, t1]`` and ``[y0, y1]``)?"""
        if not isinstance(display, gast.Tuple) or len(display.elts) < 2 or \
                any(isinstance(e, gast.Starred) for e in display.elts) or \
                any(isinstance(n, gast.Name) and n.id == self.name or
                    isinstance(n, gast.NamedExpr) or
                    isinstance(n, gast.keyword) and n.arg == "out" for n in gast.walk(display)):
            return False
        if pure and not all(_pure(e) for e in display.elts):
            return False
        if self.width not in (None, len(display.elts)):
            return False
        self.width = len(display.elts)
        return True

    def _subscript(self, subscript):
        if not isinstance(subscript.ctx, gast.Load):
            return False
        loop = self.parents.get(subscript)
        if _is_reversal(subscript.slice):  # for ... in traj[::-1]
            if isinstance(loop, gast.For) and loop.iter is subscript:
                self.loops.append((loop, "reversed"))
                return True
            return False
        if not _simple_index(subscript.slice, self.meant) or self._written_through(subscript):
            return False
        outer = self.parents.get(subscript)
        positioned = isinstance(outer, gast.Subscript) and outer.value is subscript and \
            _position(outer.slice, 2 ** 30) is not None
        if not positioned and not (isinstance(outer, gast.Assign) and outer.value is subscript or
                                   isinstance(outer, gast.Call) and subscript in outer.args):
            return False  # (`traj[t] is u`: the display made again is another tuple)
        self.items.append(subscript)
        return True

    def _written_through(self, subscript):
        """Is ``traj[i]`` the start of a write (``traj[i][0][:] = v``) or of an
        attribute (``traj[i][0].fill(v)``), which may change an array it holds?"""
        node, parent = subscript, self.parents.get(subscript)
        while isinstance(parent, (gast.Subscript, gast.Attribute)) and parent.value is node:
            if isinstance(parent, gast.Attribute) or not isinstance(parent.ctx, gast.Load):
                return True
            node, parent = parent, self.parents.get(parent)
        return False

    def _grows(self, loop):
        """Does ``loop`` (over the list) append to it (Python's iterator would see that)?"""
        inside = set(map(id, gast.walk(loop)))
        return any(id(s) in inside for s in self.appends + self.bindings)


class _Rewrite(gast.NodeTransformer):
    """The rewrite of one list (:class:`_Plan`) into the lists ``names``."""

    def __init__(self, plan, names, taken):
        self.plan, self.names, self.taken = plan, names, taken
        self.bindings = set(map(id, plan.bindings))
        self.appends = set(map(id, plan.appends))
        self.items = set(map(id, plan.items))
        self.lengths = set(map(id, plan.lengths))
        self.truths = set(map(id, plan.truths))
        self.loops = {id(loop): kind for loop, kind in plan.loops}

    def _name(self, j):
        return gast.Name(id=self.names[j], ctx=gast.Load(), annotation=None, type_comment=None)

    def visit_Assign(self, node):
        if id(node) in self.bindings:  # traj = [(t0, y0)] -> traj_0 = [t0]; traj_1 = [y0]
            tuples = [self.visit(t) for t in node.value.elts]
            return [gast.copy_location(
                gast.Assign(targets=[gast.Name(id=n, ctx=gast.Store(), annotation=None,
                                               type_comment=None)],
                            value=gast.List(elts=[t.elts[j] for t in tuples], ctx=gast.Load()),
                            type_comment=None), node)
                for j, n in enumerate(self.names)]
        return self.generic_visit(node)

    def visit_Expr(self, node):
        if id(node) in self.appends:
            elts = [self.visit(e) for e in node.value.args[0].elts]
            return [gast.copy_location(gast.Expr(value=gast.Call(
                func=gast.Attribute(value=self._name(j), attr="append", ctx=gast.Load()),
                args=[e], keywords=[])), node) for j, e in enumerate(elts)]
        return self.generic_visit(node)

    def visit_For(self, node):
        kind = self.loops.get(id(node))
        if kind is not None:
            lists = [self._name(j) for j in range(self.plan.width)]
            if kind in ("reversed", "enumerate_reversed"):
                lists = [gast.Subscript(value=n, slice=gast.Slice(
                    lower=None, upper=None, step=gast.UnaryOp(
                        op=gast.USub(), operand=gast.Constant(value=1, kind=None))),
                    ctx=gast.Load()) for n in lists]
            zipped = gast.Call(func=gast.Name(id="zip", ctx=gast.Load(), annotation=None,
                                              type_comment=None), args=lists, keywords=[])
            start = None
            if kind.startswith("enumerate"):
                node.iter.args[0] = zipped
                start = self._counted_from_zero(node)
            else:
                node.iter = gast.copy_location(zipped, node.iter)
            gast.fix_missing_locations(node.iter)
            self._unpack_target(node, kind)
            if isinstance(start, gast.Assign):  # (its reads of the list rewritten too)
                return [self.visit(start), self.generic_visit(node)]
        return self.generic_visit(node)

    def _counted_from_zero(self, loop):
        """``for i, x in enumerate(traj, start)`` -> ``for i_0, x in enumerate(...):
        i = i_0 + start`` (``enumerate_starts.counted_from_zero``; the iterable,
        a ``zip`` of this pass's lists, is evaluated with no effect)."""
        return counted_from_zero(loop, self.taken)

    def _unpack_target(self, loop, kind):
        """``for step in zip(...)`` -> ``for step_0, step_1 in zip(...): step =
        (step_0, step_1)``: one variable per list (the tuple made again from the
        same items, as the lowering reads a loop over ``zip``)."""
        owner, field = (loop.target, 1) if kind.startswith("enumerate") else (loop, None)
        if field is not None:
            if not (isinstance(owner, gast.Tuple) and len(owner.elts) == 2):
                return
            target = owner.elts[1]
        else:
            target = loop.target
        if not isinstance(target, gast.Name):
            return
        parts = [fresh_name(f"{target.id}_{j}", self.taken) for j in range(self.plan.width)]
        unpacked = gast.Tuple(elts=[gast.Name(id=p, ctx=gast.Store(), annotation=None,
                                              type_comment=None) for p in parts],
                              ctx=gast.Store())
        if field is not None:
            owner.elts[1] = unpacked
        else:
            loop.target = unpacked
        gast.copy_location(unpacked, target)
        bound = gast.Assign(targets=[target], value=gast.Tuple(
            elts=[gast.Name(id=p, ctx=gast.Load(), annotation=None, type_comment=None)
                  for p in parts], ctx=gast.Load()), type_comment=None)
        loop.body.insert(0, gast.fix_missing_locations(gast.copy_location(bound, loop)))

    def visit_Name(self, node):
        if id(node) in self.truths:  # if traj: -> if traj_0: (the same length)
            return gast.copy_location(self._name(0), node)
        return node

    def visit_Call(self, node):
        if id(node) in self.lengths:
            node.args = [gast.copy_location(self._name(0), node.args[0])]
            return node
        return self.generic_visit(node)

    def visit_Subscript(self, node):
        inner = node.value
        if isinstance(inner, gast.Subscript) and id(inner) in self.items:
            j = _position(node.slice, self.plan.width)
            if j is not None and isinstance(node.ctx, gast.Load):  # traj[t][2] -> traj_2[t]
                return gast.copy_location(gast.Subscript(
                    value=self._name(j), slice=self.visit(inner.slice), ctx=gast.Load()), node)
        if id(node) in self.items:  # traj[t] -> (traj_0[t], traj_1[t], ...)
            index = self.visit(node.slice)
            display = gast.Tuple(elts=[gast.Subscript(value=self._name(j),
                                                      slice=copy.deepcopy(index), ctx=gast.Load())
                                       for j in range(self.plan.width)], ctx=gast.Load())
            return gast.fix_missing_locations(gast.copy_location(display, node))
        return self.generic_visit(node)


def grown_across_trips(statement, parents, fnode, bindings, depth=0, constants=None):
    """Does ``statement`` (an append) run in a loop whose trip count is known only
    at run time -- a ``while``; a ``for`` over ``range(...)`` of a bound read from
    a parameter (``range(T)``, ``n = T - 1; range(n)``); with ``constants`` (the
    parameters the call gives as lists, tuples or dicts, a set) also of constants
    (``range(200)``, which the lowering runs as a loop too unless its body
    indexes a container), and a ``for`` over a parameter not among those (the
    rows of an array: ``for x in xs``); a ``for`` over a list grown so itself (``for
    r in reversed(rewards)``) -- that none of the list's ``bindings`` is inside
    (the list grows from trip to trip)?  There the lowering holds the list as
    its rows (stacking each tuple, which fails where its items differ in shape);
    a list grown in a loop it unrolls (over a container) is a list of known
    length, which it reads by item as written."""
    loop = parents.get(statement)
    while loop is not None and loop is not fnode and not isinstance(loop, (gast.For, gast.While)):
        loop = parents.get(loop)
    if loop is None or loop is fnode:
        return False
    inside = set(map(id, gast.walk(loop)))
    if any(id(b) in inside for b in bindings):
        return False
    if isinstance(loop, gast.While):
        return True
    it = loop.iter
    while isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
            it.func.id in ("reversed", "enumerate") and it.args or \
            isinstance(it, gast.Subscript) and _is_reversal(it.slice):
        it = it.args[0] if isinstance(it, gast.Call) else it.value
    if isinstance(it, gast.Name):
        if constants is not None and it.id in set(parameter_names(fnode)) - constants:
            return True  # for x in xs: the rows of an array given
        return depth < 3 and _grown_list(it.id, parents, fnode, depth + 1)
    if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and
            it.func.id == "range"):
        return False
    if constants is not None and all(isinstance(a, gast.Constant) for a in it.args):
        return True  # range(200): a loop the lowering runs, its list held as rows too
    params = set(parameter_names(fnode))
    derived = {t.id for n in gast.walk(fnode) if isinstance(n, gast.Assign)
               for t in n.targets if isinstance(t, gast.Name) and
               _names_outside_len(n.value) & params}
    return bool(any(_names_outside_len(a) & (params | derived) for a in it.args))


def _grown_list(name, parents, fnode, depth):
    """Is ``name`` a local bound only to list displays and appended to in a loop
    of run-time length (:func:`grown_across_trips`)?"""
    if name in parameter_names(fnode):
        return False
    bindings, appends = [], []
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and node.id == name and \
                isinstance(node.ctx, (gast.Store, gast.Del)):
            owner = parents.get(node)
            if not (isinstance(owner, gast.Assign) and owner.targets == [node] and
                    isinstance(owner.value, gast.List)):
                return False
            bindings.append(owner)
        if isinstance(node, gast.Expr) and isinstance(node.value, gast.Call) and \
                isinstance(node.value.func, gast.Attribute) and \
                node.value.func.attr == "append" and \
                isinstance(node.value.func.value, gast.Name) and node.value.func.value.id == name:
            appends.append(node)
    return any(grown_across_trips(a, parents, fnode, bindings, depth) for a in appends)


def _names_outside_len(node):
    """The names ``node`` reads, those only inside a ``len(...)`` call left out (the
    length of a list argument is known when compiling; an array's too, but left
    out all the same: a missed split keeps the lowering's refusal)."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id == "len":
        return set()
    if isinstance(node, gast.Name):
        return {node.id}
    found = set()
    for child in gast.iter_child_nodes(node):
        found |= _names_outside_len(child)
    return found


def _called(call, builtin, meant):
    return isinstance(call.func, gast.Name) and call.func.id == builtin and builtin in meant


def _is_reversal(index):
    """``[::-1]``."""
    return isinstance(index, gast.Slice) and index.lower is None and index.upper is None and \
        isinstance(index.step, gast.UnaryOp) and isinstance(index.step.op, gast.USub) and \
        isinstance(index.step.operand, gast.Constant) and index.step.operand.value == 1 and \
        type(index.step.operand.value) is int


def _pure(node):
    """A name, a constant, or arithmetic of those."""
    if isinstance(node, (gast.Name, gast.Constant)):
        return True
    if isinstance(node, gast.UnaryOp):
        return _pure(node.operand)
    if isinstance(node, gast.BinOp):
        return _pure(node.left) and _pure(node.right)
    return False


def _simple_index(index, meant):
    """A name, an integer constant, ``len`` of a name, or arithmetic of those:
    evaluated again, the same value, and no effect."""
    if isinstance(index, gast.Name):
        return True
    if isinstance(index, gast.Call) and _called(index, "len", meant) and \
            len(index.args) == 1 and isinstance(index.args[0], gast.Name) and \
            not index.keywords:
        return True
    if isinstance(index, gast.Constant):
        return type(index.value) is int
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub):
        return _simple_index(index.operand, meant)
    if isinstance(index, gast.BinOp) and isinstance(index.op, _SIMPLE_OPS):
        return _simple_index(index.left, meant) and _simple_index(index.right, meant)
    return False


def _position(index, width):
    """The tuple position an integer constant ``index`` names (``-1``: the last),
    or None."""
    negative = isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub)
    value = index.operand if negative else index
    if not (isinstance(value, gast.Constant) and type(value.value) is int):
        return None
    j = -value.value if negative else value.value
    return j % width if -width <= j < width else None
