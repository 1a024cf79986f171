"""Desugar: ``y = np.divide(a, b, out=np.zeros_like(a), where=b != 0)`` -- a ufunc
written into a fresh array only where a mask holds (the "safe division" idiom) --
as the statements that make the same array:

    y = np.zeros_like(a)                      # the out= array
    y_where = b != 0                          # the mask, evaluated once
    y_value = np.divide(np.where(y_where, a, 1), np.where(y_where, b, 1))
    if not np.can_cast(y_value.dtype, y.dtype, 'same_kind'):
        raise TypeError(...)                  # NumPy's own check of out=
    y[...] = np.where(y_where, y_value, y)

NumPy computes the ufunc only where the mask is true and leaves the out array as
made elsewhere; its result is that array, in its dtype and shape.  Here every
operand that is not a constant is replaced by 1 where the mask is false, so the
ufunc meets no zero or negative number there (no warning, no infinity: the
discarded values are finite, and so is every adjoint through them), and the same
numbers where it is true (the same ufunc on the same values, in the same loop
dtype); ``y[...] = ...`` keeps the array's dtype and shape, the cast NumPy makes
into ``out=`` (which it refuses unless ``same_kind``: the check raises where it
would).  The gradient then flows only where the mask holds, as in the program.

Only an assignment of such a call to one name, whose ufunc (spelled through the
NumPy module) is ``np.divide`` or ``np.true_divide`` (:data:`MASKED_UFUNCS`) with
its two operands as positional arguments and the keywords ``out=`` and ``where=``
alone; ``out=`` a call whose row says it returns a new array
(``memory_sharing.returns_new``: ``np.zeros_like(a)``, ``np.full(shape, v)``, so
nothing else shares it; an ``np.empty_like`` keeps its contents where the mask is
false, as in NumPy); ``where=`` a comparison or an ``&``/``|`` of comparisons,
surely booleans as NumPy requires (it refuses a float mask); each operand a
name, a constant, or subscripts, attributes and arithmetic of them (no call:
evaluated after the array and the mask here, before them in Python, which is the
same where reading has no effect; the array and the mask are made in the order
their keywords are written, as Python evaluates them).  A name the operands or the mask read that
is the target itself makes the array a fresh name, bound to the target last.
Anything else is left as written (``out=`` and ``where=`` are then refused by
the lowering).
"""

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import local_names
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import (
    copy_node, fresh_name, located, name_node, names_taken, statement_lists, store_node,
)
from tangent_ckpt.compiler.memory_sharing import returns_new

#: the safe-division idiom's ufuncs (a float result for any real operands, finite
#: at (1, 1): the operands masked to 1 meet no zero)
MASKED_UFUNCS = (np.divide, np.true_divide)


def write_masked_ufuncs(parsed, fnode=None):
    """Rewrite, in ``fnode`` (default ``parsed.node``), each ``y = np.<ufunc>(...,
    out=<filled array>, where=<mask>)`` as the statements of the module's docstring."""
    fnode = parsed.node if fnode is None else fnode
    if not any(isinstance(n, gast.keyword) and n.arg == "where" for n in gast.walk(fnode)):
        return
    local = local_names(fnode)
    taken = None
    for scope in [fnode] + [n for n in gast.walk(fnode)
                            if isinstance(n, gast.FunctionDef) and n is not fnode]:
        for block in statement_lists(scope):
            k = 0
            while k < len(block):
                stmt = block[k]
                parts = _masked_call(stmt, parsed.resolve, local)
                if parts is None:
                    k += 1
                    continue
                taken = names_taken(fnode) if taken is None else taken
                written = _statements(stmt, parts, taken)
                block[k:k + 1] = written
                k += len(written)


def _masked_call(stmt, resolve, local):
    """(ufunc name, numpy's name, operands, out, where) of a statement of the
    form the module's docstring names, else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)):
        return None
    call = stmt.value
    func = call.func
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)) or \
            resolve_dotted(func.value, resolve, local) is not np:
        return None
    ufunc = resolve_dotted(func, resolve, local)
    if not any(ufunc is u for u in MASKED_UFUNCS) or len(call.args) != ufunc.nin or \
            sorted(k.arg for k in call.keywords) != ["out", "where"]:
        return None
    keywords = {k.arg: k.value for k in call.keywords}
    out, where = keywords["out"], keywords["where"]
    if not (isinstance(out, gast.Call) and returns_new(resolve_dotted(out.func, resolve, local))):
        return None
    if not (_surely_mask(where) and all(_pure(a) for a in call.args)):
        return None
    return func.attr, func.value.id, call.args, out, where


def _surely_mask(node):
    """A comparison or an ``&``/``|`` of comparisons: a boolean (array)."""
    if isinstance(node, gast.Compare):
        return len(node.ops) == 1
    return isinstance(node, gast.BinOp) and isinstance(node.op, (gast.BitAnd, gast.BitOr)) \
        and _surely_mask(node.left) and _surely_mask(node.right)


def _pure(node):
    """Names, constants, and subscripts, attributes and arithmetic of them."""
    if isinstance(node, (gast.Name, gast.Constant)):
        return True
    if isinstance(node, gast.Attribute):
        return _pure(node.value)
    if isinstance(node, gast.Subscript):
        return _pure(node.value) and _pure(node.slice)
    if isinstance(node, gast.Slice):
        return all(p is None or _pure(p) for p in (node.lower, node.upper, node.step))
    if isinstance(node, gast.Tuple):
        return all(_pure(e) for e in node.elts)
    if isinstance(node, gast.BinOp):
        return _pure(node.left) and _pure(node.right)
    if isinstance(node, gast.UnaryOp):
        return _pure(node.operand)
    return False


def _statements(stmt, parts, taken):
    ufunc, numpy, operands, out, where = parts
    target = stmt.targets[0].id
    read = {n.id for part in list(operands) + [where] for n in gast.walk(part)
            if isinstance(n, gast.Name)}
    array = fresh_name(f"{target}_out", taken) if target in read else target
    mask = fresh_name(f"{target}_where", taken)
    value = fresh_name(f"{target}_value", taken)

    def np_call(name, *args):
        return gast.Call(func=gast.Attribute(value=name_node(numpy), attr=name,
                                             ctx=gast.Load()),
                         args=list(args), keywords=[])

    def assign(name, node):
        return gast.Assign(targets=[store_node(name)], value=node, type_comment=None)

    masked = [a if isinstance(a, gast.Constant) else
              np_call("where", name_node(mask), a, gast.Constant(value=1, kind=None))
              for a in operands]
    dtype = [gast.Attribute(value=name_node(n), attr="dtype", ctx=gast.Load())
             for n in (value, array)]
    check = gast.If(
        test=gast.UnaryOp(op=gast.Not(), operand=np_call(
            "can_cast", *dtype, gast.Constant(value="same_kind", kind=None))),
        body=[gast.Raise(exc=gast.Call(
            func=name_node("TypeError"),
            args=[gast.Constant(value=f"Cannot cast ufunc '{ufunc}' output to the dtype "
                                      "of out= with casting rule 'same_kind'", kind=None)],
            keywords=[]), cause=None)],
        orelse=[])
    write = gast.Assign(
        targets=[gast.Subscript(value=name_node(array),
                                slice=gast.Constant(value=Ellipsis, kind=None),
                                ctx=gast.Store())],
        value=np_call("where", name_node(mask), name_node(value), name_node(array)),
        type_comment=None)
    made = [assign(array, out), assign(mask, where)]
    if [k.arg for k in stmt.value.keywords] == ["where", "out"]:
        made.reverse()  # the keywords evaluated in the order they are written
    written = made + [
               assign(value, gast.Call(func=copy_node(stmt.value.func), args=masked,
                                       keywords=[])),
               check, write]
    if array != target:
        written.append(assign(target, name_node(array)))
    return [located(s, stmt) for s in written]
