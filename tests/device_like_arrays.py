"""An array library that refuses what CuPy refuses, for tests that run without a GPU.

CuPy on a GPU (run on an H200, docs/backends.md) refuses three things the
adjoint rules can do by accident, each a ``TypeError``:

- an implicit conversion to a NumPy array (``np.asarray(x)``, ``float`` works);
- a NumPy array as an operand of its functions and operators ("Unsupported
  type <class 'numpy.ndarray'>"); NumPy scalars and Python numbers are taken;
- NumPy 2's ``device=`` keyword, which NumPy passes on to the ``like=``
  library from ``np.eye(n, like=x)`` and ``np.full(..., like=x)``.

:class:`DeviceLikeArray` wraps a NumPy array and does the same, so that a rule
that builds a NumPy array where it meets a CuPy one fails here too.  It has the
``__cuda_array_interface__`` and ``get()`` of a CuPy array (the runtime takes
it for one in a GPU's memory) and, as CuPy, returns its reductions as 0-d
arrays of its own.
"""

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

#: functions that move data in (a NumPy array is their input, not an operand)
_TRANSFERS = {np.asarray, np.array, np.asanyarray, np.ascontiguousarray}
#: functions whose second argument is a shape or axes (CuPy takes a NumPy array of ints there)
_SHAPED = {np.reshape, np.broadcast_to, np.transpose}


class DeviceLikeArray(NDArrayOperatorsMixin):
    """A NumPy array behind CuPy's refusals (module docstring)."""

    def __init__(self, data):
        self._data = np.asarray(data)

    # -- what the runtime reads of an array of another library
    @property
    def __cuda_array_interface__(self):
        return {"shape": self._data.shape, "typestr": self._data.dtype.str, "version": 3}

    shape = property(lambda self: self._data.shape)
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)
    nbytes = property(lambda self: self._data.nbytes)
    T = property(lambda self: wrap(self._data.T))
    real = property(lambda self: wrap(self._data.real))
    imag = property(lambda self: wrap(self._data.imag))

    def get(self):
        """The values as a NumPy array (CuPy's device-to-host copy)."""
        return self._data.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. "
                        "Please use `.get()` to construct a NumPy array explicitly.")

    def __repr__(self):
        return f"DeviceLikeArray({self._data!r})"

    def __len__(self):
        return len(self._data)

    def __float__(self):
        return float(self._data)

    def __int__(self):
        return int(self._data)

    def __bool__(self):
        return bool(self._data)

    def __index__(self):
        return self._data.__index__()

    def __iter__(self):
        return (wrap(row) for row in self._data)

    def __getitem__(self, key):
        return wrap(self._data[operands(key)])

    def __setitem__(self, key, value):
        self._data[operands(key)] = operands(value)

    def __getattr__(self, name):  # methods: x.sum(), x.reshape(...), x.astype(...)
        attr = getattr(self._data, name)
        if not callable(attr):
            return wrap(attr)
        return lambda *args, **kwargs: wrap(attr(*operands(args), **operands(kwargs)))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        result = getattr(ufunc, method)(*operands(inputs), **operands(kwargs))
        return out[0] if out else wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        if "device" in kwargs:
            raise TypeError(f"{func.__name__}() got an unexpected keyword argument 'device'")
        if func in _SHAPED and len(args) > 1 and isinstance(args[1], np.ndarray):
            args = (args[0], tuple(int(n) for n in args[1]), *args[2:])
        if func in _TRANSFERS:
            return wrap(func(*[a._data if isinstance(a, DeviceLikeArray) else a
                               for a in args], **kwargs))
        return wrap(func(*operands(args), **operands(kwargs)))


def operands(value):
    """``value`` with each DeviceLikeArray unwrapped; a NumPy array refused."""
    if isinstance(value, DeviceLikeArray):
        return value._data
    if isinstance(value, np.ndarray):
        raise TypeError(f"Unsupported type {type(value)}")
    if isinstance(value, tuple):
        return tuple(operands(v) for v in value)
    if isinstance(value, list):
        return [operands(v) for v in value]
    if isinstance(value, dict):
        return {k: operands(v) for k, v in value.items()}
    return value


def wrap(value):
    """NumPy results as DeviceLikeArrays (0-d ones for scalars, as CuPy's reductions)."""
    if isinstance(value, (np.ndarray, np.generic)) and not isinstance(value, np.dtype):
        return DeviceLikeArray(value)
    if isinstance(value, tuple):
        return tuple(wrap(v) for v in value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


def on_device_like(values):
    """NumPy arrays among ``values`` as DeviceLikeArrays; the rest unchanged."""
    return tuple(DeviceLikeArray(v) if isinstance(v, np.ndarray) else v for v in values)
