"""Package (forward mode): the tangent-linear function around its body.

``def jvp_loss(h, W, b, n, dW, db):`` -- a comment naming the function and the
``wrt`` parameters, the body with its tangents, and the return of the value
and its tangent (or the tangent alone, the function ``tc.hvp`` differentiates
again).
"""

import os

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, Line
from tangent_ckpt.compiler.package.gradient import GradientCode


def package_tangent(function, body, tan, nonzero, wrt_names, namer, return_value=True):
    """Package.  Takes the lowered function, its forward code, the tangent names
    and the tangents nonzero at the end; gives the :class:`GradientCode` that
    emit prints (its ``seed`` is None: a tangent function takes no adjoint)."""
    result = function.result
    if result in nonzero:
        dresult = sx.name(tan(result))
    else:
        dresult = sx.call("np.zeros_like", result)
    returned = [result, dresult] if return_value else [dresult]
    name = namer.fresh(("jvp_" if return_value else "tangent_") + function.name)
    params = list(function.params) + [tan(p) for p in wrt_names]
    comment = Comment(f"tangent of {function.name}() ({os.path.basename(function.filename or '?')}:"
                      f"{function.line}) in the direction {', '.join(tan(p) for p in wrt_names)}"
                      f" of {', '.join(wrt_names)}")
    code = [comment] + body + [Line(sx.return_(returned))]
    return GradientCode(name, params, None, [[Block(sx.def_(name, params), code)]])
