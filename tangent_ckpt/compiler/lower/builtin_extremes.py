"""Lower: Python's ``max(values)`` and ``min(values)`` of one iterable.

``max(abs(u))`` (the CFL step ``dt = cfl * dx / max(abs(u))``) walks ``u``'s
first axis as Python iterates it and returns one of its items: the item at the
position Python keeps (``rt.max_position``, computed when the code runs, no
derivative), read as ``u[k]``, whose adjoint is an index's.  ``max(a, b)`` of
two numbers is the registry's rule (as ``np.maximum``); of a list or tuple of
values known when compiling (``xs = [a, b, c]; max(xs)``), the pairs
``max(max(a, b), c)``, which keep the first largest as Python does.  ``key=``,
``default=``, an empty list, a dict and a list of lists are refused, saying what
to write instead.
"""

import ast
import builtins
import operator

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.container_values import DictValue
from tangent_ckpt.compiler.lower.scopes import Lowered, TupleValue, to_source
from tangent_ckpt.errors import UnsupportedFunctionError
from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import item_at

EXTREMES = {builtins.max: "max_position", builtins.min: "min_position"}


def is_extreme_of_one_iterable(fn, node):
    """``max(u)`` / ``min(u)`` (one positional argument, maybe keywords)."""
    return any(fn is f for f in EXTREMES) and len(node.args) == 1


def extreme_of_one_iterable(lo, fn, node, hint):
    name = fn.__name__
    if node.keywords:
        raise lo.error(UnsupportedFunctionError, f"{name}() with "
                       f"{', '.join(k.arg + '=' for k in node.keywords)}", node,
                       construct=to_source(node),
                       hint=f"write the choice out: np.arg{name}(...) and an index")
    value = lo.expressions.value(node.args[0], hint)
    if isinstance(value, TupleValue) and not isinstance(value, DictValue) and value.items \
            and not any(isinstance(v, TupleValue) for v in value.items):
        # max(xs) of xs = [a, b, c]: Python keeps the first largest, as the pairs
        # max(max(a, b), c) do (desugar/extreme_arguments.py writes a display so)
        result = value.items[0]
        for item in value.items[1:]:
            pair = gast.Call(func=node.func, args=[Lowered(result, node), Lowered(item, node)],
                             keywords=[])
            result = lo.expressions.value(gast.copy_location(pair, node), hint)
        return result
    if isinstance(value, TupleValue):
        what = "an empty list or tuple" if not value.items else \
            "a dict (its keys)" if isinstance(value, DictValue) else "a list of lists or tuples"
        raise lo.error(UnsupportedFunctionError, f"{name}() of {what}",
                       node, construct=to_source(node),
                       hint=f"pass the values as arguments ({name}(a, b) of two numbers), "
                            f"or as an array: np.{name}(np.array([...]))")
    lo.run_time.refuse_nested(value, f"{name}()", node)
    values = lo.expressions.atomize(value, hint)
    position = lo.namer.fresh(f"{hint}_{name}_at")
    lo.emit(ir.Assign(position, ir.NonDiff(sx.rt(EXTREMES[fn], ir.operand_node(values)),
                                           ir.operand_names(values)), node.lineno))
    index = ir.Index(ast.Name(id=position, ctx=ast.Load()), (position,), True)
    return ir.Prim(operator.getitem, [values, index], {}, "getitem")


def is_sorted_of_one_iterable(fn, node):
    """``sorted(xs)`` / ``sorted(xs, reverse=...)`` (no ``key=``)."""
    return fn is builtins.sorted and len(node.args) == 1 and \
        all(k.arg == "reverse" for k in node.keywords)


def sorted_items(lo, node, hint):
    """``sorted(xs)`` of a list or tuple whose items are known when compiling
    (``ys = [a, b, c]; ys.sort()``): the positions of the items in the order
    Python's sort leaves them, found when the code runs (``rt.sorted_order``, no
    derivative), and item ``k`` of the new list the item at position ``k``
    (``rt.item_at``, whose adjoint goes to that item); None for anything else."""
    reverse = {}
    for k in node.keywords:  # reverse=True, a constant
        if not (isinstance(k.value, gast.Constant) and isinstance(k.value.value, bool)):
            return None
        reverse = {"reverse": sx.const(k.value.value)}
    # decided before anything is evaluated (the call is lowered as it was otherwise)
    arg = node.args[0]
    if isinstance(arg, gast.Name):
        value = lo.expressions.load_name(arg.id, arg)
    elif isinstance(arg, (gast.List, gast.Tuple)) and \
            not any(isinstance(e, (gast.List, gast.Tuple, gast.Dict, gast.Starred))
                    for e in arg.elts) and \
            not all(isinstance(e, gast.Constant) for e in arg.elts):
        value = lo.expressions.value(arg, hint)
    else:
        return None
    if not isinstance(value, TupleValue) or isinstance(value, DictValue) or \
            any(isinstance(v, TupleValue) for v in value.items) or \
            all(isinstance(v, ir.Const) for v in value.items):
        return None  # (a name: nothing evaluated; constants: the call as it was)
    items = [lo.expressions.atomize(v, hint) for v in value.items]
    order = lo.namer.fresh(f"{hint}_order")
    shown = gast.List(elts=[ir.operand_node(v) for v in items], ctx=gast.Load())
    names = tuple(dict.fromkeys(n for v in items for n in ir.operand_names(v)))
    lo.emit(ir.Assign(order, ir.NonDiff(sx.rt("sorted_order", shown, **reverse), names),
                      node.lineno))
    return TupleValue([lo.expressions.atomize(
        ir.Prim(item_at, [ir.Name(order), ir.Const(k), *items], {}, "call", ref="rt.item_at"),
        hint) for k in range(len(items))], is_list=True)
