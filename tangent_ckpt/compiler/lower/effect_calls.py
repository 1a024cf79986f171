"""Lower: NumPy calls made for their effect on an array, written as the
subscript writes they are -- ``f(x, out=y)`` is ``y[...] = f(x)`` (with
NumPy's check that ``y`` can hold the result), ``np.fill_diagonal(a, v)`` is ``a[i, i] = v``
with ``i = np.arange(min(a.shape))``, ``np.copyto(a, b)`` is ``a[...] = b``,
``np.put(a, ind, v)`` is ``a.flat[ind] = v`` for a 1-D ``a`` -- so the
in-place write support differentiates them.  ``np.add.at`` and the other
writing functions stay refused, with what to write instead."""

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.lower.observers import emit_observation
from tangent_ckpt.compiler.lower.scopes import Lowered, to_source
from tangent_ckpt.errors import UnsupportedSyntaxError

# np.add.at(a, idx, v) and its siblings: ufunc.at is unbuffered (repeats accumulate)
_AT_HINTS = {
    np.add: "a = a + np.bincount(idx, weights=v, minlength=len(a)) for a 1-D a, "
            "or a loop `for k in range(len(idx)): a[idx[k]] += v[k]`",
}


def _constant_false(node):
    return node is None or (isinstance(node, gast.Constant) and node.value is False)


def as_subscript_write(lo, call, stmt):
    """The subscript assignment ``(target, value)`` that ``call`` (a statement
    whose value is discarded) performs, or None when it is no such call."""
    fn = lo.expressions.static_value(call.func)
    out = next((k.value for k in call.keywords if k.arg == "out"), None)
    if isinstance(out, gast.Name) and registry.lookup(fn) is not None and \
            not any(k.arg == "where" for k in call.keywords):
        return _into_out(lo, call, fn, out, stmt)
    if fn is np.fill_diagonal:
        return _fill_diagonal(lo, call, stmt)
    if fn is np.copyto:
        return _copyto(lo, call, stmt)
    if fn is np.put:
        return _put(lo, call, stmt)
    if isinstance(call.func, gast.Attribute) and call.func.attr == "at":
        ufunc = lo.expressions.static_value(call.func.value)
        if isinstance(ufunc, np.ufunc):
            spelled = to_source(call)
            raise lo.error(UnsupportedSyntaxError,
                           f"`{spelled}` adds into an array in place, unbuffered (a repeated "
                           "index applies its update once per occurrence)", stmt,
                           construct=f"np.{ufunc.__name__}.at",
                           hint="write the update as a value: " + _AT_HINTS.get(
                               ufunc, "a loop over the indices, one subscript write each"))
    return None


def _arguments(lo, call, stmt, names):
    """The call's arguments bound to ``names`` (positional or keyword), or a refusal."""
    bound = dict(zip(names, call.args))
    extra = len(call.args) > len(names)
    for k in call.keywords:
        if k.arg not in names or k.arg in bound:
            extra = True
        bound[k.arg] = k.value
    if extra:
        spelled = to_source(call)
        raise lo.error(UnsupportedSyntaxError, f"`{spelled}`: arguments beyond "
                       f"{', '.join(names)}", stmt, construct=to_source(call.func),
                       hint="pass only " + ", ".join(names))
    return bound


def _fill_diagonal(lo, call, stmt):
    bound = _arguments(lo, call, stmt, ("a", "val", "wrap"))
    if not _constant_false(bound.get("wrap")):
        raise lo.error(UnsupportedSyntaxError, f"`{to_source(call)}` with wrap=True", stmt,
                       construct="np.fill_diagonal(wrap=True)",
                       hint="write the diagonal entries with a subscript: a[i, i] = v")
    a = bound["a"]
    array = lo.expressions.atomize(lo.expressions.value(a, "diagonal"), "diagonal")
    index = ir.NonDiff(sx.rt("diagonal_index", ir.operand_node(array)),
                       ir.operand_names(array))
    return _subscript(a, Lowered(index, stmt), stmt), bound["val"]


def _copyto(lo, call, stmt):
    bound = _arguments(lo, call, stmt, ("dst", "src", "casting", "where"))
    if "where" in bound or "casting" in bound:
        raise lo.error(UnsupportedSyntaxError, f"`{to_source(call)}` with casting= or where=",
                       stmt, construct="np.copyto(casting=, where=)",
                       hint="write dst[...] = src, or dst = np.where(mask, src, dst)")
    return _subscript(bound["dst"], gast.Constant(value=Ellipsis, kind=None), stmt), bound["src"]


def _put(lo, call, stmt):
    raise lo.error(UnsupportedSyntaxError, f"`{to_source(call)}` writes into the flattened "
                   "array in place", stmt, construct="np.put",
                   hint="write a[ind] = v (a 1-D a), or a.reshape(-1)[ind] on a copy")


def _into_out(lo, call, fn, out, stmt):
    """``f(..., out=y)``: ``y[...] = f(...)``, after the check NumPy makes of
    the result's dtype (a ufunc casts within a kind, np.clip is one)."""
    plain = gast.copy_location(gast.Call(func=call.func, args=list(call.args), keywords=[
        k for k in call.keywords if k.arg != "out"]), call)
    result = lo.expressions.atomize(lo.expressions.value(plain, out.id), out.id)
    held = lo.expressions.atomize(lo.expressions.value(out, out.id), out.id)
    ufunc = isinstance(fn, np.ufunc) or fn is np.clip
    check = sx.rt("check_out_cast", ir.operand_node(result), ir.operand_node(held),
                  sx.const(ufunc), sx.const(lo.current_scope.parsed.filename),
                  sx.const(stmt.lineno))
    emit_observation(lo, check, ir.operand_names(result) + ir.operand_names(held), stmt.lineno)
    return _subscript(out, gast.Constant(value=Ellipsis, kind=None), stmt), Lowered(result, stmt)


def _subscript(base, index, stmt):
    target = gast.Subscript(value=base, slice=index, ctx=gast.Store())
    return gast.copy_location(target, stmt)
