"""Desugar: a list grown by concatenating a display to itself, as the append
or extend that grows it.

    errs = errs + [e]          ->  errs.append(e)
    errs = errs + [a, b]       ->  errs.extend([a, b])
    errs += [e]                ->  errs.append(e)

The error history of an iterative solver (``err = err + [norm]``, the Sinkhorn
of numerical tours).  Python makes a new list and binds the name to it; where
nothing else holds the old list, growing the list in place is the same thing,
and a list appended to in a loop is one the lowering builds at run time
(``rt.append_row``), like any other.  ``+=`` on a list is ``extend`` already.

Rewritten only where the name holds a list nothing else can see change: a local
the function makes, bound only to lists (``held_lists.py``), whose reads that
keep the list (``other = errs``, ``return errs``, ``f(errs)``) are in a
``return`` (in a function with no ``finally``, which runs after it) or in a
statement of the function's body after every statement this pass rewrites (the list no longer grows then), and not where a loop over the
list runs while it grows (Python's iterator sees the list it started with).
The display's items are evaluated before the list grows, as Python evaluates
them before it concatenates (``extend`` of the display).  Anything else is left
as written, for the lowering, which refuses a list of static length that changes
its length inside a loop.
"""

import gast

from tangent_ckpt.compiler.desugar.held_lists import held_lists, mentions
from tangent_ckpt.compiler.desugar.local_bindings import own_statements


def write_concatenated_lists(parsed, fnode=None):
    """Rewrite, in ``fnode`` (default ``parsed.node``, whose names ``parsed``
    resolves), each ``xs = xs + [...]`` and ``xs += [...]`` on a list as above."""
    fnode = parsed.node if fnode is None else fnode
    grown = {}  # name -> [(index in fnode.body of the statement holding it, statement)]
    for index, top in enumerate(fnode.body):
        for s in own_statements([top]):
            name = _grown_name(s)
            if name is not None:
                grown.setdefault(name, []).append((index, s))
    if not grown:
        return
    parents = {}
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    top_index = {}
    for index, top in enumerate(fnode.body):
        for node in gast.walk(top):
            top_index[id(node)] = index

    # a `finally` runs after a `return` has taken the list: it could still grow it
    finally_blocks = any(isinstance(n, gast.Try) and n.finalbody for n in gast.walk(fnode))
    lists = set()
    for name, sites in grown.items():
        last = max(index for index, _ in sites)

        def unseen(read, last=last):
            """A read keeping the list where its growth can no longer be seen."""
            return (not finally_blocks and _returned(read, parents)) or \
                top_index.get(id(read), -1) > last

        if name in held_lists(fnode, parsed.resolve, kept=unseen) and \
                not _grown_in_a_loop_over_it(name, fnode, {id(s) for _, s in sites}):
            lists.add(name)
    if lists:
        _Rewrite(lists, fnode).visit(fnode)


def _display(node):
    """``node`` when it is a list display with no starred item, else None."""
    if isinstance(node, gast.List) and node.elts and \
            not any(isinstance(e, gast.Starred) for e in node.elts):
        return node
    return None


def _grown_name(s):
    """The name ``s`` grows: ``xs = xs + [...]`` or ``xs += [...]``; else None."""
    if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
            isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.BinOp) and \
            isinstance(s.value.op, gast.Add) and isinstance(s.value.left, gast.Name) and \
            s.value.left.id == s.targets[0].id and _display(s.value.right) is not None:
        return s.targets[0].id
    if isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add) and \
            isinstance(s.target, gast.Name) and _display(s.value) is not None:
        return s.target.id
    return None


def _returned(read, parents):
    """Is ``read`` the value of a ``return``, or an item of a display that is
    (``return loss, errs``)?  Nothing of the function runs after it."""
    node = parents.get(id(read))
    while isinstance(node, (gast.Tuple, gast.List)):
        read, node = node, parents.get(id(node))
    return isinstance(node, gast.Return) and node.value is read


def _grown_in_a_loop_over_it(name, fnode, sites):
    """Python's iterator sees the list it started with (``for v in ws: ws = ws +
    [v]``); grown in place, it would see the items added."""
    return any(isinstance(loop, gast.For) and mentions(loop.iter, name) and
               any(id(s) in sites for s in own_statements(loop.body + loop.orelse))
               for loop in gast.walk(fnode))


class _Rewrite(gast.NodeTransformer):
    def __init__(self, lists, root):
        self.lists = lists
        self.root = root

    def visit_FunctionDef(self, node):
        if node is self.root:  # a nested function's names are its own
            self.generic_visit(node)
        return node

    def visit_AsyncFunctionDef(self, node):
        return node

    def visit_Lambda(self, node):
        return node

    def visit_ClassDef(self, node):
        return node

    def visit_Assign(self, node):
        return self._statement(node)

    def visit_AugAssign(self, node):
        return self._statement(node)

    def _statement(self, s):
        name = _grown_name(s)
        if name not in self.lists:
            return s
        items = (s.value.right if isinstance(s, gast.Assign) else s.value).elts
        added = [gast.List(elts=items, ctx=gast.Load())] if len(items) > 1 else []
        receiver = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
        method = gast.Attribute(value=receiver, attr="extend" if added else "append",
                                ctx=gast.Load())
        call = gast.Call(func=method, args=added or [items[0]], keywords=[])
        new = gast.Expr(value=call)
        for made in [new, call, method, receiver] + added:  # the items keep their places
            gast.copy_location(made, s)
            made.end_lineno = getattr(s, "end_lineno", None)
        return new
