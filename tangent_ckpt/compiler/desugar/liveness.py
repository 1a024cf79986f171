"""Liveness of one name over a function's syntax tree: the statements after
which the name may still be read (later iterations of a loop included).
Used by the aliasing fence (``aliasing.py``)."""

import gast


def read_names(node):
    return {n.id for n in gast.walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def bound_names(target):
    return {n.id for n in gast.walk(target)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


class NameLiveness:
    """Backward pass for one name: the statements after which it may be read."""

    def __init__(self, fnode, name, reads):
        self.name = name
        self.reads = reads  # statement or expression -> names it reads (memoised)
        self.after = set()  # ids of the statements after which ``name`` is live
        # ids of the loops at whose head ``name`` is live (read by the next trip, the
        # test or after the loop) and that do not bind it as their ``for`` target
        self.heads = set()
        self.block(fnode.body, False, (False, False))

    def read(self, node):
        return self.name in self.reads(node)

    def block(self, stmts, live, jumps):
        """``jumps``: whether the name is live where ``break`` and ``continue`` go."""
        for s in reversed(stmts):
            live = self.statement(s, live, jumps)
        return live

    def statement(self, s, live, jumps):
        """Whether the name is live before ``s``, given whether it is live after."""
        if live:
            self.after.add(id(s))
        if isinstance(s, gast.Return):
            return s.value is not None and self.read(s)
        if isinstance(s, gast.Break):
            return jumps[0]
        if isinstance(s, gast.Continue):
            return jumps[1]
        if isinstance(s, (gast.For, gast.While)):
            exit_live = self.block(s.orelse, live, jumps)
            rebound = isinstance(s, gast.For) and self.name in bound_names(s.target)
            test = isinstance(s, gast.While) and self.read(s.test)
            head = exit_live or test
            while True:  # a fixpoint over one boolean: two rounds at most
                body_live = self.block(s.body, head, (live, head))
                new_head = exit_live or test or (body_live and not rebound)
                if new_head == head:
                    break
                head = new_head
            if head and not rebound:
                self.heads.add(id(s))
            return head or (isinstance(s, gast.For) and self.read(s.iter))
        if isinstance(s, gast.If):
            return (self.read(s.test) | self.block(s.body, live, jumps)
                    | self.block(s.orelse, live, jumps))
        if isinstance(s, gast.With):
            reads = any(self.read(item.context_expr) for item in s.items)
            return reads | self.block(s.body, live, jumps)
        if isinstance(s, gast.Try):
            inner = live
            for part in (s.finalbody, s.orelse):
                inner |= self.block(part, live, jumps)
            for handler in s.handlers:
                inner |= self.block(handler.body, live, jumps)
            return inner | self.block(s.body, inner, jumps)
        if isinstance(s, (gast.FunctionDef, gast.ClassDef)):
            return live  # free names of nested functions are always live
        if isinstance(s, (gast.Assign, gast.AnnAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            for t in targets:
                if isinstance(t, (gast.Name, gast.Tuple, gast.List, gast.Starred)) and \
                        self.name in bound_names(t):
                    live = False
        return live or self.read(s)
