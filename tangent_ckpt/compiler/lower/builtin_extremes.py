"""Lower: Python's ``max(values)`` and ``min(values)`` of one iterable.

``max(abs(u))`` (the CFL step ``dt = cfl * dx / max(abs(u))``) walks ``u``'s
first axis as Python iterates it and returns one of its items: the item at the
position Python keeps (``rt.max_position``, computed when the code runs, no
derivative), read as ``u[k]``, whose adjoint is an index's.  ``max(a, b)`` of
two numbers is the registry's rule (as ``np.maximum``); of a list or tuple of
items known when compiling, desugar wrote the pairs ``max(max(a, b), c)``
(``desugar/extreme_items.py``).  ``key=``, ``default=``, a list or tuple the
lowering holds (a dict, a list of lists, one desugar did not follow) are
refused, saying what to write instead.
"""

import ast
import builtins
import operator

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.container_values import DictValue
from tangent_ckpt.compiler.lower.scopes import TupleValue, to_source
from tangent_ckpt.errors import UnsupportedFunctionError

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
    if isinstance(value, TupleValue):  # one whose items desugar knows is pairs already
        what = "an empty list or tuple" if not value.items else \
            "a dict (its keys)" if isinstance(value, DictValue) else \
            "a list or tuple whose items are known only here (built in a loop the " \
            "lowering unrolls, or holding lists or tuples)"
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

