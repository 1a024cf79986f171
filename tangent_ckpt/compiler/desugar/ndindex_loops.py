"""Desugar: ``for i, j in np.ndindex(n, m)``, as the nested ``range`` loops that
visit the same indices in the same order (the last one fastest)::

    for i, j in np.ndindex(n, m):      ->      for i in range(n):
        body                                       for j in range(m):
                                                       body

``np.ndindex(shape)`` with one tuple (``x.shape``, ``(n, m)``) names the
lengths ``shape[0]``, ``shape[1]``, ...: the target says how many.  The
rewrite is exact where the target is one name per dimension, the body does
not leave the loop early (a ``break`` would leave only the innermost loop) and
has no ``else``, and no index is read after the loop (an empty ``ndindex``
binds none; the outer ``range`` loops would).  Any other loop over
``np.ndindex`` is refused here with its line: the lowering would read it as
the rows of an array.
"""

import copy

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import SCOPES, local_names
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import located, statement_lists
from tangent_ckpt.errors import UnsupportedSyntaxError


def nest_ndindex_loops(parsed):
    """Rewrite every ``for ... in np.ndindex(...)`` of ``parsed.node``, in place."""
    fnode = parsed.node
    local = None
    for block in statement_lists(fnode):
        for k, s in enumerate(block):
            if not (isinstance(s, gast.For) and isinstance(s.iter, gast.Call)):
                continue
            local = local_names(fnode) if local is None else local
            if resolve_dotted(s.iter.func, parsed.resolve, local) is not np.ndindex:
                continue
            block[k] = _nested(parsed, fnode, s)


def _nested(parsed, fnode, s):
    names = s.target.elts if isinstance(s.target, gast.Tuple) else [s.target]
    lengths = _lengths(s.iter, len(names))
    why = None
    if not all(isinstance(n, gast.Name) for n in names) or lengths is None:
        why = "one name per dimension as its target (for i, j in np.ndindex(n, m))"
    elif s.orelse or _leaves_early(s.body):
        why = "no break, continue or else (they would leave only the innermost loop)"
    elif _read_after(fnode, s, {n.id for n in names}):
        why = "no index read after the loop (an empty np.ndindex binds none)"
    if why is not None:
        raise parsed.error(UnsupportedSyntaxError, "a loop over np.ndindex(...) is written "
                           f"as nested range loops, which needs {why}", s,
                           construct="for over np.ndindex",
                           hint="write the nested loops: for i in range(n): for j in range(m):")
    body = s.body
    for name, length in reversed(list(zip(names, lengths))):
        call = gast.Call(func=gast.Name(id="range", ctx=gast.Load(), annotation=None,
                                        type_comment=None), args=[length], keywords=[])
        loop = gast.For(target=copy.deepcopy(name), iter=call, body=[], orelse=[],
                        type_comment=None)
        located(loop, s)
        loop.body = body  # the user's statements keep their own lines
        body = [loop]
    return body[0]


def _lengths(call, count):
    """The expressions of the lengths ``np.ndindex`` is given, ``count`` of them,
    or None where they cannot be written once each."""
    if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    args = call.args
    if len(args) == 1 and isinstance(args[0], (gast.Tuple, gast.List)):
        args = args[0].elts
    elif len(args) == 1 and isinstance(args[0], (gast.Name, gast.Attribute)):
        return [gast.Subscript(value=copy.deepcopy(args[0]), slice=gast.Constant(value=k, kind=None),
                               ctx=gast.Load()) for k in range(count)]
    if len(args) != count:
        return None
    return [copy.deepcopy(a) for a in args]


def _leaves_early(body):
    """A break or continue of this loop (not of a loop inside it)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (gast.Break, gast.Continue)):
            return True
        if isinstance(node, (gast.For, gast.While) + SCOPES):
            continue
        stack.extend(gast.iter_child_nodes(node))
    return False


def _read_after(fnode, loop, names):
    inside = {id(n) for st in loop.body for n in gast.walk(st)}
    return any(isinstance(n, gast.Name) and n.id in names and isinstance(n.ctx, gast.Load) and
               id(n) not in inside for n in gast.walk(fnode))
