"""Forward mode and second order: ``jvp``, ``hvp``, ``hessian``.

``tc.jvp(f, wrt)`` compiles the tangent-linear program of ``f`` (source to
source, like the gradient: ``compiler/transform/forward.py``); it carries the
state and its tangent through the loops and needs no tape.

``tc.hvp(f, wrt)`` differentiates that tangent-linear program again, in
reverse mode, with respect to the primal inputs, the direction ``v`` a
constant: ``d/dx <grad f(x), v> = H v``.  Its loops carry (state, tangent
state) and are checkpointed on the Revolve schedule exactly like a first-order
gradient's (``checkpoint=True``, ``snapshots=``, ``memory_budget=``).
"""

import linecache
import types
import weakref
from typing import (Any, Callable, Concatenate, Generic, Literal, Optional, Sequence, Tuple,
                    Union, Unpack, overload)

import numpy as np

from tangent_ckpt import container_args, display
from tangent_ckpt.api import (_CACHE, _LOCK, GradientFunction, LoopOptions, Wrt, MemoryBudget,
                              _normalize_wrt, Arg, Rest, Result,
                              options_checked, remember, _stale, _Target, _check_wrt_value,
                              _without_views)
from tangent_ckpt.compiler.emit import run_time_errors
from tangent_ckpt.compiler.frontend.parse import forget_source, register_source
from tangent_ckpt.compiler.pipeline import compile_tangent
from tangent_ckpt.errors import TangentCkptError, at_user_line
from tangent_ckpt.options import CheckpointOptions
from tangent_ckpt.runtime import backends
from tangent_ckpt.runtime.random_state import RandomStates


def _compiled_tangent(fn, wrt, return_value, source=None, has_aux=False, complex_params=()):
    key = ("forward", wrt, return_value, source, has_aux, complex_params)
    with _LOCK:
        try:
            per_fn = _CACHE.setdefault(fn, {})
        except TypeError:
            per_fn = {}
        compiled = per_fn.get(key)
        if compiled is not None and _stale(compiled):
            compiled = None
        if compiled is None:
            if source is not None:
                register_source(fn, source)
            try:
                compiled = compile_tangent(fn, wrt, return_value=return_value, has_aux=has_aux,
                                           complex_params=complex_params)
            finally:
                if source is not None:
                    forget_source(fn)
            filename = compiled.function.__code__.co_filename
            weakref.finalize(compiled, linecache.cache.pop, filename, None)
            remember(per_fn, key, compiled)
    return compiled


class TangentFunction:
    """A compiled tangent-linear (forward mode) function: ``jvp(*args, tangents)``
    returns ``(value, directional derivative)``.  ``tangents`` is one array per
    ``wrt`` argument: the array itself for an int ``wrt``, a tuple for a tuple
    (``wrt=(0,)``: a 1-tuple), as JAX's ``argnums``.  A
    function returning a tuple or list of outputs has a directional derivative
    of the same structure; with ``has_aux=True`` it returns ``(output, aux)``
    and ``jvp`` gives ``(value, directional derivative, aux)``.

    Attributes: ``fn``, ``wrt``, ``source`` (the generated code), ``compile()``.
    """

    def __init__(self, fn: Callable[..., Any], wrt: Wrt, source: Optional[str] = None,
                 has_aux: bool = False):
        self.fn = fn
        self.has_aux = bool(has_aux)
        self.wrt, self._positions = _normalize_wrt(wrt)
        self.given_source = source
        self._target = _Target(fn)
        self._inner_wrt = self._target.inner_wrt(self._positions)
        self._libraries = {}  # (compiled, array library) -> the tangent function run there

    def compile(self, return_value: bool = True, complex_params: Tuple[tuple, ...] = ()):
        """Compile now (else on the first call); cached per function and wrt, and the
        places its arguments hold complex values (``complex_parameters``)."""
        __tracebackhide__ = True  # noqa: F841
        try:
            return _compiled_tangent(self._target.function, self._inner_wrt, return_value,
                                     self.given_source, self.has_aux and return_value,
                                     complex_params)
        except TangentCkptError as exc:
            raise at_user_line(exc, getattr(self._target.function, "__name__", "<module>"))

    @property
    def source(self) -> "display.GeneratedSource":
        """The generated tangent-linear source: exactly the text that was compiled."""
        compiled = self.compile()
        return display.GeneratedSource(compiled.source,
                                       f"tangent of {self._target.label} in the direction of "
                                       f"{', '.join(compiled.wrt_names)}")

    def complex_parameters(self, args, kwargs):
        """Where the call ``(*args, tangents, **kwargs)`` gives complex values, as paths
        into the parameters (``container_args.complex_paths``): the tangent function
        is compiled for them (compiler/analyze/complex_values.py)."""
        args = args[:-1]
        given = (*self._target.args, *args, *self._target.kwargs.values(), *kwargs.values())
        if not container_args.complex_paths(given):
            return ()
        try:
            arguments = self._target.bind(args, kwargs)
        except TypeError:
            return ()  # the call itself will say what is wrong
        return container_args.complex_paths([arguments.get(p)
                                             for p in self._target.parameters()])

    def _values(self, args, kwargs, compiled):
        if not args:
            raise TypeError(f"{self._target.label}: pass the tangents after the arguments")
        args, tangents = args[:-1], args[-1]
        arguments = self._target.bind(args, kwargs)
        count = len(self._positions)
        values = [arguments[p] for p in compiled.params[:len(compiled.params) - count]]
        if isinstance(self.wrt, int):
            tangents = (tangents,)
        elif not isinstance(tangents, (tuple, list)):
            raise TypeError(f"{self._target.label}: wrt={self.wrt} is a tuple, so the "
                            f"tangents are a tuple of {count} (one per wrt argument), not a "
                            f"{type(tangents).__name__}")
        tangents = tuple(tangents)
        if len(tangents) != count:
            raise TypeError(f"{self._target.label}: {count} tangents expected "
                            f"(one per wrt argument), got {len(tangents)}")
        for user_k, k, t in zip(self._positions, self._inner_wrt, tangents):
            _check_wrt_value(self._target.label, compiled.params[k], user_k, values[k])
            if np.shape(t) != np.shape(values[k]):
                raise TypeError(f"{self._target.label}: the tangent of "
                                f"'{compiled.params[k]}' has shape {np.shape(t)}, the argument "
                                f"{np.shape(values[k])}")
        return values, list(tangents)

    def __call__(self, *args: Any, **kwargs: Any) -> Tuple[Any, ...]:
        __tracebackhide__ = True  # noqa: F841
        compiled = self.compile(complex_params=self.complex_parameters(args, kwargs))
        values, tangents = self._values(args, kwargs, compiled)
        library = backends.array_library(values + tangents)
        function = compiled.function if library is None else self._on(library, compiled)
        try:
            return function(*values, *tangents)
        except Exception as exc:
            placed = run_time_errors.placed_at_user_line(exc)
            if placed is not exc:  # a run-time refusal: named at the user's line
                raise placed from None
            raise  # with a note naming the user's line

    def _on(self, library, compiled):
        """The tangent function run on another array library (runtime/backends.py),
        made once per compiled function and library."""
        key = (id(compiled), library)
        ran = self._libraries.get(key)
        if ran is None:
            if compiled.shared_writes and not library.has_views:
                raise at_user_line(_without_views(compiled.shared_writes[0], library),
                                   getattr(self._target.function, "__name__", "<module>"))
            ran = self._libraries[key] = backends.run_on(
                library, compiled.source, compiled.namespace, compiled.name,
                compiled.function.__code__.co_filename)[0]
        return ran

    def __repr__(self):
        return f"<jvp of {getattr(self.fn, '__qualname__', self._target.label)} wrt {self.wrt}>"

    def __reduce__(self):
        """Pickled as the function and ``wrt`` (GradientFunction.__reduce__)."""
        return (TangentFunction, (self.fn, self.wrt, self.given_source, self.has_aux))


class HessianVectorProduct(Generic[Result]):
    """``hvp(*args, v)`` -> ``H v``: the Hessian of ``fn`` (scalar output) with
    respect to the ``wrt`` arguments, applied to ``v`` (one array per ``wrt``
    argument: the array for an int ``wrt``, a tuple for a tuple).  Built by
    differentiating the tangent-linear program in reverse mode; ``source``
    shows both programs.
    """

    def __init__(self, fn, wrt, options, source=None):
        self.fn = fn
        self.options = options
        self.tangent = TangentFunction(fn, wrt, source=source)
        self.wrt = self.tangent.wrt
        self._gradient = None

    def gradient(self) -> GradientFunction:
        """The reverse-mode gradient of the tangent-linear function (compiled once)."""
        compiled = self.tangent.compile(return_value=False)
        if self._gradient is None or self._gradient.fn is not compiled.function:
            self._gradient = GradientFunction(compiled.function, self.tangent._inner_wrt,
                                              self.options)
        return self._gradient

    @property
    def source(self) -> str:
        """The tangent-linear function, then its gradient (the Hessian-vector product)."""
        return self.tangent.compile(return_value=False).source + "\n\n" + \
            self.gradient().source

    def __call__(self, *args: Any, **kwargs: Any) -> Result:
        compiled = self.tangent.compile(return_value=False,
                                        complex_params=self.tangent.complex_parameters(args,
                                                                                       kwargs))
        values, tangents = self.tangent._values(args, kwargs, compiled)
        products = self.gradient()(*values, *tangents)  # a tuple, in wrt order
        return products[0] if isinstance(self.wrt, int) else products

    def __repr__(self):
        return f"<hvp of {getattr(self.fn, '__qualname__', self.fn)} wrt {self.wrt}>"

    def __reduce__(self):
        """Pickled as the function, ``wrt`` and the options (GradientFunction.__reduce__)."""
        return (HessianVectorProduct, (self.fn, self.wrt, self.options,
                                       self.tangent.given_source))


@options_checked
def jvp(fn: Callable[..., Any], wrt: Wrt = 0, *, source: Optional[str] = None,
        has_aux: bool = False) -> TangentFunction:
    """Forward mode: ``jvp(fn, wrt)(*args, tangents)`` returns ``(fn(*args), J
    tangents)``, the value and its directional derivative in the direction
    ``tangents`` of the ``wrt`` arguments (one array per argument: the array for
    an int ``wrt``, a tuple for a tuple).  The tangent-linear code is generated
    from ``fn``'s source (``.source``); it needs no tape, so its memory does not
    grow with the trip count of ``fn``'s loops.

    ``fn`` may return a tuple or list of outputs (arrays and floats): the
    directional derivative has the same structure.  With ``has_aux=True`` ``fn``
    returns ``(output, aux)`` and the result is ``(value, derivative, aux)``,
    ``aux`` as computed."""
    return TangentFunction(fn, wrt, source=source, has_aux=has_aux)


class HvpOptions(LoopOptions, total=False):
    """The keyword options of :func:`hvp`."""
    checkpoint: Union[bool, str, None]


# H v has the type of its argument (tangent_ckpt/api.py: the overloads of grad)
@overload
def hvp(fn: Callable[Concatenate[Arg, Rest], Any], wrt: Literal[0] = ...,
        **options: Unpack[HvpOptions]) -> HessianVectorProduct[Arg]: ...


@overload
def hvp(fn: Callable[..., Any], wrt: int, **options: Unpack[HvpOptions]
        ) -> HessianVectorProduct[Any]: ...


@overload
def hvp(fn: Callable[..., Any], wrt: Sequence[int], **options: Unpack[HvpOptions]
        ) -> HessianVectorProduct[Tuple[Any, ...]]: ...


@options_checked
def hvp(fn: Callable[..., Any], wrt: Wrt = 0, *,
        checkpoint: Union[bool, str, None] = None, snapshots: Optional[int] = None,
        memory_budget: MemoryBudget = None, schedule: str = "revolve", min_steps: int = 0,
        disk_snapshots: int = 0, verify: bool = False, nested: bool = False,
        costs: Any = None, snapshot_store: Any = None,
        source: Optional[str] = None) -> HessianVectorProduct[Any]:
    """Hessian-vector product: ``hvp(fn, wrt)(*args, v)`` returns ``H v`` for a
    scalar ``fn``: ``v`` and ``H v`` are the array for an int ``wrt`` and a tuple
    of one array per argument for a tuple (``wrt=(0,)``: 1-tuples).

    Reverse over forward: the tangent-linear program of ``fn`` (:func:`jvp`) is
    differentiated in reverse mode with respect to the ``wrt`` arguments, ``v``
    a constant.  The options are :func:`~tangent_ckpt.grad`'s: with
    ``checkpoint=True`` the loops of the tangent-linear program, whose state is
    (state, tangent state), are checkpointed on the Revolve schedule like a
    first-order gradient's.  The result plugs into
    ``scipy.optimize.minimize(..., hessp=...)`` (wrap it to take flat vectors).
    """
    options = CheckpointOptions(checkpoint=checkpoint, snapshots=snapshots,
                                memory_budget=memory_budget, schedule=schedule,
                                min_steps=min_steps, disk_snapshots=disk_snapshots,
                                verify=verify, nested=nested, costs=costs,
                                snapshot_store=snapshot_store)
    return HessianVectorProduct(fn, wrt, options, source=source)


def _random_states(args, kwargs, namespace):
    """The generators a call of the compiled code may draw from: NumPy's legacy
    global state and the standard library's, and every generator among the
    arguments, the objects the code was compiled against (a module-level or
    closure generator) and their attributes (``self.rng``)."""
    values = list(args) + list(kwargs.values()) + list(namespace.values())
    held = [v for value in values if not isinstance(value, (type, types.ModuleType))
            for v in getattr(value, "__dict__", {}).values()]  # (not a module's names)
    return RandomStates((), True, values + held)


def hessian(fn: Callable[..., Any], wrt: Wrt = 0, **options: Any) -> Callable[..., Any]:
    """The dense Hessian of a scalar ``fn``, one :func:`hvp` per input element
    (for small inputs).  For an int ``wrt`` naming ``x`` the result has shape
    ``x.shape + x.shape``; for a tuple, ``H[i][j]`` is the block of arguments
    ``i`` and ``j``, shaped ``x_i.shape + x_j.shape``.  ``options`` are
    :func:`hvp`'s."""
    product = hvp(fn, wrt, **options)
    single = isinstance(product.wrt, int)

    def dense(*args, **kwargs):
        compiled = product.tangent.compile(return_value=False)
        arguments = product.tangent._target.bind(args, kwargs)
        inputs = [np.asarray(arguments[compiled.params[k]], dtype=float)
                  for k in product.tangent._inner_wrt]
        sizes = [x.size for x in inputs]
        # every column draws the numbers one call of fn draws: the generators fn
        # may reach are put back before each (and left as one call leaves them)
        random = _random_states(args, kwargs, compiled.namespace)
        before = random.capture()
        columns = []
        for j, x in enumerate(inputs):
            for k in range(x.size):
                random.restore(before)
                v = [np.zeros_like(y) for y in inputs]
                v[j].flat[k] = 1.0
                hv = product(*args, v[0] if single else tuple(v), **kwargs)
                hv = (hv,) if single else hv
                columns.append(np.concatenate([np.ravel(h) for h in hv]))
        full = np.stack(columns, axis=1)  # rows: outputs, columns: directions
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        blocks = [[full[offsets[i]:offsets[i + 1], offsets[j]:offsets[j + 1]]
                   .reshape(inputs[i].shape + inputs[j].shape)
                   for j in range(len(inputs))] for i in range(len(inputs))]
        return blocks[0][0] if single else tuple(tuple(row) for row in blocks)
    dense.hvp = product
    return dense
