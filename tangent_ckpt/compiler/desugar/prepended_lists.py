"""Desugar: a list grown only at its front in a loop (``returns.insert(0, G)``), as
the list of the same items in the order they came, read backwards.

    returns = []                       returns_reversed = []
    for r in reversed(rewards):        for r in reversed(rewards):
        G = r + gamma * G                  G = r + gamma * G
        returns.insert(0, G)      ->       returns_reversed.append(G)
    np.array(returns), returns[t]      np.array(returns_reversed[::-1]), returns_reversed[::-1][t]
    len(returns)                       len(returns_reversed)

The discounted returns of reinforcement learning code.  ``list_methods.py``
writes ``insert`` as the slices that make the new list (``returns =
returns[:0] + [G] + returns[0:]``), which a loop of run-time length cannot
grow (its length would change in the loop); appended, the list is one the
lowering builds at run time (``rt.append_row``), and read backwards it is,
item for item, the list Python's inserts made.

Rewritten only where that is all the list is: a local (not a parameter, global,
nonlocal, nor read by a nested function) bound to ``[]``, changed only by
statements ``returns.insert(0, v)`` (``v`` not reading the list), at least
one of them in a loop of run-time length the list is not bound in
(``tuple_lists.grown_across_trips``), and read only where the list is neither kept nor
changed nor its truth or equality asked: an item read (``returns[t]``), an
argument of ``len``, ``sum`` or a NumPy function, the iterable of a ``for``
that does not insert into it -- up to the first statement of the function's
body that binds the name to something else (``returns = np.array(returns)``,
its reads of the list rewritten too), after which the name is that value and
left as it is.  Anything else is left as written, for ``list_methods.py`` and
the lowering.
"""

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import builtins_meant, names_seen_outside
from tangent_ckpt.compiler.desugar.tuple_lists import grown_across_trips
from tangent_ckpt.compiler.desugar.view_shape import fresh_name, names_taken


def append_prepended_lists(parsed):
    """Rewrite, in ``parsed.node``, each list grown only at its front as above."""
    fnode = parsed.node
    inserted = {n.func.value.id for n in gast.walk(fnode)
                if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and
                n.func.attr == "insert" and isinstance(n.func.value, gast.Name)}
    if not inserted:
        return
    parents = {}
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[child] = node
    readers = {name for name in ("len", "sum") if name in builtins_meant((name,), fnode,
                                                                         parsed.resolve)}
    taken = None
    for name in sorted(inserted - names_seen_outside(fnode)):
        plan = _Plan(name, fnode, parents, readers, parsed.resolve).make()
        if plan is not None:
            taken = names_taken(fnode) if taken is None else taken
            _Rewrite(plan, fresh_name(f"{name}_reversed", taken)).visit(fnode)


class _Plan:
    """The mentions of one list up to the statement that binds its name to
    something else, each with its rewrite, or None (:meth:`make`) where one is
    not a form above."""

    def __init__(self, name, fnode, parents, readers, resolve):
        self.name, self.fnode, self.parents = name, fnode, parents
        self.readers, self.resolve = readers, resolve
        self.empty, self.inserts, self.reads, self.lengths = [], [], [], []

    def make(self):
        for statement in self.fnode.body:
            final = isinstance(statement, gast.Assign) and len(statement.targets) == 1 and \
                isinstance(statement.targets[0], gast.Name) and \
                statement.targets[0].id == self.name and not _empty_list(statement.value)
            for node in gast.walk(statement.value if final else statement):
                if isinstance(node, gast.Name) and node.id == self.name and \
                        not self._take(node):
                    return None
            if final:
                break
        if not any(grown_across_trips(s, self.parents, self.fnode, self.empty)
                   for s in self.inserts):
            return None
        for loop in gast.walk(self.fnode):  # Python's iterator would see the inserts
            if isinstance(loop, gast.For) and any(n in self.reads for n in gast.walk(loop.iter)) \
                    and any(s in self.inserts for s in gast.walk(loop)):
                return None
        return self

    def _take(self, node):
        parent = self.parents.get(node)
        if isinstance(node.ctx, gast.Store):
            if isinstance(parent, gast.Assign) and parent.targets == [node] and \
                    _empty_list(parent.value):
                self.empty.append(parent)
                return True
            return False
        if isinstance(node.ctx, gast.Del):
            return False
        if isinstance(parent, gast.Attribute):
            return self._insert(parent)
        if isinstance(parent, gast.Subscript) and parent.value is node:
            if not isinstance(parent.ctx, gast.Load) or \
                    isinstance(self.parents.get(parent), (gast.Attribute, gast.Subscript)):
                return False
        elif isinstance(parent, gast.Call) and node in parent.args and not any(
                isinstance(a, gast.Starred) for a in parent.args):
            if isinstance(parent.func, gast.Name) and parent.func.id in self.readers:
                if parent.func.id == "len":
                    self.lengths.append(node)
            elif not self._numpy_function(parent.func):
                return False
        elif not (isinstance(parent, gast.For) and parent.iter is node):
            return False
        self.reads.append(node)
        return True

    def _insert(self, attribute):
        call = self.parents.get(attribute)
        statement = self.parents.get(call)
        if not (attribute.attr == "insert" and isinstance(call, gast.Call) and
                call.func is attribute and isinstance(statement, gast.Expr) and
                len(call.args) == 2 and not call.keywords and
                isinstance(call.args[0], gast.Constant) and type(call.args[0].value) is int and
                call.args[0].value == 0):
            return False
        if any(isinstance(n, gast.Name) and n.id == self.name or
               isinstance(n, (gast.Starred, gast.NamedExpr)) for n in gast.walk(call.args[1])):
            return False
        self.inserts.append(statement)
        return True

    def _numpy_function(self, func):
        """Is ``func`` ``np.<name>`` (``np`` naming NumPy itself), a function that
        reads a list given to it as the array of its items?"""
        root = func
        while isinstance(root, gast.Attribute):
            root = root.value
        return isinstance(func, gast.Attribute) and isinstance(root, gast.Name) and \
            self.resolve(root.id) is np


def _empty_list(node):
    return isinstance(node, gast.List) and not node.elts


class _Rewrite(gast.NodeTransformer):
    """The rewrite of one list (:class:`_Plan`) into the list ``name`` of its items
    in the order they came."""

    def __init__(self, plan, name):
        self.name = name
        self.empty = set(map(id, plan.empty))
        self.inserts = set(map(id, plan.inserts))
        self.reads = set(map(id, plan.reads)) - set(map(id, plan.lengths))
        self.lengths = set(map(id, plan.lengths))

    def _load(self, like):
        return gast.copy_location(gast.Name(id=self.name, ctx=gast.Load(), annotation=None,
                                            type_comment=None), like)

    def visit_Assign(self, node):
        if id(node) in self.empty:
            node.targets = [gast.copy_location(gast.Name(
                id=self.name, ctx=gast.Store(), annotation=None, type_comment=None),
                node.targets[0])]
            return node
        return self.generic_visit(node)

    def visit_Expr(self, node):
        if id(node) in self.inserts:
            call = node.value
            call.func = gast.copy_location(gast.Attribute(
                value=self._load(call.func), attr="append", ctx=gast.Load()), call.func)
            call.args = [self.visit(call.args[1])]
            return node
        return self.generic_visit(node)

    def visit_Name(self, node):
        if id(node) in self.lengths:
            return self._load(node)
        if id(node) in self.reads:  # the items in Python's order: read backwards
            reversal = gast.Subscript(value=self._load(node), slice=gast.Slice(
                lower=None, upper=None, step=gast.UnaryOp(
                    op=gast.USub(), operand=gast.Constant(value=1, kind=None))),
                ctx=gast.Load())
            return gast.fix_missing_locations(gast.copy_location(reversal, node))
        return node
