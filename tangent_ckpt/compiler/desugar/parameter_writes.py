"""Desugar: the writes a function's body makes into names that may still hold
its caller's arrays.

A parameter is its caller's array until the body binds it anew; a write after a
statement of its block (or of an enclosing block, earlier) that surely bound the
name anew (``u = u * 2.0; u[0] = 1.0``) is into the function's own new array.
Read by the view lowering (``passes.writer_parameters``: what a helper writes
into its caller's arrays) and by the inliner (what an unmarked call may write).
"""

import gast


class ParameterWrites:
    """The writes a helper's body makes into names that may still hold its
    caller's arrays, as (name, kind): a write after a statement of its block (or
    of an enclosing one, earlier) that surely bound the name anew (``u = u *
    2.0; u[0] = 1.0``) is into the helper's own new array, and left out.
    ``rebound`` gets every name the body binds anew anywhere; ``unbuffered``
    (a statement -> the name it writes into, or None): the ``np.add.at(H, i, v)``
    statements, which write into ``H``."""

    def __init__(self, fnode, marks, rebound, unbuffered=None):
        self.marks, self.rebound, self.writes = marks, rebound, []
        self.unbuffered = unbuffered
        self.block(fnode.body, set())

    def block(self, stmts, own):
        own = set(own)  # what a nested block binds is not surely bound after it
        for s in stmts:
            self.statement(s, own)

    def statement(self, s, own):
        if isinstance(s, _NESTED):  # a nested function may run at any time
            for node in gast.walk(s):
                self.note(node, set())
            return
        for node in _statement_nodes(s):
            self.note(node, own)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                self.block(block, own)
        for handler in getattr(s, "handlers", []):
            self.block(handler.body, own)
        if isinstance(s, gast.Assign) and s not in self.marks.write_backs:
            for t in s.targets:
                if isinstance(t, (gast.Name, gast.Tuple, gast.List)):
                    own |= {n.id for n in gast.walk(t)
                            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}

    def note(self, node, own):
        writes, marks = [], self.marks
        written = self.unbuffered(node) if self.unbuffered is not None else None
        if written is not None:
            writes.append((written, "item-call"))
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            writes.append((node.target.id, "aug-call"))
        else:
            if isinstance(node, gast.Call):
                writes += [(p, "item-call") for p in marks.written_arguments.get(node, {}).values()]
                # an inner helper's write nobody follows
                writes += [(p, "unfollowed")
                           for p in marks.rebound_arguments.get(node, {}).values()]
            targets = node.targets if isinstance(node, gast.Assign) else \
                [node.target] if isinstance(node, (gast.AugAssign, gast.For)) else []
            for t in targets:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    writes.append((t.value.id, "item-call"))
                elif node in marks.write_backs and isinstance(t, gast.Name):
                    writes.append((t.id, "item-call"))
                else:
                    self.rebound |= {n.id for n in gast.walk(t)
                                     if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        self.writes += [(name, kind) for name, kind in writes if name not in own]


_NESTED = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)


def _statement_nodes(s):
    """The nodes of statement ``s`` itself, not of the statements it contains."""
    if isinstance(s, (gast.If, gast.While)):
        return list(gast.walk(s.test))
    if isinstance(s, gast.For):
        return [s] + list(gast.walk(s.target)) + list(gast.walk(s.iter))
    if isinstance(s, gast.With):
        return [n for item in s.items for n in gast.walk(item)]
    if isinstance(s, gast.Try):
        return []
    return list(gast.walk(s))
