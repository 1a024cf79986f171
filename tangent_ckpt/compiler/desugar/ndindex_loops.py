"""Desugar: ``for i, j in np.ndindex(n, m)``, as the nested ``range`` loops that
visit the same indices in the same order (the last one fastest)::

    for i, j in np.ndindex(n, m):      ->      for i in range(n):
        body                                       for j in range(m):
                                                       body

``np.ndindex(shape)`` with one tuple (``x.shape``, ``(n, m)``) names the
lengths ``shape[0]``, ``shape[1]``, ...: the target says how many.  The
rewrite is exact where the target is one name per dimension, the body does
not leave the loop early (a ``break`` would leave only the innermost loop) and
has no ``else`` (a ``continue`` goes on to the next index, as Python's), and no
index is read after the loop (an empty ``ndindex``
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
        k = 0
        while k < len(block):
            s = block[k]
            k += 1
            if not (isinstance(s, gast.For) and isinstance(s.iter, gast.Call)):
                continue
            local = local_names(fnode) if local is None else local
            if resolve_dotted(s.iter.func, parsed.resolve, local) is not np.ndindex:
                continue
            nested = _nested(parsed, fnode, s)
            block[k - 1:k] = nested
            k += len(nested) - 1


def _nested(parsed, fnode, s):
    names = s.target.elts if isinstance(s.target, (gast.Tuple, gast.List)) else None
    lengths = _lengths(s.iter, len(names)) if names else None
    why = None
    if names is None or not all(isinstance(n, gast.Name) for n in names):
        why = "one name per dimension as its target (for i, j in np.ndindex(n, m))"
    elif lengths is None:
        why = ("the lengths written out, or one shape (np.ndindex(n, m), np.ndindex(A.shape); "
               "not *A.shape or a slice of a shape)")
    elif s.orelse or _breaks(s.body):
        why = "no break or else (they would leave only the innermost loop)"
    elif _read_after(fnode, s, {n.id for n in names}):
        why = "no index read after the loop (an empty np.ndindex binds none)"
    if why is not None:
        raise parsed.error(UnsupportedSyntaxError, "a loop over np.ndindex(...) is written "
                           f"as nested range loops, which needs {why}", s,
                           construct="for over np.ndindex",
                           hint="write the nested loops: for i in range(n): for j in range(m):")
    body = s.body
    shape = _one_shape(s.iter)
    for name, length in reversed(list(zip(names, lengths))):
        call = gast.Call(func=gast.Name(id="range", ctx=gast.Load(), annotation=None,
                                        type_comment=None), args=[length], keywords=[])
        loop = gast.For(target=copy.deepcopy(name), iter=call, body=[], orelse=[],
                        type_comment=None)
        located(loop, s)
        loop.body = body  # the user's statements keep their own lines
        body = [loop]
    if shape is None:
        return body
    # np.ndindex(A.shape) of an array of another rank: Python's unpacking raises
    check = gast.Assert(test=gast.Compare(
        left=gast.Call(func=gast.Name(id="len", ctx=gast.Load(), annotation=None,
                                      type_comment=None), args=[copy.deepcopy(shape)],
                       keywords=[]),
        ops=[gast.Eq()], comparators=[gast.Constant(value=len(names), kind=None)]),
        msg=gast.Constant(value=f"np.ndindex: a shape of another length than the "
                                f"{len(names)} names of the loop", kind=None))
    return [located(check, s)] + body


def _one_shape(call):
    """The shape ``np.ndindex(shape)`` (or ``np.ndindex(*shape)``) is given as one
    name or attribute, else None."""
    args = call.args
    if call.keywords or len(args) != 1:
        return None
    arg = args[0].value if isinstance(args[0], gast.Starred) else args[0]
    return arg if isinstance(arg, (gast.Name, gast.Attribute)) else None


def _lengths(call, count):
    """The expressions of the lengths ``np.ndindex`` is given, ``count`` of them,
    or None where they cannot be written once each."""
    shape = _one_shape(call)
    if shape is not None and count == 1 and isinstance(shape, gast.Name):
        return None  # np.ndindex(n): an int n, or a shape of one length
    if shape is not None:  # np.ndindex(A.shape), np.ndindex(*A.shape)
        return [gast.Subscript(value=copy.deepcopy(shape), slice=gast.Constant(value=k, kind=None),
                               ctx=gast.Load()) for k in range(count)]
    if call.keywords or any(isinstance(a, gast.Starred) for a in call.args):
        return None
    args = call.args
    if len(args) == 1 and isinstance(args[0], (gast.Tuple, gast.List)):
        args = args[0].elts
    if len(args) != count:
        return None
    return [copy.deepcopy(a) for a in args]


def _breaks(body):
    """A break of this loop (not of a loop inside it); a ``continue`` goes on to the
    next index in the innermost loop, as in Python's."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, gast.Break):
            return True
        if isinstance(node, (gast.For, gast.While) + SCOPES):
            continue
        stack.extend(gast.iter_child_nodes(node))
    return False


def _read_after(fnode, loop, names):
    inside = {id(n) for st in loop.body for n in gast.walk(st)}
    return any(isinstance(n, gast.Name) and n.id in names and isinstance(n.ctx, gast.Load) and
               id(n) not in inside for n in gast.walk(fnode))
