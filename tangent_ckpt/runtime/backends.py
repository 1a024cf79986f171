"""Array libraries beyond NumPy: CuPy, Dask and any other array type that takes
part in NumPy's dispatch protocols.

An array of another library is recognised by what it does, never by importing
that library: it is not a ``np.ndarray`` but implements ``__array_function__``
and ``__array_ufunc__`` (NEP 18 and NEP 13) and has a ``shape`` and a
``dtype``.  ``np.tanh(x)``, ``np.zeros_like(x)`` and ``np.asarray(v, like=x)``
then run in the array's own library, so the generated gradient and the
runtime's helpers, written against NumPy's API, run there too: the results
come back as that library's arrays.

What crosses between the array's memory and the host's is named here once:
:func:`to_host` (a CuPy array's ``.get()``, a Dask array's ``compute()``) and
:func:`from_host` (a NumPy array back into the library of a given array), for
the snapshot level that spills a device's snapshots to host memory.
"""

from collections import namedtuple

import numpy as np

from tangent_ckpt.errors import BackendError

__all__ = ["is_foreign_array", "is_array", "library_of", "Library", "array_library",
           "on_device", "to_host", "from_host", "in_library_of", "copy_array", "as_array", "like_of",
           "may_share_memory", "NumpyFor", "run_on", "BackendError", "refuse"]


def is_foreign_array(x) -> bool:
    """An array of another library that NumPy's functions dispatch to (a CuPy
    or Dask array): not a ``np.ndarray``, with NumPy's dispatch protocols."""
    if isinstance(x, (np.ndarray, np.generic, type)):
        return False
    cls = type(x)
    return hasattr(cls, "__array_function__") and hasattr(cls, "__array_ufunc__") and \
        hasattr(x, "shape") and hasattr(x, "dtype")


def is_array(x) -> bool:
    """A NumPy array or an array of a library NumPy's functions dispatch to."""
    return isinstance(x, np.ndarray) or is_foreign_array(x)


def on_device(x) -> bool:
    """An array in a GPU's memory (CuPy's: it has the ``__cuda_array_interface__``),
    which host-memory measurements (tracemalloc) do not see."""
    return hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray)


def library_of(x) -> str:
    """The top-level module of an array's type ("numpy", "cupy", "dask"): how
    messages name a backend."""
    return type(x).__module__.split(".")[0]


def to_host(x):
    """A NumPy array with the values of the array ``x`` (a copy when ``x`` is
    another library's array: a CUDA array's ``.get()`` (CuPy's: it has the
    ``__cuda_array_interface__``), a lazy array's ``.compute()`` (Dask's), else
    ``__array__``)."""
    if isinstance(x, np.ndarray):
        return x
    if on_device(x) and callable(getattr(x, "get", None)):
        return x.get()
    compute = getattr(x, "compute", None)
    if callable(compute):
        return np.asarray(compute())
    return np.asarray(x)


def from_host(host, like):
    """The NumPy array ``host`` as an array of ``like``'s library (NumPy's
    ``like=`` dispatch, NEP 35): ``host`` itself when ``like`` is NumPy's."""
    if not is_foreign_array(like):
        return host
    return np.asarray(host, like=like)


def in_library_of(value, like, dtype=None):
    """``value`` (a number, a NumPy array or an array of ``like``'s library) as
    an array of ``like``'s library, made there (NumPy's ``like=``), not a NumPy
    array that a CuPy array could not be combined with."""
    if type(value) is type(like):
        return value if dtype is None or value.dtype == dtype else value.astype(dtype)
    if is_foreign_array(value):
        refuse("combining arrays of two libraries", like,
               f"a {library_of(value)} array met a {library_of(like)} array")
    return np.asarray(value, dtype=dtype, like=like)


def copy_array(x):
    """A copy of ``x`` in its own library (``np.array(x, copy=True)`` would make
    a NumPy array of a CuPy or Dask one)."""
    if is_foreign_array(x):
        return x.copy()
    return np.array(x, copy=True)


def refuse(function, x, why="", cause=None):
    """The refusal of ``function`` on the array ``x`` of a library that cannot
    do it: names the function and the library."""
    raise BackendError(f"{function} is not supported on {library_of(x)} arrays "
                       f"({type(x).__module__}.{type(x).__name__})"
                       + (f": {why}" if why else "")) from cause


class Library(namedtuple("Library", "name array_type")):
    """An array library other than NumPy, as the arguments of one call show it:
    its name ("cupy", "dask") and its array type (part of the compile key)."""

    __slots__ = ()

    @property
    def has_views(self):
        """Do its slices share memory with their array, as NumPy's do (CuPy: yes,
        ``base``; Dask: no, a slice is a new array)?"""
        return hasattr(self.array_type, "base")

    def __str__(self):
        return self.name


def array_library(values):
    """The :class:`Library` of the first array of another library among
    ``values`` (flat arguments), or None when they are all NumPy's."""
    for value in values:
        if is_foreign_array(value):
            return Library(library_of(value), type(value))
    return None


class NumpyFor:
    """NumPy's namespace as the generated code of a gradient run on another
    array library sees it (the ``np`` of its globals).

    Every function is NumPy's, which dispatches to the array's library, except
    the few that NumPy does not dispatch or that a library leaves to NumPy,
    which would turn an array of that library into a NumPy array: a copy
    (``np.copy``, which Dask hands back to NumPy), a cast (``np.asarray(x,
    dtype=float)``, the lowering's ``x.astype(float)``), ``np.size`` and the
    memory tests of the aliasing guards, which are False for arrays without
    views (Dask's)."""

    def __init__(self, library):
        self.library = library
        self.__name__ = f"numpy (for {library} arrays)"
        # isinstance(x, np.ndarray) in generated code asks "does x have views?"
        self.ndarray = (np.ndarray, library.array_type) if library.has_views else np.ndarray

    def __getattr__(self, name):
        return getattr(np, name)

    def __repr__(self):
        return f"<NumPy's functions on {self.library} arrays>"

    @staticmethod
    def copy(a, order="K", subok=False):
        return a.copy() if is_foreign_array(a) else np.copy(a, order=order, subok=subok)

    @staticmethod
    def asarray(a, dtype=None, order=None, **kwargs):
        if is_foreign_array(a):
            return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
        return np.asarray(a, dtype=dtype, order=order, **kwargs)

    @staticmethod
    def array(a, dtype=None, copy=True, **kwargs):
        if is_foreign_array(a):
            if dtype is not None and a.dtype != np.dtype(dtype):
                return a.astype(dtype)
            return a.copy() if copy else a
        return np.array(a, dtype=dtype, copy=copy, **kwargs)

    @staticmethod
    def size(a, axis=None):
        if is_foreign_array(a):
            return a.size if axis is None else a.shape[axis]
        return np.size(a, axis)

    @staticmethod
    def shares_memory(a, b, max_work=None):
        if (is_foreign_array(a) and not hasattr(a, "base")) or \
                (is_foreign_array(b) and not hasattr(b, "base")):
            return False   # arrays of a library without views (Dask's) share nothing
        return np.shares_memory(a, b) if max_work is None else \
            np.shares_memory(a, b, max_work=max_work)

    @staticmethod
    def may_share_memory(a, b, max_work=None):
        if (is_foreign_array(a) and not hasattr(a, "base")) or \
                (is_foreign_array(b) and not hasattr(b, "base")):
            return False
        return np.may_share_memory(a, b) if max_work is None else \
            np.may_share_memory(a, b, max_work=max_work)


def run_on(library, source, namespace, name, filename):
    """The generated function ``name`` of ``source`` defined afresh in a copy of
    its ``namespace`` where NumPy is :class:`NumpyFor` ``library``: the same
    code, run on that library's arrays.  ``filename`` keeps its tracebacks
    pointing at the same lines."""
    proxy = NumpyFor(library)
    namespace = {k: (proxy if v is np else proxy.ndarray if v is np.ndarray else v)
                 for k, v in namespace.items()}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name], namespace


def as_array(x, dtype=None):
    """``np.asarray(x, dtype)`` that keeps an array of another library in its
    library (``np.asarray`` would compute a Dask array and refuse a CuPy one)."""
    if is_foreign_array(x):
        return x if dtype is None or x.dtype == np.dtype(dtype) else x.astype(dtype)
    return np.asarray(x, dtype=dtype)


#: ``like=`` of an allocation that stays in NumPy: NumPy before 2.0 refuses an
#: explicit ``like=None`` ("must be an array-like that implements __array_function__")
_NUMPY_LIKE = np.empty(0)


def like_of(*values):
    """The first array of another library among ``values``, else an empty NumPy
    array: the ``like=`` of a NumPy allocation (``np.zeros(shape, like=like_of(g,
    x))``) that must be made in the library of the arrays it meets."""
    for value in values:
        if is_foreign_array(value):
            return value
    return _NUMPY_LIKE


def may_share_memory(a, b):
    """``np.may_share_memory`` for arrays of any library: False for an array of
    a library without views (Dask's), whose arrays never share memory."""
    if (is_foreign_array(a) and not hasattr(a, "base")) or \
            (is_foreign_array(b) and not hasattr(b, "base")):
        return False
    return bool(np.may_share_memory(a, b))
