"""Package (forward mode): the tangent-linear function around its body.

``def jvp_loss(h, W, b, n, dW, db):`` -- a comment naming the function and the
``wrt`` parameters, the body with its tangents, and the return of the value
and its tangent (or the tangent alone, the function ``tc.hvp`` differentiates
again).
"""

import ast
import copy
import os

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, Line
from tangent_ckpt.compiler.package.gradient import GradientCode


def package_tangent(function, body, tan, nonzero, wrt_names, namer, return_value=True):
    """Package.  Takes the lowered function, its forward code, the tangent names
    and the tangents nonzero at the end; gives the :class:`GradientCode` that
    emit prints (its ``seed`` is None: a tangent function takes no adjoint)."""
    def tangent_of(name):
        return sx.name(tan(name)) if name in nonzero else sx.call("np.zeros_like", name)

    if function.outputs is None:
        value, dvalue = sx.name(function.result), tangent_of(function.result)
    else:  # a tuple or list of outputs: a tangent of the same structure
        value = copy.deepcopy(function.outputs)
        dvalue = _TangentsOf(tangent_of).visit(copy.deepcopy(function.outputs))
    returned = [value, dvalue] if return_value else [dvalue]
    if function.aux is not None:  # has_aux: returned as computed, after the tangent
        returned.append(copy.deepcopy(function.aux))
    name = namer.fresh(("jvp_" if return_value else "tangent_") + function.name)
    params = list(function.params) + [tan(p) for p in wrt_names]
    comment = Comment(f"tangent of {function.name}() ({os.path.basename(function.filename or '?')}:"
                      f"{function.line}) in the direction {', '.join(tan(p) for p in wrt_names)}"
                      f" of {', '.join(wrt_names)}")
    code = [comment] + body + [Line(sx.return_(returned))]
    return GradientCode(name, params, None, [[Block(sx.def_(name, params), code)]])


class _TangentsOf(ast.NodeTransformer):
    """Each name of a returned container replaced by its tangent."""

    def __init__(self, tangent_of):
        self.tangent_of = tangent_of

    def visit_Name(self, node):
        return self.tangent_of(node.id)
