"""Which NumPy functions the running NumPy has, and in which releases the
version-dependent ones exist.

NumPy adds functions (``np.trapezoid``, ``np.vecdot`` in 2.0) and removes
deprecated spellings (``np.trapz`` and ``np.in1d`` in 2.4, ``np.row_stack`` in
2.5).  A rule row names such a function through :func:`numpy_function`, which
gives ``None`` where the running NumPy lacks it, and ``defadjoint(None, ...)``
registers nothing: the package imports on every NumPy it declares.
``docs/supported_ops.md`` prints :data:`VERSIONS` next to those rows.
"""

import numpy as np

#: dotted name under ``np`` -> the NumPy releases that have it (only the names
#: that some supported NumPy lacks)
VERSIONS = {
    "matrix_transpose": "NumPy 2.0 and later",
    "vecdot": "NumPy 2.0 and later",
    "linalg.vector_norm": "NumPy 2.0 and later",
    "trapezoid": "NumPy 2.0 and later",
    "cumulative_sum": "NumPy 2.1 and later",
    "trapz": "NumPy before 2.4 (deprecated in 2.0: `np.trapezoid`, the same rule)",
    "row_stack": "NumPy before 2.5 (deprecated in 2.0: `np.vstack`, the same rule)",
}


def numpy_function(dotted):
    """``np.<dotted>`` in the running NumPy, or None where it has no such name
    (``numpy_function("linalg.vector_norm")``)."""
    if dotted not in VERSIONS:
        raise KeyError(f"np.{dotted} is not listed in VERSIONS: name it there with the "
                       "releases that have it")
    found = np
    for part in dotted.split("."):
        found = getattr(found, part, None)
        if found is None:
            return None
    return found


def available(*dotted):
    """The functions of ``dotted`` that the running NumPy has, in order."""
    return tuple(fn for fn in map(numpy_function, dotted) if fn is not None)


def versions_of(fn):
    """The releases that have ``fn``, for a version-dependent function; else None."""
    for dotted, text in VERSIONS.items():
        if fn is not None and numpy_function(dotted) is fn:
            return text
    return None
