"""Dicts written at keys known only at run time (``hs[t] = np.tanh(W @ hs[t - 1])``
in a loop): functional updates, so a loop carries the dict like any value (a
taped loop keeps each step's dict, a checkpoint's snapshot holds it), and their
adjoints, which are dicts of the keys that received one."""

import numpy as np

from tangent_ckpt.runtime.numpy_adjoints import is_zero

__all__ = ["empty_dict", "dict_set", "dict_get", "DictAdjoint", "dict_set_adjoint_dict",
           "dict_set_adjoint_value", "dict_get_adjoint"]


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
