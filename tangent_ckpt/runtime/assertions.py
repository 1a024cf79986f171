"""The user's `assert` and `raise` statements, as generated code runs them
(`rt.check`, `rt.raise_error`), and the checks NumPy makes of a call the gradient writes another way
(`rt.check_out_cast`)."""

import numpy as np

from tangent_ckpt.errors import TransformError


def check(condition, message=None):
    """The user's ``assert condition, message``, run where the user ran it
    (also under ``python -O``: it is part of the program the gradient follows)."""
    if not condition:
        raise AssertionError(message) if message is not None else AssertionError()


_NO_CAUSE = object()


def raise_error(error, cause=_NO_CAUSE):
    """The user's ``raise error`` (``raise error from cause``), run where the
    user raised it: generated code calls it only on the path that raises, so
    ``error`` is built only there, as in the user's code."""
    if cause is _NO_CAUSE:
        raise error
    raise error from cause


def check_out_cast(result, out, ufunc, filename, lineno):
    """``f(..., out=y)`` run as ``y[...] = f(...)``: refuse, as NumPy would, a
    result that ``y`` cannot hold -- a ufunc's result cast to ``y``'s dtype only
    within its kind (float64 into float32, never float into int), another
    function's result only of ``y``'s own dtype."""
    have, want = np.result_type(result), np.asarray(out).dtype
    if have == want or (ufunc and np.can_cast(have, want, casting="same_kind")):
        return
    raise TransformError(f"out= of dtype {want} cannot hold the result of dtype {have}",
                         filename=filename, lineno=lineno, construct="out= argument",
                         hint="assign the result instead: y = f(...)")
