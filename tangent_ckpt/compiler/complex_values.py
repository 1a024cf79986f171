"""Analyze: which local names may hold complex values.

A name may be complex when its value comes, directly or through any primitive,
from a complex constant (``1j``), a complex global array, or a Fourier transform
(``np.fft.fft``); ``np.real``, ``np.imag``, ``abs`` and ``np.fft.irfft`` give
real values again.  The reverse transform uses it for one thing: an adjoint
accumulated in place into the buffer of a *real* name (``bW += ...`` in a loop)
takes the real part of a contribution that reads complex values -- the
imaginary part is no derivative of a real value (see
``runtime/complex_adjoints.py``), and NumPy cannot add it into a real buffer.
"""

import builtins

import numpy as np

from tangent_ckpt.compiler import ir

COMPLEX_RESULTS = frozenset(map(id, (
    np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.fft2, np.fft.ifft2, np.fft.fftn,
    np.fft.ifftn, np.fft.rfft2, np.fft.rfftn)))
REAL_RESULTS = frozenset(map(id, (
    np.real, np.imag, np.absolute, np.fabs, builtins.abs, np.angle, np.fft.irfft,
    np.fft.irfft2, np.fft.irfftn)))


def complex_names(function, bindings):
    """The local names of ``function`` that may hold complex values, and the
    globals in ``bindings`` that do."""
    names = {name for name, value in bindings.items() if _is_complex_value(value)}
    assignments = [stmt for stmt in ir.walk(function.body)
                   if isinstance(stmt, (ir.Assign, ir.SetItem))]
    changed = True
    while changed:                          # to a fixed point: loops carry values back
        changed = False
        for stmt in assignments:
            if stmt.target not in names and _makes_complex(stmt, names):
                names.add(stmt.target)
                changed = True
    return names


def _is_complex_value(value):
    return isinstance(value, (complex, np.complexfloating)) or \
        (isinstance(value, np.ndarray) and value.dtype.kind == "c")


def _makes_complex(stmt, names):
    if isinstance(stmt, ir.SetItem):
        return _operand_complex(stmt.value, names)
    expr = stmt.expr
    if isinstance(expr, ir.Copy):
        return _operand_complex(expr.value, names)
    if isinstance(expr, ir.Prim):
        if id(expr.fn) in COMPLEX_RESULTS:
            return True
        if id(expr.fn) in REAL_RESULTS:
            return False
        return any(_operand_complex(a, names)
                   for a in list(expr.args) + list(expr.kwargs.values()))
    return False


def _operand_complex(op, names):
    if isinstance(op, ir.Const):
        return isinstance(op.value, complex)
    if isinstance(op, ir.Seq):
        return any(_operand_complex(item, names) for item in op.items)
    return any(name in names for name in ir.operand_names(op))
