"""Desugar: list, dict comprehensions and generator expressions written as the
loop Python runs, before the statement that reads them.

``y = h * sum([a[j] * k[j] for j in range(i) if j != 2])`` becomes::

    y_items = []
    for j in range(i):
        if j != 2:
            y_items.append(a[j] * k[j])
    y = h * sum(y_items)

and ``ys = [f(w) for w in ws]`` (``ys`` not read inside) fills ``ys`` itself
(``ys = []`` and the loop).  A dict comprehension ``d = {k: f(v) for k, v in
p.items()}`` is ``d = {}`` and the loop storing ``d[k] = f(v)`` (a key that is not
a name or constant is first bound to ``d_key``: Python evaluates the key before
the value).  A comprehension's variables are its own (Python 3):
one that the function also uses elsewhere gets a fresh name.  The rest of the
compiler then sees loops, ``append`` and stores only: the lowering unrolls a loop over a
container, and the loops this pass wrote over a range of constants
(``ParsedFunction.comprehension_loops``), into a list or dict of static structure, and
runs the others as loops filling a list held as its rows (its items named
after the statement's target, ``ParsedFunction.comprehension_appends``) or a dict
of keys known at run time.  The ``if`` of a
comprehension's condition is declared too (``ParsedFunction.comprehension_conditions``,
``if`` -> the loop of its generator): the lowering refuses one known only at run
time in an unrolled loop with the comprehension's own message.

A comprehension is written out where Python evaluates it in the value of an
assignment (``y: float = ...`` too), augmented assignment, ``return`` or expression
statement, or a ``for`` loop's iterable.  A call evaluated before it that may change something
(not one that only computes: ``np.sum(...)``, ``len(...)``; ``np.random.normal()``
draws) is first written before the statement in a variable of its own, with each
operand Python evaluated before it (``y_step = model.step(x)``): evaluated once,
in Python's order.
A ``for`` loop over a generator expression (or ``enumerate`` of one) is the loop
over the generator's iterable computing the item at the top of each trip, as Python
does (``for v in vs: y = f(s, v)``: the item reads what the trip before rebound); a
generator another call hands a loop lazily (``zip``, ``filter``) whose body changes
what it reads is refused.  A generator expression is written out where it is
consumed at once (a call's argument, unpacked); one bound to a name is first moved to
the later statement of its block that reads it (Python runs its items there; its
first iterable, evaluated where it is bound, stays there as ``g_iter = ...``
unless it is a name not bound again before the read); read elsewhere, refused.
A conditional expression with a comprehension in an arm, ``a if c else [...]``,
is written as an ``if`` statement choosing a variable (``y_chosen``), its arms'
comprehensions written out in turn.
A comprehension whose first ``for`` iterates a call of the user's generator
function is written so in a run of its own before ``inline_functions.py``
(:func:`over_user_generators`), which writes the loop over the generator as the
generator's statements, the item appended at each ``yield``.
The rest stays in place, where the lowering refuses it at its line (a
``lambda`` the inliner left, a set comprehension, after a call whose operands
cannot be kept: a method of an attribute's object, ``a[i] += ...``); and a
condition (an ``if`` or ``while`` test, a comparison, ``not``, ``and``/``or``)
keeps its comprehensions as written, a value without derivative.
"""

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import COMPREHENSIONS, local_names, root_name
from tangent_ckpt.compiler.desugar.pure_values import computing_call
from tangent_ckpt.compiler.desugar.user_generators import user_generator_call
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    fresh_name, located, name_node, names_taken, store_node,
)
from tangent_ckpt.errors import UnsupportedSyntaxError

#: the expressions whose parts Python evaluates in the order of their fields (not
#: a comparison, ``not``, ``and``/``or``: the lowering keeps those as written, a
#: value without derivative, comprehensions and all)
_IN_ORDER = (gast.BinOp, gast.Call, gast.Subscript, gast.Attribute, gast.Tuple, gast.List,
             gast.Slice, gast.keyword, gast.Dict, gast.Starred)
_BLOCKS = ("body", "orelse", "finalbody")


def write_comprehension_loops(parsed, chosen=None, fnode=None):
    """Write the comprehensions of ``fnode`` (by default ``parsed.node``; a
    helper's template, ``parsed`` its module's) as loops (in place), declaring
    the loops and ``if``s written on ``parsed``.  ``chosen``: a test of a
    comprehension; where given, only those it passes are written (the rest, and
    the ``for`` loops over generator expressions, left for a later run)."""
    fnode = fnode if fnode is not None else parsed.node
    if not any(isinstance(n, (gast.ListComp, gast.DictComp, gast.GeneratorExp)) and
               (chosen is None or chosen(n)) for n in gast.walk(fnode)):
        return
    _Writer(parsed, names_taken(fnode), chosen, fnode).block(fnode.body)


def over_user_generators(parsed, fnode=None):
    """The test, for :func:`write_comprehension_loops`, of a comprehension whose
    first ``for`` iterates a call of the user's generator function
    (:func:`~.user_generators.user_generator_call`), or ``enumerate`` of one:
    written as a loop before ``inline_functions.py``, which writes a loop over
    such a generator as the generator's statements (``sum(np.sum(s) for s in
    trajectory(x, n))``)."""
    called = user_generator_call(parsed, fnode)

    def chosen(node):
        it = node.generators[0].iter
        return called(it) or isinstance(it, gast.Call) and isinstance(it.func, gast.Name) \
            and it.func.id == "enumerate" and bool(it.args) and called(it.args[0])
    return chosen


class _Writer:

    def __init__(self, parsed, taken, chosen=None, fnode=None):
        self.parsed = parsed
        self.fnode = fnode if fnode is not None else parsed.node
        self.taken = taken
        self.chosen = chosen  # None: every comprehension
        local = local_names(self.fnode)
        self.static_value = lambda node: resolve_dotted(node, parsed.resolve, local)

    def block(self, stmts):
        k = 0
        while k < len(stmts):
            s = stmts[k]
            if isinstance(s, gast.FunctionDef):  # a nested def: its own statements
                self.block(s.body)
                k += 1
                continue
            if isinstance(s, (gast.AsyncFunctionDef, gast.ClassDef)):
                k += 1
                continue
            if isinstance(s, gast.For) and self.chosen is None:
                fused = self.fused_loop(s)
                if fused is not None:
                    stmts[k] = fused
                    continue  # (written out afresh: its iterable, its body)
                self.refuse_lazy_items_the_body_changes(s)
            for field in _BLOCKS:
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    self.block(inner)
            if _bound_generator(s) and self.chosen is None and self.moved_to_its_read(stmts, k):
                continue  # (stmts[k] is now what came after it)
            before = []
            if _fills_its_target(s, self.fnode) and self.written(s.value):
                self.loop(s.value, _hint(s, self.fnode), before, own=s.targets[0].id)
                self.block(before)  # comprehensions in the element or later iterables
                stmts[k:k + 1] = before
                k += len(before)
                continue
            if _evaluated_first(s):
                hoisting = _Hoisting(self, s, _hint(s, self.fnode), before)
                if isinstance(s, gast.For):
                    s.iter = hoisting.visit(s.iter)
                else:
                    s.value = hoisting.visit(s.value)
            if before:
                self.block(before)
                stmts[k:k] = before
                k += len(before)
            k += 1

    def written(self, node):
        """Is the comprehension ``node`` one this run writes?"""
        return self.chosen is None or self.chosen(node)

    def moved_to_its_read(self, stmts, k):
        """``g = (f(x) for x in xs)``: Python runs the items where ``g`` is read.  The
        generator expression is moved there (the later statement of this block
        that reads ``g``, once: one_shot_iterators.py refuses a second read), where
        it reads the names it reads in Python; its first iterable, which Python
        evaluates where ``g`` is bound, stays there (``g_iter = ...``) unless it is
        a name not bound again before the read.  A generator read nowhere is left
        as it is; one read elsewhere (after the block, in a loop of its own) is
        refused: the rest of the compiler would compute its items where it is
        bound, before what runs in between."""
        s = stmts[k]
        name, gen = s.targets[0].id, s.value
        for j in range(k + 1, len(stmts)):
            later = stmts[j]
            loads = [n for n in gast.walk(later) if isinstance(n, gast.Name) and n.id == name
                     and isinstance(n.ctx, gast.Load)]
            stored = any(isinstance(n, gast.Name) and n.id == name and
                         not isinstance(n.ctx, gast.Load) for n in gast.walk(later))
            if not loads and stored:
                return False  # bound again before it is read: never read
            if not loads:
                continue
            if len(loads) == 1 and not stored and _read_once(later, loads[0]):
                first = gen.generators[0]
                if not (isinstance(first.iter, gast.Constant) or
                        isinstance(first.iter, gast.Name) and
                        not _stores(stmts[k + 1:j + 1], first.iter.id)):
                    iterable = fresh_name(f"{name}_iter", self.taken)
                    s.targets[0] = gast.copy_location(store_node(iterable), s.targets[0])
                    s.value, first.iter = first.iter, gast.copy_location(
                        name_node(iterable), first.iter)
                else:
                    del stmts[k]
                    j -= 1
                _replace(stmts[j], loads[0], gen)
                return True
            break
        if not any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
                   for n in gast.walk(self.fnode)):
            return False
        raise self.parsed.error(
            UnsupportedSyntaxError, f"a generator expression bound to '{name}' that is not "
            f"read once by a later statement of the same block", s,
            construct="generator expression bound to a name",
            hint=f"write it where it is read (sum(f(x) for x in xs)), or make '{name}' a list")

    def fused_loop(self, s):
        """``for y in (f(s, v) for v in vs if c): body`` as the loop Python runs::

            for v in vs:
                if c:
                    y = f(s, v)
                    body

        Python computes each item when the loop asks for it, after the body of the
        trip before: an item reads what that body rebound (``s = s + y``) and draws
        after its draws.  Written out whole before the loop, the items would read
        the values from before it.  Several ``for`` clauses are nested loops, so a
        ``break`` of the body would leave only the innermost: such a loop is not
        fused (None), nor an ``async`` one."""
        gen, target, counted = s.iter, s.target, None
        if _enumerated_generator(s):  # for k, y in enumerate(f(v) for v in vs)
            gen, counted = s.iter.args[0], s.iter
            target = s.target.elts[1]
        if not isinstance(gen, gast.GeneratorExp) or \
                any(getattr(g, "is_async", 0) for g in gen.generators) or \
                len(gen.generators) > 1 and _breaks(s.body):
            return None
        self._own_variables(gen)
        body = [_at(gast.Assign(targets=[target], value=gen.elt, type_comment=None),
                    target)] + s.body
        if counted is not None:  # for k, v in enumerate(vs): y = f(v)
            first = gen.generators[0]
            counted.args[0] = first.iter
            first.iter = counted
            first.target = _at(gast.Tuple(elts=[s.target.elts[0], first.target],
                                          ctx=gast.Store()), s.target)
        for g in reversed(gen.generators):
            for test in reversed(g.ifs):
                body = [_at(gast.If(test=test, body=body, orelse=[]), test)]
            body = [_at(gast.For(target=g.target, iter=g.iter, body=body, orelse=[],
                                 type_comment=None), s)]
        body[0].orelse = s.orelse
        return body[0]

    def refuse_lazy_items_the_body_changes(self, s):
        """``for k, y in zip(f(s, v) for v in vs, ws): s = ...``: a generator expression
        the loop's iterable reads lazily (through ``zip``, ``enumerate``, ``filter``,
        ``map``, ``iter``) computes each item at its trip, reading what the body
        changed -- unless it reads nothing the body stores into, calls a method of,
        or draws beside.  Written out whole before the loop it would not: refused
        (``fused_loop`` writes the plain and the enumerated forms as Python runs
        them)."""
        lazy = list(_lazily_read(s.iter))
        if not lazy:
            return
        body_stores = {root_name(n) for st in [s.target] + s.body for n in gast.walk(st)
                       if isinstance(n, (gast.Name, gast.Subscript, gast.Attribute)) and
                       isinstance(n.ctx, (gast.Store, gast.Del))}
        body_calls = [n for st in s.body for n in gast.walk(st) if isinstance(n, gast.Call)]
        changed = body_stores | {root_name(c.func.value) for c in body_calls
                                 if isinstance(c.func, gast.Attribute)}
        acting = [c for c in body_calls if not self.only_computes(c)]
        for gen in lazy:
            own = {n.id for g in gen.generators for n in gast.walk(g.target)
                   if isinstance(n, gast.Name)}
            first = {id(n) for n in gast.walk(gen.generators[0].iter)}
            parts = [n for n in gast.walk(gen) if id(n) not in first]
            reads = {n.id for n in parts if isinstance(n, gast.Name) and
                     isinstance(n.ctx, gast.Load)} - own
            draws = any(isinstance(n, gast.Call) and not self.only_computes(n) for n in parts)
            if reads & changed or draws and acting:
                why = ", ".join(sorted(reads & changed)) or "a call that may change something"
                raise self.parsed.error(
                    UnsupportedSyntaxError, "a generator expression read lazily by a for "
                    f"loop whose body changes what it reads ({why})", s,
                    construct="generator expression in a for loop's iterable",
                    hint="loop over the generator's own iterable and compute the item in "
                         "the body (for v in vs: y = f(v))")

    def only_computes(self, call):
        """Does ``call`` compute a value and change nothing, not even the state of
        a random generator (``np.random.normal()``: a comprehension drawing too must
        draw after it)?"""
        fn = self.static_value(call.func)
        return computing_call(call, self.static_value) and \
            not isinstance(getattr(fn, "__self__", None),
                           (np.random.Generator, np.random.RandomState)) and \
            not str(getattr(fn, "__module__", "") or "").startswith("numpy.random")

    def loop(self, node, hint, before, own=None):
        """``items = []`` and the loop appending to it (``items = {}`` and the loop
        storing ``items[key] = value`` for a dict comprehension), added to
        ``before``; the name ``items`` to read in the comprehension's place."""
        items = own or fresh_name(f"{hint.lstrip('_') or 'items'}_items", self.taken)
        self._own_variables(node)
        if isinstance(node, gast.DictComp):
            body = self._store(node, items)
            empty = gast.Dict(keys=[], values=[])
        else:
            stmt = gast.copy_location(gast.Expr(value=gast.copy_location(gast.Call(
                func=gast.copy_location(gast.Attribute(value=name_node(items), attr="append",
                                                       ctx=gast.Load()), node),
                args=[node.elt], keywords=[]), node)), node)
            for n in gast.walk(stmt.value.func):
                gast.copy_location(n, node)
            self.parsed.comprehension_appends[stmt] = hint
            body, empty = [stmt], gast.List(elts=[], ctx=gast.Load())
        conditions = []
        for g in reversed(node.generators):
            for test in reversed(g.ifs):
                body = [gast.copy_location(gast.If(test=test, body=body, orelse=[]), node)]
                conditions.append(body[0])
            body = [gast.copy_location(gast.For(target=g.target, iter=g.iter, body=body,
                                                orelse=[], type_comment=None), node)]
            self.parsed.comprehension_loops[body[0]] = True
            for written in conditions:
                self.parsed.comprehension_conditions[written] = body[0]
            conditions = []
        init = located(gast.Assign(targets=[store_node(items)], value=empty,
                                   type_comment=None), node)
        before += [init] + body
        return gast.copy_location(name_node(items), node)

    def _store(self, node, items):
        """``items[key] = value``: a dict comprehension's item.  Python evaluates
        its key before its value; a key that is not a plain name or constant is
        first bound to a variable of its own (``items_key = key``), so a value
        computed by a call still runs after it."""
        key = node.key
        body = []
        if not _plain(key):
            name = fresh_name(f"{items}_key", self.taken)
            body.append(_at(gast.Assign(targets=[_at(store_node(name), key)], value=key,
                                        type_comment=None), key))
            key = gast.copy_location(name_node(name), node)
        target = _at(gast.Subscript(value=_at(name_node(items), node), slice=key,
                                    ctx=gast.Store()), node)
        body.append(_at(gast.Assign(targets=[target], value=node.value, type_comment=None),
                        node))
        return body

    def _own_variables(self, node):
        """The comprehension's variables that the function uses elsewhere, renamed
        inside it (its first iterable is evaluated outside its scope)."""
        inside = {id(n) for n in gast.walk(node)} - \
            {id(n) for n in gast.walk(node.generators[0].iter)}
        names = {n.id for g in node.generators for n in gast.walk(g.target)
                 if isinstance(n, gast.Name)}
        elsewhere = {n.id for n in gast.walk(self.fnode)
                     if isinstance(n, gast.Name) and id(n) not in inside}
        rename = {name: fresh_name(name, self.taken) for name in sorted(names & elsewhere)}
        if not rename:
            return
        elements = [node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt]
        scoped = elements + [g.target for g in node.generators] + \
            [c for g in node.generators for c in g.ifs] + \
            [g.iter for g in node.generators[1:]]
        for part in scoped:
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and n.id in rename and \
                        not _in_own_scope(n, part, rename):
                    n.id = rename[n.id]


class _Hoisting:
    """Writes out the comprehensions of one statement's part that Python evaluates
    before anything but names, constants and the operators around them.  A call
    that may change something (``model.step(x)``, a draw) before a comprehension
    the walk would still write out is first written before the statement with
    what Python evaluated before it (``y_step = model.step(x)``, each computed
    operand in a variable of its own: evaluated once, in Python's order); where
    that cannot be done exactly the first such call ends the walk (``clear``
    false) and what follows it stays in place."""

    def __init__(self, writer, stmt, hint, before):
        self.writer, self.hint, self.before = writer, hint, before
        self.owners = [stmt]  # the nodes around the one visited
        self.clear = True
        self.done = []  # (owner, field, position): the parts Python has evaluated
        self.pending = set()  # the comprehensions the walk would still write out

    def visit(self, node):
        if len(self.owners) == 1:
            self.pending = {id(n) for n in _reached(node, self.owners[0])
                            if self.writer.written(n)}
        return self._visit(node)

    def _visit(self, node):
        if not self.clear or not isinstance(node, (gast.expr, gast.keyword)):
            return node
        if _written_out(node, self.owners[-1]) and not self.writer.written(node):
            self.clear = False  # (left in place: what comes after it stays too)
            return node
        if _written_out(node, self.owners[-1]):
            self.pending.discard(id(node))
            return self.writer.loop(node, self.hint, self.before)
        if isinstance(node, gast.IfExp) and self.clear and self._evaluated_once() and \
                any(isinstance(n, COMPREHENSIONS) for arm in (node.body, node.orelse)
                    for n in gast.walk(arm)):
            return self._written_as_if(node)
        if not _in_order(node):
            self.clear = _plain(node) or _only_operators(node)
            return node
        self.owners.append(node)
        for field, k in _parts(node):  # in Python's order of evaluation
            _set_slot(node, field, k, self._visit(_slot(node, field, k)))
            self.done.append((node, field, k))
        self.owners.pop()
        if isinstance(node, gast.Call) and self.clear and not self.writer.only_computes(node):
            if self.pending and self._evaluated_once():
                return self._spill(node)
            self.clear = False  # a call ran: what comes after it may see what it did
        return node

    def _evaluated_parts(self):
        """The parts Python has evaluated whose owner is still being evaluated (the
        largest ones), each with its slot."""
        open_owners = {id(o) for o in self.owners}
        return [(o, f, k) for o, f, k in self.done if id(o) in open_owners]

    def _evaluated_once(self):
        """Can what Python evaluated before the call be kept in variables?  Not a
        method looked up on something other than a name (``self.opt.step(...)``:
        the call could rebind ``self.opt``), not in ``a[i] += ...``."""
        stmt = self.owners[0]
        if isinstance(stmt, gast.AugAssign) and not isinstance(stmt.target, gast.Name):
            return False  # a[i] += ...: Python reads a[i] before the value
        for owner, field, k in self._evaluated_parts():
            part = _slot(owner, field, k)
            if isinstance(owner, gast.Call) and field == "func" and \
                    not isinstance(part, gast.Name) and not self.writer.static_value(part) \
                    and not (isinstance(part, gast.Attribute) and
                             isinstance(part.value, gast.Name)):
                return False
        return True

    def _spill(self, call):
        self._keep_evaluated()
        return self._variable(call, _called(call))

    def _written_as_if(self, node):
        """``a if c else [f(w) for w in ws]``, an arm holding a comprehension: what
        Python evaluated before it kept in variables, then ``if c: v = a`` /
        ``else: v = [...]`` before the statement (its arms' comprehensions are
        written out in turn), ``v`` in its place."""
        self._keep_evaluated()
        name = fresh_name(f"{self.hint.lstrip('_') or 'items'}_chosen", self.writer.taken)

        def arm(value):
            return [gast.copy_location(gast.Assign(
                targets=[gast.copy_location(store_node(name), value)], value=value,
                type_comment=None), value)]
        self.before.append(gast.copy_location(
            gast.If(test=node.test, body=arm(node.body), orelse=arm(node.orelse)), node))
        return gast.copy_location(name_node(name), node)

    def _keep_evaluated(self):
        """Each part Python evaluated so far that computes something, in a variable
        of its own (written before the statement, in Python's order)."""
        for owner, field, k in self._evaluated_parts():
            part = _slot(owner, field, k)
            if isinstance(owner, gast.Call) and field == "func" or \
                    isinstance(part, (gast.Name, gast.Constant)) or \
                    isinstance(part, gast.Attribute) and self.writer.static_value(part):
                continue
            if isinstance(part, (gast.Starred, gast.keyword)):  # f(*xs, a=v): xs, v
                part.value = self._kept(part.value)
            elif isinstance(part, gast.Slice):  # a[i + 1:j]: its bounds
                for bound in ("lower", "upper", "step"):
                    setattr(part, bound, self._kept(getattr(part, bound)))
            else:
                _set_slot(owner, field, k, self._variable(part, "part"))

    def _kept(self, part):
        """``part`` in a variable of its own where it computes something."""
        if part is None or isinstance(part, (gast.Name, gast.Constant)) or \
                isinstance(part, gast.Attribute) and self.writer.static_value(part):
            return part
        return self._variable(part, "part")

    def _variable(self, value, stem):
        name = fresh_name(f"{self.hint.lstrip('_') or 'items'}_{stem}", self.writer.taken)
        self.before.append(gast.copy_location(gast.Assign(
            targets=[gast.copy_location(store_node(name), value)], value=value,
            type_comment=None), value))
        return gast.copy_location(name_node(name), value)


def _in_order(node):
    return isinstance(node, _IN_ORDER) or \
        isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd))


def _written_out(node, owner):
    return isinstance(node, (gast.ListComp, gast.DictComp)) or \
        isinstance(node, gast.GeneratorExp) and _consumed_at_once(owner)


def _reached(node, owner):
    """The comprehensions of ``node`` a walk in evaluation order would write out."""
    if _written_out(node, owner):
        return [node]
    if not _in_order(node):
        return []
    found = []
    for field in node._fields:
        value = getattr(node, field)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (gast.expr, gast.keyword)):
                found += _reached(item, node)
    return found


def _only_operators(node):
    """Does ``node`` (a comparison, ``not``, ``a if c else b``, ...) only apply
    operators to names and constants (no call, comprehension, ``lambda``, ``:=``)?"""
    return all(isinstance(n, (gast.Name, gast.Constant, gast.Attribute, gast.Subscript,
                              gast.Slice, gast.Tuple, gast.BinOp, gast.UnaryOp, gast.BoolOp,
                              gast.Compare, gast.IfExp, gast.expr_context, gast.operator,
                              gast.unaryop, gast.boolop, gast.cmpop))
               for n in gast.walk(node))


def _parts(node):
    """The (field, position) of ``node``'s parts, in the order Python evaluates them
    (a dict display's keys and values in turn)."""
    if isinstance(node, gast.Dict):
        for k, key in enumerate(node.keys):
            if key is not None:  # (``**d``)
                yield "keys", k
            yield "values", k
        return
    for field in ("func", "args", "keywords", "value", "slice", "left", "right", "operand",
                  "elts", "lower", "upper", "step"):
        value = getattr(node, field, None)
        if isinstance(value, list):
            for k, item in enumerate(value):
                if isinstance(item, (gast.expr, gast.keyword)):
                    yield field, k
        elif isinstance(value, (gast.expr, gast.keyword)):
            yield field, None


def _slot(owner, field, k):
    value = getattr(owner, field)
    return value if k is None else value[k]


def _set_slot(owner, field, k, new):
    if k is None:
        setattr(owner, field, new)
    else:
        getattr(owner, field)[k] = new


#: builtins whose result reads an iterable argument as the loop asks for items
_LAZY = ("enumerate", "zip", "filter", "map", "iter")


def _enumerated_generator(s):
    """``for k, y in enumerate(<generator expression>)`` (no ``start=``, no ``if``, one
    ``for`` clause): the count is the generator's own iterable's."""
    it = s.iter
    return isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and \
        it.func.id == "enumerate" and len(it.args) == 1 and not it.keywords and \
        isinstance(it.args[0], gast.GeneratorExp) and \
        len(it.args[0].generators) == 1 and not it.args[0].generators[0].ifs and \
        isinstance(s.target, gast.Tuple) and len(s.target.elts) == 2


def _lazily_read(node):
    """The generator expressions of a loop's iterable ``node`` that it reads as the
    loop runs: ``node`` itself, or an argument of ``zip``, ``enumerate`` ... of one."""
    if isinstance(node, gast.GeneratorExp):
        yield node
    elif isinstance(node, gast.Call) and (
            isinstance(node.func, gast.Name) and node.func.id in _LAZY or
            isinstance(node.func, gast.Attribute) and
            isinstance(node.func.value, gast.Name) and node.func.value.id == "itertools"):
        for arg in node.args:
            yield from _lazily_read(arg.value if isinstance(arg, gast.Starred) else arg)


def _breaks(stmts):
    """Does a ``break`` in ``stmts`` leave the loop whose body they are (not one in a
    loop of their own, or in a ``def``)?"""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Break):
            return True
        if isinstance(n, (gast.For, gast.While)):
            stack.extend(n.orelse)  # (a break in a loop's else leaves the outer loop)
            continue
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)):
            continue
        stack.extend(c for c in gast.iter_child_nodes(n) if isinstance(c, gast.stmt))
    return False


def _called(call):
    func = call.func
    return func.attr if isinstance(func, gast.Attribute) else \
        func.id if isinstance(func, gast.Name) else "value"


def _bound_generator(s):
    return isinstance(s, gast.Assign) and len(s.targets) == 1 and \
        isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.GeneratorExp)


def _read_once(stmt, read):
    """Does Python evaluate ``read``, a part of ``stmt``, at most once when it runs
    ``stmt`` (not in a loop's body or test, a ``def``, ``lambda`` or comprehension,
    but a comprehension's first iterable, which its enclosing scope evaluates
    once: ``sum(np.sum(v) for v in g)``)?"""
    def within(node):
        if node is read:
            return True
        if isinstance(node, tuple(COMPREHENSIONS)) and \
                any(c is read for c in gast.walk(node.generators[0].iter)):
            return within(node.generators[0].iter)
        for field, value in gast.iter_fields(node):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, gast.AST) and any(c is read for c in gast.walk(child)):
                    if isinstance(node, (gast.FunctionDef, gast.Lambda, gast.While) +
                                  tuple(COMPREHENSIONS)) or \
                            isinstance(node, gast.For) and field != "iter":
                        return False
                    return within(child)
        return False
    return within(stmt)


def _stores(stmts, name):
    return any(isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
               for st in stmts for n in gast.walk(st))


def _replace(tree, old, new):
    """``tree`` with its part ``old`` replaced by ``new``."""
    class Replacing(gast.NodeTransformer):
        def visit(self, node):
            return new if node is old else self.generic_visit(node)
    Replacing().visit(tree)


def _in_own_scope(name, part, rename):
    """Is ``name`` inside a lambda or comprehension of ``part`` that binds it
    itself (its own variable, not the outer comprehension's)?"""
    for n in gast.walk(part):
        if isinstance(n, gast.Lambda):
            own = {a.id for a in n.args.args + n.args.kwonlyargs + n.args.posonlyargs}
        elif isinstance(n, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            own = {t.id for g in n.generators for t in gast.walk(g.target)
                   if isinstance(t, gast.Name)}
        else:
            continue
        if name.id in own and any(c is name for c in gast.walk(n)):
            return True
    return False


def _fills_its_target(s, fnode):
    """``ys = [... for ...]`` with ``ys`` a plain name the comprehension does not read
    and the function binds, changes or calls a method of nowhere else: the loop
    appends to ``ys`` itself (a list changed later, ``ys[t] = ...``, keeps a list
    of its own, which stays a constant one).  ``d = {...: ... for ...}`` fills ``d``
    itself wherever the comprehension does not read it (``d[k] = v`` later adds or
    rebinds a key, as on the dict the comprehension made)."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1 and
            isinstance(s.targets[0], gast.Name) and
            isinstance(s.value, (gast.ListComp, gast.DictComp))):
        return False
    name = s.targets[0].id
    if name in {n.id for n in gast.walk(s.value) if isinstance(n, gast.Name)}:
        return False
    if isinstance(s.value, gast.DictComp):
        return True
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load) \
                and n is not s.targets[0]:
            return False
        if isinstance(n, (gast.Subscript, gast.Attribute)) and \
                not isinstance(n.ctx, gast.Load) and root_name(n) == name:
            return False
        if isinstance(n, gast.AugAssign) and root_name(n.target) == name:
            return False
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and \
                root_name(n.func.value) == name:
            return False
    return True


def _at(new, where):
    """``new`` placed at ``where``'s line (errors and comments quote the user's line)."""
    return gast.copy_location(new, where)


def _evaluated_first(s):
    """The fields of ``s`` that Python evaluates before the rest of it."""
    if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return, gast.Expr)) \
            and isinstance(s.value, gast.expr):
        return ("value",)
    if isinstance(s, gast.For):
        return ("iter",)
    return ()  # (an if's test is a condition, kept as written)


def _consumed_at_once(owner):
    """Is a generator expression that is ``owner``'s part consumed where Python
    makes it (a call's argument, a ``for``'s iterable, unpacked)?"""
    return isinstance(owner, (gast.Call, gast.keyword, gast.For)) or \
        isinstance(owner, gast.Assign) and \
        all(isinstance(t, (gast.Tuple, gast.List)) for t in owner.targets)


def _hint(s, fnode):
    """The stem of a list's name: the assigned name, the function's for a return."""
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name):
        return s.targets[0].id
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], (gast.Tuple, gast.List)) and \
            all(isinstance(e, gast.Name) for e in s.targets[0].elts):
        return "_".join(e.id for e in s.targets[0].elts)  # a, b = ...: a_b's
    if isinstance(s, (gast.AugAssign, gast.AnnAssign)) and isinstance(s.target, gast.Name):
        return s.target.id
    if isinstance(s, gast.Return):
        return fnode.name
    if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and \
            isinstance(s.value.func, gast.Attribute) and \
            isinstance(s.value.func.value, gast.Name):
        return s.value.func.value.id  # ys.append([...]): ys's
    return "items"


def _plain(node):
    return all(isinstance(n, (gast.Name, gast.Constant, gast.Attribute, gast.expr_context))
               for n in gast.walk(node))
