"""Lower: a loop over a tuple of arrays that writes through its variable.

``for Z in (U, V): Z[0, :] = Z[1, :]`` writes into ``U`` and then into ``V``:
``Z`` is each array in turn, not a copy.  The rest of the compiler gives every
assignment a new value, so a write into ``Z`` would reach neither array.  This
pass, run by the view lowering (``views.py``) before anything else, replaces
such a loop by its body once per array, with the array's own name in place of
``Z``::

    Z[0, :] = Z[1, :]        ->      U[0, :] = U[1, :]
                                     V[0, :] = V[1, :]

That is the same program exactly when the loop's items are plain names, the
body rebinds neither ``Z`` nor any of them (so ``Z`` is the object the name
still denotes; ``Z *= 0.9`` counts as a rebinding: it rebinds a number, and
only an array is written in place; ``Z[...] *= 0.9`` is the array form), does not leave the loop early (``break``, ``continue``) and
defines no function that could keep ``Z``.  After the loop ``Z`` names the last
array, as in Python, when it is read later.  Any other loop is left as it is
(the aliasing fence judges its writes).
"""

import copy

import gast

from tangent_ckpt.compiler.desugar.local_bindings import root_name
from tangent_ckpt.compiler.desugar.view_shape import located

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)


def unroll_writing_tuple_loops(fnode):
    """Rewrite every such loop in ``fnode``'s body (nested blocks included), in place."""
    reads_outside = _names_read(fnode)
    _block(fnode.body, reads_outside)


def _block(stmts, reads):
    k = 0
    while k < len(stmts):
        s = stmts[k]
        if isinstance(s, _SCOPES):
            k += 1
            continue
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                _block(block, reads)
        for handler in getattr(s, "handlers", []):
            _block(handler.body, reads)
        unrolled = _unrolled(s, reads)
        if unrolled is None:
            k += 1
            continue
        stmts[k:k + 1] = unrolled
        k += len(unrolled)


def _unrolled(s, reads):
    """The statements replacing the loop ``s``, or None when it stays a loop."""
    if not (isinstance(s, gast.For) and isinstance(s.target, gast.Name) and
            isinstance(s.iter, (gast.Tuple, gast.List)) and s.iter.elts and
            all(isinstance(e, gast.Name) for e in s.iter.elts) and not s.orelse):
        return None
    var = s.target.id
    items = [e.id for e in s.iter.elts]
    if var in items or not _writes_through(s.body, var):
        return None
    for node in (n for st in s.body for n in gast.walk(st)):
        if isinstance(node, _SCOPES + (gast.Break, gast.Continue, gast.Global,
                                       gast.Nonlocal, gast.Yield, gast.YieldFrom)):
            # a break/continue of an inner loop would do; kept simple: any one
            return None
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and \
                (node.id == var or node.id in items):
            return None  # Z or an item rebound: Z is no longer the name's object
    out = []
    for item in items:
        for st in s.body:
            out.append(_renamed(st, var, item))
    if reads.get(var, 0) > _reads_in(s.body, var):  # Z read after the loop: the last item
        last = gast.Assign(targets=[gast.Name(id=var, ctx=gast.Store(), annotation=None,
                                              type_comment=None)],
                           value=gast.Name(id=items[-1], ctx=gast.Load(), annotation=None,
                                           type_comment=None), type_comment=None)
        out.append(located(last, s))
    return out


def _writes_through(body, var):
    """Whether ``body`` may change the object ``var`` names: ``var[...] = v``,
    ``var += v``, ``var.attr = v``, a method called on it or ``var`` handed to a
    call (a helper or ``out=`` may write into it)."""
    for node in (n for st in body for n in gast.walk(st)):
        if isinstance(node, (gast.Subscript, gast.Attribute)) and \
                isinstance(node.ctx, gast.Store) and root_name(node) == var:
            return True
        if isinstance(node, gast.AugAssign) and root_name(node.target) == var:
            return True
        if isinstance(node, gast.Call):
            if isinstance(node.func, gast.Attribute) and root_name(node.func.value) == var:
                return True
            if any(root_name(a) == var for a in list(node.args) + [k.value for k in node.keywords]):
                return True
    return False


def _renamed(stmt, var, item):
    stmt = copy.deepcopy(stmt)
    for node in gast.walk(stmt):
        if isinstance(node, gast.Name) and node.id == var:
            node.id = item
    return stmt


def _names_read(fnode):
    counts = {}
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _reads_in(body, var):
    return sum(1 for st in body for n in gast.walk(st)
               if isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Load))
