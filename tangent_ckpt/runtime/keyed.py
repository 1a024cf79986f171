"""Dicts written at keys known only at run time (``hs[t] = np.tanh(W @ hs[t - 1])``
in a loop): functional updates, so a loop carries the dict like any value (a
taped loop keeps each step's dict, a checkpoint's snapshot holds it), and their
adjoints, which are dicts of the keys that received one, and their tangents
(forward mode), dicts of the keys that have one: in both a missing key is a zero."""

import numpy as np

from tangent_ckpt.runtime.backends import is_array, may_share_memory
from tangent_ckpt.errors import TransformError
from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import is_zero

__all__ = ["empty_dict", "dict_set", "dict_get", "DictAdjoint", "dict_set_adjoint_dict",
           "dict_set_adjoint_value", "dict_get_adjoint", "dict_set_tangent_dict",
           "dict_set_tangent_value", "dict_get_tangent", "check_sole_item"]


def empty_dict():
    return {}


def dict_set(d, key, value):
    """``d`` after ``d[key] = value`` (a new dict: the old one is left as it was)."""
    new = dict(d)
    new[key] = value
    return new


def dict_get(d, key):
    """``d[key]``."""
    return d[key]


def check_sole_item(d, key, filename, lineno):
    """Before ``xs[t][i] = v`` is run as a write into a copy of ``xs[t]`` stored back
    at ``t``: refuse when another entry of ``d`` may share memory with ``xs[t]``
    (Python's in-place write would change that entry too)."""
    item = d[key]
    for other_key, other in d.items():
        if other_key != key and (other is item or is_array(other) and is_array(item) and
                                 may_share_memory(other, item)):
            raise TransformError(f"the array written in place at key {key!r} is also the "
                                 f"entry at key {other_key!r} of the same dict",
                                 filename=filename, lineno=lineno,
                                 construct="write into a dict's array",
                                 hint="store a copy under each key (np.copy(x))")


class DictAdjoint(dict):
    """The adjoint of a dict: the adjoints of the keys that received one.  Adding
    two adds them key by key (a missing key is a zero)."""

    def __add__(self, other):
        if is_zero(other):
            return DictAdjoint(self)
        out = DictAdjoint(self)
        for key, value in other.items():
            out[key] = out[key] + value if key in out else value
        return out

    __radd__ = __add__

    def __iadd__(self, other):
        return self.__add__(other)


def dict_set_adjoint_dict(g, key):
    """Adjoint of ``d`` in ``dict_set(d, key, value)``: ``g`` without ``key`` (the
    old value at ``key`` was overwritten)."""
    if is_zero(g):
        return g
    out = DictAdjoint(g)
    out.pop(key, None)
    return out


def dict_set_adjoint_value(g, key):
    if is_zero(g):
        return g
    value = g.get(key, 0.0)
    return value


def dict_get_adjoint(g, ans, key):
    """Adjoint of ``d`` in ``ans = dict_get(d, key)``: ``g`` at ``key`` (shaped like
    ``ans``, so the reverse sweep never needs the dict itself)."""
    if is_zero(g):
        return g
    return DictAdjoint({key: g if np.shape(g) == np.shape(ans) else
                        np.broadcast_to(g, np.shape(ans)).copy()})


# --- tangents (forward mode): a DictAdjoint of the keys with a tangent ---------------
def _tangent_dict(t):
    """``t`` as a dict of tangents; anything else is a zero (the symbolic 0.0, or
    the ``np.zeros_like`` forward mode writes where control flow needs a value)."""
    return t if isinstance(t, dict) else None


def dict_set_tangent_dict(t, key):
    """The part of ``d``'s tangent ``t`` that ``dict_set(d, key, value)`` keeps:
    every key but ``key``."""
    t = _tangent_dict(t)
    if not t:
        return 0.0
    out = DictAdjoint(t)
    out.pop(key, None)
    return out


def dict_set_tangent_value(t, key):
    """The part of the tangent of ``dict_set(d, key, value)`` that ``value``'s
    tangent ``t`` gives: ``t`` at ``key``."""
    return t if is_zero(t) else DictAdjoint({key: t})


def dict_get_tangent(t, key, like):
    """The tangent of ``like = dict_get(d, key)`` given ``d``'s tangent ``t``: its
    entry at ``key``, or zeros shaped like ``like`` where it has none."""
    t = _tangent_dict(t)
    if t is not None and key in t:
        return t[key]
    return np.zeros_like(like)
