"""Public entry points: ``grad``, ``value_and_grad``, ``grad_with_checkpointing``, ``source``."""

import functools
import inspect
import linecache
import threading
import weakref

import numpy as np

from tangent_ckpt.errors import CheckpointError, WrtError
from tangent_ckpt.runtime.store_io import SnapshotStore

# fn -> {(wrt, options, return_value): CompiledGradient}.  Weak in fn: a function
# that is garbage (a closure made in a loop, a fuzzed module) takes its compiled
# gradients -- and their linecache entries -- with it.
_CACHE = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()

_SCHEDULES = ("revolve", "uniform", "online")


class CheckpointOptions:
    """Normalized checkpointing options (hashable, part of the compile cache key)."""

    def __init__(self, checkpoint=False, snapshots=None, memory_budget=None,
                 schedule="revolve", min_steps=0, disk_snapshots=0, verify=False,
                 nested=False, snapshot_store=None):
        if checkpoint not in (True, False, "auto"):
            raise CheckpointError(f"checkpoint must be True, False or 'auto', not {checkpoint!r}")
        if snapshots is not None:
            if isinstance(snapshots, bool) or not isinstance(snapshots, (int, np.integer)):
                raise CheckpointError(f"snapshots must be a positive integer, not {snapshots!r}")
            if snapshots < 1:
                raise CheckpointError(f"snapshots must be at least 1, got {snapshots}")
        if memory_budget is not None and snapshots is not None:
            raise CheckpointError("give either snapshots= or memory_budget=, not both")
        if memory_budget is not None:
            from tangent_ckpt.runtime.driver import parse_memory
            memory_budget = parse_memory(memory_budget)
        if schedule not in _SCHEDULES:
            raise CheckpointError(f"schedule must be one of {', '.join(_SCHEDULES)}, "
                                  f"not {schedule!r}")
        if min_steps is None or min_steps < 0:
            raise CheckpointError(f"min_steps must be >= 0, got {min_steps!r}")
        if disk_snapshots < 0:
            raise CheckpointError(f"disk_snapshots must be >= 0, got {disk_snapshots}")
        self.checkpoint = checkpoint
        self.snapshots = None if snapshots is None else int(snapshots)
        self.memory_budget = memory_budget
        self.schedule = schedule
        self.min_steps = int(min_steps)
        self.disk_snapshots = int(disk_snapshots)
        self.verify = bool(verify)
        self.nested = bool(nested)
        # where disk snapshots go: None (a private temporary folder), a folder, a URL
        # (zarr, the [store] extra) or an rt.SnapshotStore
        self.snapshot_store = None if snapshot_store is None else SnapshotStore.of(snapshot_store)

    def key(self):
        return (self.checkpoint, self.snapshots, self.memory_budget, self.schedule,
                self.min_steps, self.disk_snapshots, self.verify, self.nested, self.snapshot_store)


def _normalize_wrt(wrt):
    if isinstance(wrt, (int, np.integer)) and not isinstance(wrt, bool):
        return (int(wrt),), True
    try:
        wrt = tuple(int(k) for k in wrt)
    except (TypeError, ValueError):
        raise WrtError(f"wrt must be an int or a tuple of ints, not {wrt!r}") from None
    if not wrt:
        raise WrtError("wrt must name at least one argument")
    if len(set(wrt)) != len(wrt):
        raise WrtError(f"wrt names an argument twice: {wrt}")
    return wrt, len(wrt) == 1


def _compiled(fn, wrt, options, return_value):
    from tangent_ckpt.compiler.pipeline import compile_gradient
    key = (wrt, options.key(), return_value)
    with _LOCK:
        try:
            per_fn = _CACHE.setdefault(fn, {})
        except TypeError:  # not weak-referenceable (a callable object): compile each time
            per_fn = {}
        compiled = per_fn.get(key)
        if compiled is None:
            compiled = compile_gradient(fn, wrt, options, return_value=return_value)
            filename = getattr(getattr(compiled.function, "__code__", None), "co_filename", None)
            if filename is not None and filename.startswith("<tangent_ckpt"):
                weakref.finalize(compiled, linecache.cache.pop, filename, None)
            per_fn[key] = compiled
    return compiled


def _release_loops(tb):
    """After an exception (KeyboardInterrupt included) escaped a generated gradient:
    close every checkpointed loop its frames still hold, so RAM snapshots and disk
    snapshot folders are freed now, not when the traceback is garbage collected
    (an exception between a loop's forward() and reverse() left them alive)."""
    from tangent_ckpt.runtime.driver import CheckpointedLoop
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.startswith("<tangent_ckpt"):
            for value in list(frame.f_locals.values()):
                if isinstance(value, CheckpointedLoop):
                    value.close()
        tb = tb.tb_next


class GradientFunction:
    """A compiled gradient: call it like the original function.

    An extra trailing positional argument (or the keyword named in
    ``seed_name``) is the adjoint of the output; it defaults to 1.0, which for a
    non-scalar output gives the gradient of its sum.
    """

    def __init__(self, fn, wrt, options, return_value=False):
        self.fn = fn
        self.wrt, self._single = _normalize_wrt(wrt)
        self.options = options
        self.return_value = return_value
        self.signature = inspect.signature(fn)
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self._compiled = None

    def compile(self):
        if self._compiled is None:
            self._compiled = _compiled(self.fn, self.wrt, self.options, self.return_value)
        return self._compiled

    @property
    def source(self):
        """The generated gradient's source: exactly the text that was compiled."""
        return self.compile().source

    def __call__(self, *args, **kwargs):
        compiled = self.compile()
        seed = kwargs.pop(compiled.seed_name, None)
        nparams = len(compiled.params)
        if len(args) == nparams + 1 and seed is None:
            args, seed = args[:-1], args[-1]
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.fn.__name__}(): {exc}") from None
        bound.apply_defaults()
        values = [bound.arguments[p] for p in compiled.params]
        for k in self.wrt:
            _check_wrt_value(self.fn, compiled.params[k], k, values[k])
        if seed is None:
            seed = 1.0
        try:
            result = compiled.function(*values, seed)
        except BaseException as exc:
            _release_loops(exc.__traceback__)
            raise
        if self.return_value:
            value, grads = result
            return value, self._shaped(grads, values)
        return self._shaped(result, values)

    def _shaped(self, grads, values):
        """Every array argument's gradient is an array of its shape.  The symbolic
        zero of the generated code is a Python 0.0, and so is a real zero computed
        from Python floats (``(s - s) * a[0]``): such a value flowing back to an
        array argument is widened here (found by tests/test_fuzz.py)."""
        from tangent_ckpt.runtime import as_gradient
        if self._single:
            return _shaped_one(grads, values[self.wrt[0]], as_gradient)
        return tuple(_shaped_one(g, values[k], as_gradient) for g, k in zip(grads, self.wrt))

    def __repr__(self):
        return f"<gradient of {self.fn.__qualname__} wrt {self.wrt}>"


def _shaped_one(g, x, as_gradient):
    if isinstance(x, np.ndarray) and not (isinstance(g, np.ndarray) and g.shape == x.shape):
        return as_gradient(g, x)
    return g


def _check_wrt_value(fn, name, position, value):
    where = f"{fn.__name__}() argument '{name}' (position {position})"
    if isinstance(value, bool):
        raise WrtError(f"{where} is a bool; gradients need float inputs")
    if isinstance(value, (int, np.integer)):
        raise WrtError(f"{where} is an integer ({value!r}); gradients are defined for float "
                       f"inputs: pass {float(value)!r} or drop it from wrt")
    if isinstance(value, (float, np.floating)):
        return
    if isinstance(value, np.ndarray):
        if np.issubdtype(value.dtype, np.floating):
            return
        raise WrtError(f"{where} is an array of dtype {value.dtype}; gradients need a float "
                       "array: pass x.astype(float) or drop it from wrt")
    if isinstance(value, (complex, np.complexfloating)):
        raise WrtError(f"{where} is complex; only real float inputs are supported")
    raise WrtError(f"{where} is a {type(value).__name__}; gradients need a float array or "
                   "a float (convert lists with np.asarray(x, dtype=float))")


def _options(checkpoint, **kwargs):
    return CheckpointOptions(checkpoint=checkpoint, **kwargs)


def grad(fn, wrt=(0,), *, checkpoint=False, snapshots=None, memory_budget=None,
         schedule="revolve", min_steps=0, disk_snapshots=0, verify=False, nested=False,
         snapshot_store=None):
    """The gradient of ``fn`` with respect to the arguments at positions ``wrt``.

    Returns a function with ``fn``'s signature (plus an optional trailing output
    adjoint) that returns the gradient for one ``wrt`` index, or a tuple of
    gradients in ``wrt`` order for several.  ``df.source`` is the generated code.

    ``checkpoint=True`` checkpoints every loop on the given ``schedule`` instead
    of taping it; see :func:`grad_with_checkpointing` for the options.
    """
    options = _options(checkpoint, snapshots=snapshots, memory_budget=memory_budget,
                       schedule=schedule, min_steps=min_steps, disk_snapshots=disk_snapshots,
                       verify=verify, nested=nested, snapshot_store=snapshot_store)
    return GradientFunction(fn, wrt, options)


def value_and_grad(fn, wrt=(0,), **options):
    """Like :func:`grad`, but the gradient function returns ``(value, gradient)``."""
    checkpoint = options.pop("checkpoint", False)
    return GradientFunction(fn, wrt, _options(checkpoint, **options), return_value=True)


def grad_with_checkpointing(fn=None, *, wrt=(0,), snapshots=None, memory_budget=None,
                            schedule="revolve", min_steps=0, disk_snapshots=0, verify=False,
                            nested=False, snapshot_store=None):
    """The gradient of ``fn`` with its loops checkpointed (Revolve by default).

    Use bare (``@grad_with_checkpointing``), with options
    (``@grad_with_checkpointing(wrt=(1, 2), snapshots=10)``) or as a call.

    - ``snapshots``: how many loop states to keep; default chosen at run time
      from the trip count (the smallest s whose Revolve schedule replays each
      step at most three times).
    - ``memory_budget``: bytes or a string like ``"64MB"``; the snapshot count is
      picked at run time from the measured size of the loop state.  A budget
      below one state is a :class:`CheckpointError`.
    - ``schedule``: ``"revolve"`` (optimal, the trip count known at loop entry),
      ``"uniform"`` (sqrt(n) segments), ``"online"`` (unknown trip count;
      ``while`` loops and loops with ``break`` always use it).
    - ``min_steps``: loops shorter than this keep every state (no replays).
    - ``disk_snapshots``: extra snapshot slots on disk (the outermost snapshots).
    - ``snapshot_store``: where disk snapshots go: None (a private temporary
      folder), a local folder, a URL fsspec opens (zarr arrays; the ``[store]``
      extra) or ``tangent_ckpt.SnapshotStore(url, codec="zstd")``; see
      docs/storage.md.
    """
    def wrap(f):
        return grad(f, wrt=wrt, checkpoint=True, snapshots=snapshots,
                    memory_budget=memory_budget, schedule=schedule, min_steps=min_steps,
                    disk_snapshots=disk_snapshots, verify=verify, nested=nested,
                    snapshot_store=snapshot_store)
    if fn is None:
        return wrap
    return wrap(fn)


def source(df):
    """The generated source of a gradient function returned by ``grad``."""
    if isinstance(df, GradientFunction):
        return df.source
    raise TypeError(f"source() takes a function returned by tangent_ckpt.grad, not {df!r}")
