"""Desugar: refuse an iterator bound to a name and read more than once.

``m = map(f, xs)``, ``g = (f(v) for v in xs)``, ``z = zip(a, b)``,
``e = enumerate(xs)``, ``r = reversed(xs)``, ``filter(...)``, ``iter(xs)``: Python
hands out each item once, so a second pass over ``m`` sees nothing (``sum(m)``
is 0 the second time, a second ``for`` loop runs no trip).  The rest of the
compiler holds such a value as the tuple of its items, which a second read would
see again: a wrong value and gradient.  So a name bound to one of these may be
read once, and not from inside a loop, comprehension, ``lambda`` or ``def`` that
does not also hold the binding (each trip would read it again); otherwise the
program is refused at the second read, with the advice to make it a list.

The check walks the function in the order Python runs it (an assignment's value
before its target; a ``for`` loop's iterable once, before its body; a
comprehension's first iterable outside it; the two paths of an ``if`` apart).  A
name bound again starts afresh.
"""

import builtins

import gast

from tangent_ckpt.compiler.desugar.local_bindings import COMPREHENSIONS, local_names
from tangent_ckpt.compiler.desugar.view_facts import read_names_denote, resolve_dotted
from tangent_ckpt.errors import UnsupportedSyntaxError

#: the builtins whose value is an iterator, consumed as it is read
ITERATOR_BUILTINS = (builtins.map, builtins.zip, builtins.enumerate, builtins.reversed,
                     builtins.filter)


def refuse_reused_iterators(parsed):
    """Raise :class:`UnsupportedSyntaxError` at the first read of a name that
    holds an iterator already read (or read again at each trip of a loop)."""
    if any(isinstance(n, gast.GeneratorExp) for n in gast.walk(parsed.node)) or \
            read_names_denote(parsed.node, parsed.resolve, ITERATOR_BUILTINS):
        _IteratorReads(parsed).visit(parsed.node)


class _Iterator:
    """One iterator the function makes: what makes it, the loops (comprehensions,
    functions) around where it is made, and whether it was read."""

    def __init__(self, what, around):
        self.what, self.around, self.read = what, around, False


_DISPLAYS = (gast.List, gast.Tuple, gast.Set, gast.Dict)


class _IteratorReads(gast.NodeVisitor):

    def __init__(self, parsed):
        self.parsed = parsed
        self.local = local_names(parsed.node)
        self.repeating = []  # the loops, comprehensions and functions around the node
        self.holds = {}  # name -> the _Iterator it holds (two names may hold one: m2 = m)

    def _iterator(self, value):
        """What ``value`` makes, when it is an iterator (``"map(...)"``), else None."""
        if isinstance(value, gast.GeneratorExp):
            return "a generator expression"
        if isinstance(value, gast.Call):
            fn = resolve_dotted(value.func, self.parsed.resolve, self.local)
            if any(fn is b for b in ITERATOR_BUILTINS):
                return f"{fn.__name__}(...)"
        return None

    def _refuse(self, node, what, why):
        return self.parsed.located(
            UnsupportedSyntaxError,
            f"'{node.id}' holds {what}, an iterator, and is read {why}: Python hands out "
            f"its items once, so that read would not see them again", node, construct=node.id,
            hint=f"make it a list where it is bound: {node.id} = list(...), or read it once")

    # --- the order Python runs a function in -------------------------------------------
    def visit_FunctionDef(self, node):
        if node is self.parsed.node:
            for stmt in node.body:
                self.visit(stmt)
            return
        self._repeated(node, node.body)

    def visit_Lambda(self, node):
        self._repeated(node, [node.body])

    def _repeated(self, node, parts):
        self.repeating.append(node)
        try:
            for part in parts:
                self.visit(part)
        finally:
            self.repeating.pop()

    def visit_For(self, node):
        self.visit(node.iter)
        self._repeated(node, [node.target] + node.body + node.orelse)

    def visit_While(self, node):
        self._repeated(node, [node.test] + node.body + node.orelse)

    def _comprehension(self, node, results):
        first = node.generators[0]
        self.visit(first.iter)
        rest = [first.target] + list(first.ifs)
        for g in node.generators[1:]:
            rest += [g.iter, g.target] + list(g.ifs)
        self._repeated(node, rest + results)

    def visit_ListComp(self, node):
        self._comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._comprehension(node, [node.key, node.value])

    def visit_If(self, node):
        """Each path from the state before the ``if``; after it, a name holds the
        iterator either path left in it, read if either path read it."""
        self.visit(node.test)
        before = dict(self.holds)
        was_read = {it: it.read for it in before.values()}
        for stmt in node.body:
            self.visit(stmt)
        body = self.holds
        read_in_body = {it for it in set(body.values()) | set(before.values()) if it.read}
        for it, flag in was_read.items():
            it.read = flag
        self.holds = dict(before)
        for stmt in node.orelse:
            self.visit(stmt)
        for it in read_in_body:
            it.read = True
        for name, it in body.items():
            self.holds.setdefault(name, it)

    def visit_Assign(self, node):
        value, targets = node.value, node.targets
        if len(targets) == 1 and isinstance(targets[0], (gast.Tuple, gast.List)) and \
                isinstance(value, (gast.Tuple, gast.List)) and \
                len(targets[0].elts) == len(value.elts) and \
                not any(isinstance(e, gast.Starred) for e in targets[0].elts + value.elts):
            pairs = list(zip(targets[0].elts, value.elts))  # m, n = map(...), map(...)
        else:
            pairs = [(target, value) for target in targets]
            if isinstance(value, _DISPLAYS):
                self._refuse_held_in_a_display(value)
        made = []
        for target, part in pairs:
            shared = self.holds.get(part.id) if isinstance(part, gast.Name) else None
            what = self._iterator(part)
            if shared is None:
                self.visit(part)
            made.append(shared or (_Iterator(what, tuple(self.repeating)) if what else None))
        for (target, _), it in zip(pairs, made):
            self.visit(target)
            if it is not None and isinstance(target, gast.Name):
                self.holds[target.id] = it

    def _refuse_held_in_a_display(self, display):
        """``d = {"k": map(...)}``, ``ms = [m]``: reads of the container's item would
        each see the items again."""
        parts = display.values if isinstance(display, gast.Dict) else display.elts
        for part in parts:
            what = self._iterator(part) or (
                self.holds[part.id].what if isinstance(part, gast.Name) and
                part.id in self.holds else None)
            if what is not None:
                raise self.parsed.located(
                    UnsupportedSyntaxError,
                    f"{what}, an iterator, kept in a list, tuple or dict: Python hands out "
                    f"its items once, so a second read of the item would not see them",
                    part, construct=what, hint="make it a list: list(...)")

    def visit_AugAssign(self, node):
        self.visit(node.value)
        self.visit(node.target)

    def visit_Name(self, node):
        if isinstance(node.ctx, (gast.Store, gast.Del)):
            self.holds.pop(node.id, None)
            return
        it = self.holds.get(node.id)
        if it is None:
            return
        if it.read:
            raise self._refuse(node, it.what, "again")
        inner = [n for n in self.repeating if n not in it.around and
                 not (isinstance(n, (gast.For, gast.While)) and _stores(n, node.id))]
        if inner:  # (a loop that binds the name again reads a new one each trip)
            raise self._refuse(node, it.what, f"in {_repeating_kind(inner[0])} that runs "
                                              f"it again and again")
        it.read = True


def _stores(loop, name):
    """Does ``loop`` bind ``name`` (in its body)?"""
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               for stmt in loop.body for n in gast.walk(stmt))


def _repeating_kind(node):
    if isinstance(node, (gast.For, gast.While)):
        return "a loop"
    if isinstance(node, COMPREHENSIONS):
        return "a comprehension"
    return "a function" if isinstance(node, gast.FunctionDef) else "a lambda"
