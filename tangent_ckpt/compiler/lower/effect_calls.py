"""Lower: NumPy calls made for their effect on an array, written as the
subscript writes they are -- ``f(x, out=y)`` is ``y[...] = f(x)`` (with
NumPy's check that ``y`` can hold the result), ``np.fill_diagonal(a, v)`` is ``a[i, i] = v``
with ``i = np.arange(min(a.shape))``, ``np.copyto(a, b)`` is ``a[...] = b``,
``np.add.at(a, i, v)`` is ``a = rt.add_at(a, i, v)`` (``np.subtract.at``,
``np.multiply.at``, ``np.divide.at`` likewise; into a view ``x[1:, 0]`` of an
array, ``x[1:, 0] = rt.add_at(x[1:, 0], i, v)``) -- so the in-place write
support differentiates them.  ``np.put``, ``np.putmask``, ``np.place``, the other
``ufunc.at`` and the other writing functions stay refused, with what to write
instead."""

import copy

import gast
import numpy as np

from tangent_ckpt import runtime
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.lower.container_values import is_container
from tangent_ckpt.compiler.lower.observers import emit_observation
from tangent_ckpt.compiler.lower.scopes import Lowered, to_source
from tangent_ckpt.errors import UnsupportedSyntaxError
from tangent_ckpt.runtime.primitive_adjoints.array_adjoints import diagonal_values

# np.add.at(a, idx, v) and its siblings: ufunc.at is unbuffered (repeats accumulate);
# those with a primitive are the write a = primitive(a, idx, v)
_AT_PRIMITIVES = {np.add: runtime.add_at, np.subtract: runtime.subtract_at,
                  np.multiply: runtime.multiply_at, np.divide: runtime.divide_at}


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
    if fn is np.putmask or fn is np.place:
        return _masked_put(lo, call, fn, stmt)
    if isinstance(call.func, gast.Attribute) and call.func.attr == "at":
        ufunc = lo.expressions.static_value(call.func.value)
        if isinstance(ufunc, np.ufunc):
            return _ufunc_at(lo, call, ufunc, stmt)
    return None


def _ufunc_at(lo, call, ufunc, stmt):
    """``np.add.at(a, idx, v)``: ``a = rt.add_at(a, idx, v)``, or into the
    view it names, ``x[1:, 0] = rt.add_at(x[1:, 0], idx, v)``."""
    spelled = to_source(call)
    primitive = _AT_PRIMITIVES.get(ufunc)
    if primitive is None:
        raise lo.error(UnsupportedSyntaxError,
                       f"`{spelled}` applies np.{ufunc.__name__} into an array in place, "
                       "unbuffered (a repeated index applies its update once per "
                       "occurrence); only np.add.at, np.subtract.at, np.multiply.at and "
                       "np.divide.at are differentiated",
                       stmt, construct=f"np.{ufunc.__name__}.at",
                       hint="a loop over the indices, one subscript write each: `for k in "
                            f"range(len(idx)): a[idx[k]] = np.{ufunc.__name__}(a[idx[k]], v[k])`")
    if len(call.args) != 3 or call.keywords or \
            any(isinstance(a, gast.Starred) for a in call.args):
        raise lo.error(UnsupportedSyntaxError, f"`{spelled}`: np.{ufunc.__name__}.at takes "
                       "three positional arguments here (array, indices, values)", stmt,
                       construct=f"np.{ufunc.__name__}.at", hint="write np."
                       f"{ufunc.__name__}.at(a, idx, v)")
    target, indices, values = call.args
    if isinstance(target, gast.Name):
        # the whole array: after desugar (views and aliases followed, the rest
        # fenced) rebinding the name computes what the write into it does
        written = gast.copy_location(gast.Name(id=target.id, ctx=gast.Store(),
                                               annotation=None, type_comment=None), stmt)
    elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and \
            (_surely_a_view(target.slice) or call in lo.fenced.marks.unbuffered_views):
        written = gast.copy_location(gast.Subscript(value=target.value, slice=target.slice,
                                                    ctx=gast.Store()), stmt)
    elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
        raise lo.error(UnsupportedSyntaxError,
                       f"`{spelled}` writes into `{to_source(target)}`, which is not "
                       "surely a view of an array (a copy would take the update and be "
                       "thrown away)", stmt, construct=f"np.{ufunc.__name__}.at",
                       hint="name the array or a view with a slice in it: "
                            "`col = x[:, 0]`, then np.add.at(col, idx, v)")
    else:
        raise lo.error(UnsupportedSyntaxError,
                       f"`{spelled}` writes into `{to_source(target)}`, which is not a "
                       "local array or a view of one", stmt,
                       construct=f"np.{ufunc.__name__}.at",
                       hint="add into a local array, then use it: `acc = np.zeros(n); "
                            "np.add.at(acc, idx, v); self.F = self.F + acc`")
    hint = _base(target).id
    args = [_argument(lo, node, hint) for node in (_read(target), indices, values)]
    value = ir.Prim(primitive, args, {}, "call", ref=f"rt.{primitive.__name__}")
    return written, Lowered(value, stmt)


def _base(node):
    return node.value if isinstance(node, gast.Subscript) else node


def _argument(lo, node, hint):
    """An argument of ``rt.add_at`` as NumPy reads it: a tuple is one index per
    axis, a list (written, or held in a name) one index array."""
    if isinstance(node, (gast.Tuple, gast.List)):
        return lo.calls.sequence_argument(node, hint)
    value = lo.expressions.value(node, hint)
    if not is_container(value):
        return lo.expressions.atomize(value, hint)
    sequence = lo.containers.as_sequence(value, hint)
    return ir.Seq(sequence.items, "list") if getattr(value, "is_list", False) else sequence


def _surely_a_view(index):
    """Whether subscripting an array with ``index`` surely gives a view: basic
    indexing written with slices, ``...``, ``None`` and integer constants, one
    of them no integer (``x[:, 0]``; ``x[i]`` may be a copy if ``i`` is an array)."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    sliced = False
    for part in parts:
        if isinstance(part, gast.Slice) or (isinstance(part, gast.Constant) and
                                            (part.value is Ellipsis or part.value is None)):
            sliced = True
        elif isinstance(part, gast.UnaryOp) and isinstance(part.op, gast.USub):
            if not _integer_constant(part.operand):
                return False
        elif not _integer_constant(part):
            return False
    return sliced


def _integer_constant(node):
    return isinstance(node, gast.Constant) and type(node.value) is int


def _read(node):
    """A copy of the target expression ``node`` that reads it."""
    node = copy.deepcopy(node)
    for n in gast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return node


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
    if isinstance(a, gast.Subscript):  # B[1:], B[0], d['W']: written through it
        spelled = to_source(a)
        raise lo.error(UnsupportedSyntaxError, f"`{to_source(call)}` fills the diagonal of "
                       f"{spelled}, a part of an array or an item of a container, in place",
                       stmt, construct="np.fill_diagonal of a subscript",
                       hint=f"fill a named array and write it back: W = {spelled}.copy(); "
                            f"np.fill_diagonal(W, v); {spelled} = W")
    array = lo.expressions.atomize(lo.expressions.value(a, "diagonal"), "diagonal")
    index = ir.NonDiff(sx.rt("diagonal_index", ir.operand_node(array)),
                       ir.operand_names(array))
    val = lo.expressions.value(bound["val"], "val")
    if is_container(val):  # [1.0, 2.0]: stored as the array it makes
        return _subscript(a, Lowered(index, stmt), stmt), Lowered(val, stmt)
    val = lo.expressions.atomize(val, "val")
    values = ir.Prim(diagonal_values, [val, array], {}, "call", ref="rt.diagonal_values")
    return _subscript(a, Lowered(index, stmt), stmt), Lowered(values, stmt)


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


def _masked_put(lo, call, fn, stmt):
    """``np.putmask(a, mask, values)`` and ``np.place(a, mask, vals)``: refused with
    the subscript write each is (NumPy repeats a shorter ``values`` over the
    flattened array, which no broadcast says)."""
    name = fn.__name__
    hint = ("write it as a subscript write: a[...] = np.where(mask, values, a) (values one "
            "number, or an array of a's shape)" if fn is np.putmask else
            "write it as a subscript write: a[mask] = v (v one number), or a[mask] = "
            "vals[:np.count_nonzero(mask)] (as many values as the mask has True)")
    raise lo.error(UnsupportedSyntaxError, f"`{to_source(call)}` writes into its first "
                   f"argument in place (np.{name} repeats a shorter array of values over "
                   "the flattened array)", stmt, construct=f"np.{name}", hint=hint)


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
