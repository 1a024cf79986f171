"""Transform: calls with no adjoint rule, refused by name at the user's line.

A NumPy function is named as the code names it (``np.linalg.eig``); another
library's by its public path (``scipy.integrate.solve_ivp``), with the way to
wrap a black box (docs/black_boxes.md).  The attribute of such a call's result
(``sol.y``) is refused as the call itself.
"""

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.naming import public_name
from tangent_ckpt.errors import UnsupportedFunctionError


def no_rule(rev, prim, line):
    """No adjoint rule for the call ``prim``: NumPy's functions by the name the code
    uses (``np.linalg.eig``), another library's by its public path
    (``scipy.integrate.solve_ivp``), with the way to wrap a black box."""
    module = getattr(prim.fn, "__module__", None) or ""
    if module.split(".")[0] == "numpy" or not public_name(prim.fn):
        name = prim.ref or getattr(prim.fn, "__name__", repr(prim.fn))
        wrap = ""
    else:
        name = public_name(prim.fn)
        wrap = ("; for a black-box solver, wrap the call in a function of the arrays and "
                "register its adjoint (docs/black_boxes.md)")
    return rev.error(UnsupportedFunctionError, f"no adjoint rule for {name}", line,
                     construct=name,
                     hint=f"register one with tangent_ckpt.register_adjoint({name}, rule), "
                          f"or compute it outside the differentiated path{wrap}")


def refuse_black_box_result(rev, prim):
    """``sol.y`` of a result the program got from a library call without an adjoint
    rule (``sol = scipy.integrate.solve_ivp(...)``): the call is what cannot be
    differentiated, so the refusal names it, at its line."""
    base = prim.args[0] if prim.args else None
    if not isinstance(base, ir.Name):
        return
    for stmt in ir.walk(rev.function.body):
        if isinstance(stmt, ir.Assign) and stmt.target == base.id and \
                isinstance(stmt.expr, ir.Prim) and not stmt.expr.render.startswith("attr:") \
                and registry.lookup(stmt.expr.fn) is None:
            raise no_rule(rev, stmt.expr, stmt.line)
