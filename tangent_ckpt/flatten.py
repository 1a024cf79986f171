"""``tc.ravel``: nested parameters <-> one flat float64 vector, for optimizers
such as ``scipy.optimize.minimize`` that want a single 1-D array.

A *leaf* is a NumPy array or a real number; containers are lists, tuples and
dicts, nested to any depth.  Leaves are laid out one after the other in
traversal order -- list and tuple items in order, dict values in the dict's
insertion order -- each raveled in C (row-major) order and converted to
float64.  ``unravel(flat)`` rebuilds the same structure: every array leaf as a
new float64 array of its shape, every number leaf as a Python float.  Arrays of
another library (CuPy, Dask; docs/backends.md) give a vector of that library.
"""

from typing import Any, Callable, List, Tuple

import numpy as np

from tangent_ckpt.errors import TangentCkptError
from tangent_ckpt.runtime.backends import as_array, in_library_of, is_array, like_of

Unravel = Callable[[np.ndarray], Any]


def ravel(params: Any) -> Tuple[np.ndarray, Unravel]:
    """Flatten ``params`` (nested lists, tuples and dicts of arrays and floats).

    Returns ``(flat, unravel)``: ``flat`` is a new 1-D float64 array (C order,
    leaves in traversal order), and ``unravel(v)`` turns any vector of
    ``flat``'s length back into the structure of ``params``.  The inputs are
    never modified, and ``unravel``'s arrays never share memory with ``v``.

    >>> flat, unravel = ravel([np.ones((2, 2)), {"b": 3.0}])
    >>> flat
    array([1., 1., 1., 1., 3.])
    >>> unravel(flat * 2)
    [array([[2., 2.],
           [2., 2.]]), {'b': 6.0}]
    """
    leaves: List[Tuple[str, np.ndarray]] = []
    skeleton = _skeleton(params, "params", leaves)
    like = like_of(*(a for _, a in leaves))
    if like is not None:   # CuPy or Dask arrays: one vector of their library
        leaves = [(path, in_library_of(a, like)) for path, a in leaves]
    sizes = [a.size for _, a in leaves]
    if leaves:
        flat = np.concatenate([np.ravel(a) for _, a in leaves])   # C order
    else:
        flat = np.zeros(0)
    total = int(flat.size)

    def unravel(vector: np.ndarray) -> Any:
        vector = as_array(vector, dtype=np.float64)
        if vector.shape != (total,):
            raise TangentCkptError(f"unravel expects a vector of shape ({total},), "
                                   f"got shape {vector.shape}")
        ends = np.cumsum(sizes).tolist()
        pieces = iter([vector[start:end] for start, end in zip([0] + ends, ends)])
        return _rebuild(skeleton, pieces)

    return flat, unravel


class _Leaf:
    """A leaf's place in the skeleton: its shape, and whether it was a number."""

    def __init__(self, shape, scalar):
        self.shape = shape
        self.scalar = scalar


def _skeleton(node, path, leaves):
    if isinstance(node, dict):
        return {k: _skeleton(v, f"{path}[{k!r}]", leaves) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        items = [_skeleton(v, f"{path}[{i}]", leaves) for i, v in enumerate(node)]
        return items if isinstance(node, list) else _as_tuple(node, items)
    scalar = isinstance(node, (int, float, np.integer, np.floating)) and \
        not isinstance(node, bool)
    if not (scalar or is_array(node)):
        raise TangentCkptError(f"ravel: {path} is a {type(node).__name__}; leaves must be "
                               "arrays or real numbers (containers: list, tuple, dict)")
    array = as_array(node)
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise TangentCkptError(f"ravel: {path} has dtype {array.dtype}; leaves must be real "
                               "numbers (float or int)")
    leaves.append((path, array.astype(np.float64)))
    return _Leaf(array.shape, scalar)


def _as_tuple(node, items):
    if hasattr(node, "_fields"):  # a namedtuple keeps its type
        return type(node)(*items)
    return tuple(items)


def _rebuild(node, pieces):
    if isinstance(node, _Leaf):
        piece = next(pieces)
        return float(piece[0]) if node.scalar else piece.reshape(node.shape).copy()
    if isinstance(node, dict):
        return {k: _rebuild(v, pieces) for k, v in node.items()}
    if isinstance(node, list):
        return [_rebuild(v, pieces) for v in node]
    items = [_rebuild(v, pieces) for v in node]
    return type(node)(*items) if hasattr(node, "_fields") else tuple(items)
