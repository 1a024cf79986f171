"""``backend="numba"``: the generated step functions compiled with ``numba.njit``.

The compiler writes the generated module for Numba (``compiler/backend/numba_code.py``:
decorators, slices, fused lines, elementwise kernels, the advance functions
and compiled sweeps of each loop); here is what that module runs with:
:func:`njit`, the decorator (``numba.njit(cache=True)`` that falls back to
NumPy), whose ``rt`` helpers compile to their Numba twins
(:mod:`tangent_ckpt.runtime.jit.numba_twins`), and :func:`compile_with_numba`,
which loads the module from a file.  A function Numba cannot compile runs with
NumPy instead, with one :class:`NumbaFallbackWarning` naming it and Numba's
reason.

The module is written to a file under :func:`cache_dir` (named by a hash of its
text and of the values it is compiled against) so that ``cache=True`` works: a
second process loads the machine code instead of compiling.  Compile time is
measured per function and summed in :class:`JitReport`.

Numba is imported on first use only; without it, nothing here is loaded.
"""

import dataclasses
import functools
import hashlib
import importlib
import os
import sys
import time
import types as pytypes
import warnings

import numpy as np

from tangent_ckpt.runtime.jit import numba_passes

__all__ = ["njit", "JitFunction", "JitReport", "NumbaFallbackWarning", "compile_with_numba",
           "cache_dir", "available", "legacy_random_names"]

_STATE = {}


class NumbaFallbackWarning(RuntimeWarning):
    """A generated function that Numba could not compile runs with NumPy."""


def available():
    """True when Numba can be imported."""
    return importlib.util.find_spec("numba") is not None


def _numba():
    """(numba, the twins module, NumbaError), imported once; registers how Numba
    types a :class:`JitFunction` (as the Numba dispatcher inside it)."""
    if not _STATE:
        numba = importlib.import_module("numba")
        # imported here, not at the top: importing the twins imports Numba, which
        # only users of this backend need
        twins = importlib.import_module("tangent_ckpt.runtime.jit.numba_twins")
        errors = importlib.import_module("numba.core.errors")
        extending = importlib.import_module("numba.extending")

        @extending.typeof_impl.register(JitFunction)
        def _typeof_jit(value, context):
            return numba.types.Dispatcher(value.dispatcher)

        _STATE.update(numba=numba, twins=twins, error=errors.NumbaError)
    return _STATE["numba"], _STATE["twins"], _STATE["error"]


def cache_dir():
    """Where compiled modules (and Numba's cache beside them) are kept:
    ``$TANGENT_CKPT_NUMBA_CACHE``, else ``~/.cache/tangent_ckpt/numba``."""
    return os.environ.get("TANGENT_CKPT_NUMBA_CACHE") or \
        os.path.join(os.path.expanduser("~"), ".cache", "tangent_ckpt", "numba")


class JitFunction:
    """A generated function compiled by Numba on its first call, or run with
    NumPy when Numba cannot compile it (one warning, then NumPy for good).

    ``compile_seconds``: time spent in calls that compiled (or loaded from
    Numba's cache) a new signature; ``fallback``: Numba's reason, or None.
    ``advance``: for a loop step, the compiled many-steps function (None after
    a fallback, so that the driver steps in Python).
    """

    def __init__(self, py_func, cache=True, quiet=False):
        numba, _, _ = _numba()
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        try:
            self.dispatcher = numba.njit(cache=cache)(py_func)
        except RuntimeError:  # cache=True needs a source file (not exec'd text)
            self.dispatcher = numba.njit(py_func)
        self.compile_seconds = 0.0
        self.quiet = quiet
        self.fallback = None
        self._advance = None

    @property
    def advance(self):
        return None if self.fallback is not None else self._advance

    @advance.setter
    def advance(self, value):
        self._advance = value

    @property
    def cache_hits(self):
        return sum(self.dispatcher.stats.cache_hits.values())

    def __call__(self, *args):
        if self.fallback is not None:
            return self.py_func(*args)
        dispatcher = self.dispatcher
        known = len(dispatcher.overloads)
        if not known and _random_argument(args):
            self._fall_back("it is given a NumPy random generator, whose draws Numba does not "
                            "reproduce exactly", stacklevel=4)
            return self.py_func(*args)
        start = time.perf_counter()
        try:
            out = dispatcher(*args)
        except _numba()[2] as exc:
            self.compile_seconds += time.perf_counter() - start
            self._fall_back(exc)
            return self.py_func(*args)
        if len(dispatcher.overloads) != known:
            self.compile_seconds += time.perf_counter() - start
        return out

    def _fall_back(self, exc, stacklevel=3):
        reason = exc if isinstance(exc, str) else _first_line(exc)
        self.fallback = reason
        if not self.quiet:
            warnings.warn(f"backend='numba': {self.__name__}() runs with NumPy, Numba cannot "
                          f"compile it: {reason}", NumbaFallbackWarning, stacklevel=stacklevel)

    def __repr__(self):
        state = f"NumPy fallback: {self.fallback}" if self.fallback else "numba.njit"
        return f"<{self.__name__} ({state})>"


def _first_line(exc):
    """The informative line of a Numba error (its first non-blank, non-banner line)."""
    for line in str(exc).splitlines():
        line = line.strip()
        if line and not line.startswith(("-", "No implementation of function", "During:")):
            return line[:300]
    return type(exc).__name__


def njit(cache=True, quiet=False, elementwise=False, passes=None):
    """Decorator of the generated functions: ``numba.njit(cache=cache)`` with the
    NumPy fallback of :class:`JitFunction` (``quiet``: without the warning, for
    the compiled sweeps, whose Python version calls the compiled steps).

    ``elementwise``: ``func`` is an expression of its parameters that compiled
    code calls with arrays; it runs as one loop over the elements, ``func``
    compiled for one element (1-D operands of one length, or of length 1; other
    shapes get Numba's own array expression).  Called from Python, it is
    ``func`` on whole arrays (NumPy).

    ``passes``: ``func`` runs elementwise statements that ``passes`` describes
    (runtime/jit/numba_passes.py); compiled code calls it as the few loops written
    for its argument types, or as ``func`` compiled when they cannot be fused.
    Called from Python, it is ``func`` (NumPy)."""
    if passes is not None:
        return lambda func: _fused(func, passes, cache)
    if elementwise:
        return lambda func: _elementwise(func, cache)
    return lambda func: JitFunction(func, cache=cache, quiet=quiet)


def _elementwise(func, cache):
    _, twins, _ = _numba()
    return _overloaded(func, cache, twins.elementwise_loop)


def _fused(func, description, cache):
    _, twins, _ = _numba()
    return _overloaded(func, cache, lambda kernel, compiled:
                       twins.fused_loops(kernel, description, compiled))


def _overloaded(func, cache, register):
    """A Python function running ``func`` whose compiled calls ``register(kernel,
    func compiled)`` decides (an ``overload``)."""
    numba, _, _ = _numba()
    # NumPy's error model: a float divided by zero is inf (or nan), as on arrays
    try:
        compiled = numba.njit(cache=cache, error_model="numpy")(func)
    except RuntimeError:  # cache=True needs a source file (not exec'd text)
        compiled = numba.njit(error_model="numpy")(func)

    @functools.wraps(func)
    def kernel(*args):
        return func(*args)
    register(kernel, compiled)
    return kernel


@dataclasses.dataclass
class JitReport:
    """What the numba backend did for one compiled gradient."""
    functions: dict  # name -> JitFunction
    path: str        # the module file Numba caches next to

    @property
    def compile_seconds(self):
        """Seconds spent compiling (or loading compiled code from the cache) so far."""
        return sum(f.compile_seconds for f in self.functions.values())

    @property
    def cache_hits(self):
        """Functions (signatures) loaded from Numba's on-disk cache, not compiled."""
        return sum(f.cache_hits for f in self.functions.values())

    @property
    def fallbacks(self):
        """name -> Numba's reason, for the functions that run with NumPy."""
        return {n: f.fallback for n, f in self.functions.items() if f.fallback is not None}

    def __str__(self):
        compiled = [n for n, f in self.functions.items() if f.fallback is None]
        text = f"numba: {len(compiled)} compiled ({', '.join(compiled) or '-'}), " \
               f"compile {self.compile_seconds:.2f} s, cache hits {self.cache_hits}"
        for name, reason in self.fallbacks.items():
            text += f"\n  {name}: NumPy fallback ({reason})"
        return text


# ----------------------------------------------------------------- what stays NumPy


def legacy_random_names(namespace):
    """The names bound to NumPy's global random functions (``np.random.normal``):
    compiled, they would draw from Numba's own generator, which the driver
    cannot keep with the snapshots, so a recomputed step would draw other numbers."""
    legacy = {id(v) for v in vars(np.random).values() if callable(v)}
    return {k for k, v in namespace.items()
            if id(v) in legacy or isinstance(getattr(v, "__self__", None), np.random.RandomState)}


def _random_argument(args):
    """True when a NumPy random generator is among ``args`` (nested in tuples too)."""
    for a in args:
        if isinstance(a, (np.random.Generator, np.random.RandomState, np.random.BitGenerator)):
            return True
        if isinstance(a, (tuple, list)) and _random_argument(a):
            return True
    return False


# ----------------------------------------------------------------- compiling


def _fingerprint(name, obj):
    """What a bound value contributes to the module's cache key (Numba freezes
    global arrays and numbers into the machine code)."""
    if isinstance(obj, np.ndarray):
        return f"{name}:array{obj.shape}{obj.dtype}:{hashlib.sha256(obj.tobytes()).hexdigest()}"
    if isinstance(obj, pytypes.ModuleType):
        return f"{name}:module {obj.__name__}"
    if isinstance(obj, (bool, int, float, complex, str, bytes, type(None), np.generic, tuple)):
        return f"{name}:{obj!r}"
    qual = getattr(obj, "__qualname__", None)
    mod = getattr(obj, "__module__", None)
    if isinstance(qual, str) and "<" not in qual:
        return f"{name}:{mod}.{qual}"
    return f"{name}:{type(obj).__qualname__}@{id(obj)}"


def _twins_digest():
    """A hash of the twins' source (and of the fused loops' writer): Numba's cache knows the generated module's file
    only, and would keep machine code compiled against an older twin."""
    _, twins, _ = _numba()
    digest = hashlib.sha256()
    for module in (twins, numba_passes):
        with open(module.__file__, "rb") as fh:
            digest.update(fh.read())
    return digest.hexdigest()



def _write_once(path, text):
    """Write ``text`` to ``path`` unless it is there already (its modification time
    is part of Numba's cache key: rewriting it would throw the cache away)."""
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def compile_with_numba(compiled):
    """The compiled gradient ``compiled`` (a ``CompiledGradient`` whose source the
    compiler made for Numba: decorated, see ``compiler/backend/numba_code.py``) loaded
    from a module file, so that Numba's cache works: returns (function,
    namespace, report)."""
    numba, _, _ = _numba()
    text = compiled.source
    bindings = {k: v for k, v in compiled.namespace.items()
                if k != "__builtins__" and not _generated(v)}
    key = "\n".join([numba.__version__, np.__version__, _twins_digest(), text] +
                    sorted(_fingerprint(k, v) for k, v in bindings.items()))
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    modname = f"tangent_ckpt_numba_{compiled.name}_{digest}"
    path = os.path.join(cache_dir(), modname + ".py")
    _write_once(path, text)
    # a module in sys.modules: Numba's cache finds the globals of a cached function
    # by its module's name when it loads it in another process
    module = sys.modules.get(modname)
    if module is None:
        module = pytypes.ModuleType(modname)
        module.__file__ = path
        module.__dict__.update(bindings)
        exec(compile(text, path, "exec"), module.__dict__)
        sys.modules[modname] = module
    namespace = module.__dict__
    functions = {k: v for k, v in namespace.items() if isinstance(v, JitFunction)}
    return namespace[compiled.name], namespace, JitReport(functions, path)


def _generated(value):
    """True for a function the generated text defines (made again from the file)."""
    if isinstance(value, JitFunction):
        return True
    code = getattr(getattr(value, "__wrapped__", value), "__code__", None)
    return code is not None and code.co_filename.startswith("<tangent_ckpt")
