"""Public entry points: ``grad``, ``value_and_grad``, ``grad_with_checkpointing``, ``source``.

``tc.grad`` takes any callable whose source can be read: a def, a lambda
(anywhere, told apart by its code object), a bound method (the gradient is with
respect to its explicit arguments; the instance is a constant), a
``functools.partial`` (its bound arguments are constants) and a callable object
(its ``__call__``).
"""

import dataclasses
import difflib
import functools
import inspect
import linecache
import os
import sys
import textwrap
import threading
import types
import weakref
from typing import (Any, Callable, Concatenate, Generic, Literal, NamedTuple, Optional, ParamSpec,
                    Protocol, Sequence, Tuple, TypedDict, TypeVar, Union, Unpack, cast,
                    overload)

import numpy as np
from numpy.typing import NDArray

from tangent_ckpt import container_args, display
from tangent_ckpt.compiler.frontend.parse import forget_source, register_source
from tangent_ckpt.compiler.pipeline import compile_gradient
from tangent_ckpt.compiler.emit import run_time_errors
from tangent_ckpt.compiler.fence.number_arguments import argument_kind
from tangent_ckpt.errors import (OptionError, OutputAdjointError, TangentCkptError, WrtError,
                                 at_user_line, place)
from tangent_ckpt.flatten import ravel
from tangent_ckpt.options import CheckpointOptions
from tangent_ckpt.runtime import as_gradient
from tangent_ckpt.runtime import backends
from tangent_ckpt.runtime.backends import is_array, is_foreign_array
from tangent_ckpt.runtime.loops.progress import reporting
from tangent_ckpt.runtime.loops.driver import CheckpointedLoop
from tangent_ckpt.runtime.jit import numba_backend

# fn -> {(wrt, options, return_value, source): CompiledGradient}.  Weak in fn: a
# function that is garbage (a closure made in a loop, a fuzzed module) takes its
# compiled gradients -- and their linecache entries -- with it.
_CACHE = weakref.WeakKeyDictionary()
_LOCK = threading.RLock()

Wrt = Union[int, Sequence[int]]
MemoryBudget = Union[None, int, str]

# What the type hints say of a gradient (the overloads of grad, value_and_grad and
# grad_with_checkpointing): a gradient has its argument's type -- an int ``wrt``
# of 0 or 1 gives the annotated type of that parameter (``NDArray[np.float64]``
# for ``x: NDArray[np.float64]``, ``float`` for ``s: float``: its np.float64 is
# one), another int ``Any``; a tuple ``wrt`` a tuple of as many; ``flat=True`` one
# float64 vector; ``value_and_grad`` a pair (the function's return type, that).
#: what a call of a GradientFunction returns
Result = TypeVar("Result", covariant=True)
Arg = TypeVar("Arg")          # the type of the differentiated parameter
Out = TypeVar("Out")          # the function's return type
Rest = ParamSpec("Rest")      # the other parameters
Flat = NDArray[np.float64]
Grads = TypeVar("Grads")   # the gradients a decorator's result returns


class LoopOptions(TypedDict, total=False):
    """The options of checkpointed loops that every differentiating entry point
    takes (``tc.hvp`` too)."""
    snapshots: Optional[int]
    memory_budget: MemoryBudget
    schedule: str
    min_steps: int
    disk_snapshots: int
    verify: bool
    nested: bool
    costs: Any
    snapshot_store: Any
    source: Optional[str]


class CheckpointingOptions(LoopOptions, total=False):
    """The keyword options of :func:`grad_with_checkpointing` but ``wrt``, ``flat``
    and ``has_aux`` (which change what the gradient returns)."""
    progress: bool
    backend: str


class GradOptions(CheckpointingOptions, total=False):
    """The keyword options of :func:`grad` and :func:`value_and_grad` but ``wrt``,
    ``flat`` and ``has_aux``."""
    checkpoint: Union[bool, str, None]


def _normalize_wrt(wrt):
    """(``wrt`` as the user means it -- an int, or a tuple of ints --, the positions
    as a tuple).  JAX's ``argnums`` convention: an int gives the gradient itself,
    a tuple (or list) of ints a tuple of gradients, ``(0,)`` a 1-tuple."""
    if isinstance(wrt, (int, np.integer)) and not isinstance(wrt, bool):
        return int(wrt), (int(wrt),)
    if isinstance(wrt, (str, bytes)):
        raise WrtError(f"wrt must be an int or a tuple of ints, not {wrt!r}")
    try:
        wrt = tuple(int(k) for k in wrt)
    except (TypeError, ValueError):
        raise WrtError(f"wrt must be an int or a tuple of ints, not {wrt!r}") from None
    if not wrt:
        raise WrtError("wrt must name at least one argument")
    if len(set(wrt)) != len(wrt):
        raise WrtError(f"wrt names an argument twice: {wrt}")
    return wrt, wrt


def _compiled(fn, wrt, options, return_value, source=None, containers=None, shapes=None,
              library=None, has_aux=False, complex_params=(), numbers=(), constants=(),
              outside=()):
    """The gradient of ``fn``, compiled once per key; ``library``: the array
    library of the arguments when it is not NumPy ("cupy", "dask"): the same code
    runs with NumPy's functions dispatched there (runtime/backends.py);
    ``complex_params``: the parameters given complex values (``_complex_parameters``);
    ``numbers``: those given numbers (``GradientFunction._number_arguments``);
    ``constants``: the strings read as constants (``_constant_arguments``);
    ``outside``: the positions of ``containers`` that are objects (or lists of
    them) passed outside ``wrt`` (``container_args.outside_objects``)."""
    containers = containers or {}
    key = (wrt, options.key(), return_value, source, tuple(sorted(containers.items())), shapes,
           library, has_aux, complex_params) + ((numbers,) if numbers else ()) + \
        ((("constants",) + constants,) if constants else ()) + \
        ((("outside",) + outside,) if outside else ())
    with _LOCK:
        try:
            per_fn = _CACHE.setdefault(fn, {})
        except TypeError:  # not weak-referenceable: compile each time
            per_fn = {}
        compiled = per_fn.get(key)
        if compiled is not None and _stale(compiled, options):
            compiled = None  # a global, helper or closure variable now denotes another object
        if compiled is None:
            if source is not None:
                register_source(fn, source)
            try:
                compiled = compile_gradient(fn, wrt, options, return_value=return_value,
                                            containers=containers,
                                            shapes=dict(shapes.shapes) if shapes and
                                            shapes.shapes else None,
                                            has_aux=has_aux,
                                            inexact=shapes.inexact if shapes else (),
                                            complex_params=complex_params,
                                            numbers=numbers, constants=constants,
                                            outside=outside)
            finally:
                if source is not None:
                    forget_source(fn)
            if library is not None:
                if compiled.shared_writes and not library.has_views:
                    raise _without_views(compiled.shared_writes[0], library)
                if options.backend == "numba":
                    raise OptionError(f"backend='numba' runs on NumPy arrays, not {library} "
                                      "arrays: leave backend= out for them")
                function, namespace = backends.run_on(
                    library, compiled.source, compiled.namespace, compiled.name,
                    compiled.function.__code__.co_filename)
                compiled = dataclasses.replace(compiled, function=function, namespace=namespace)
            if options.backend == "numba":
                function, namespace, report = numba_backend.compile_with_numba(compiled)
                function.jit_report = report
                compiled = dataclasses.replace(compiled, function=function, namespace=namespace)
                run_time_errors.register(compiled)
            filename = getattr(getattr(compiled.function, "__code__", None), "co_filename", None)
            if filename is not None and filename.startswith("<tangent_ckpt"):
                weakref.finalize(compiled, linecache.cache.pop, filename, None)
            remember(per_fn, key, compiled)
    return compiled


#: compiled gradients kept per function (options, wrt and shapes each make one):
#: the oldest is forgotten beyond this (a gradient object keeps its own last one)
PER_FUNCTION = 32


def remember(per_fn, key, compiled):
    """``per_fn[key] = compiled``, forgetting the oldest entries beyond
    :data:`PER_FUNCTION` (a loop making gradients with new options or shapes
    grew the cache without bound)."""
    per_fn.pop(key, None)
    per_fn[key] = compiled
    while len(per_fn) > PER_FUNCTION:
        del per_fn[next(iter(per_fn))]


def _stale(compiled, options=None):
    """Whether a global, helper or closure variable ``compiled`` was compiled
    against now denotes another object.  A module-level float the code reads at
    call time is copied into its namespace instead -- not with Numba, which
    compiles such globals in as constants."""
    numba = options is not None and options.backend == "numba"
    return bool(compiled.dependencies.changed(None if numba else compiled.namespace))


def clear_cache() -> None:
    """Forget every compiled gradient, so the next call compiles afresh.

    Rarely needed: before each call a gradient checks that the globals, helper
    functions and closure variables it was compiled against still denote the
    same objects, and compiles again when one changed.  Clearing the cache also
    frees the generated code of functions that are still alive.
    """
    with _LOCK:
        _CACHE.clear()


def _release_loops(tb):
    """After an exception (KeyboardInterrupt included) escaped a generated gradient:
    close every checkpointed loop its frames still hold, so RAM snapshots and disk
    snapshot folders are freed now, not when the traceback is garbage collected
    (an exception between a loop's forward() and reverse() left them alive)."""
    while tb is not None:
        frame = tb.tb_frame
        filename = frame.f_code.co_filename
        if filename.startswith("<tangent_ckpt") or \
                os.path.basename(filename).startswith("tangent_ckpt_numba_"):
            for value in list(frame.f_locals.values()):
                if isinstance(value, CheckpointedLoop):
                    value.close()
        tb = tb.tb_next


class _Target:
    """What a callable given to ``tc.grad`` differentiates: a plain function, the
    arguments bound before the user's (a method's instance, a partial's
    arguments) and keywords bound by a partial.  ``names`` are the parameters the
    user passes, in the order ``wrt`` counts them."""

    def __init__(self, fn):
        self.callable = fn
        self.function, self.args, self.kwargs = _unwrap(fn)
        self.label = _label(fn, self.function)
        try:
            self.signature = inspect.signature(fn)
        except (TypeError, ValueError):  # a builtin: the frontend says what to do
            self.signature = inspect.Signature()
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        self.names = [p.name for p in self.signature.parameters.values()
                      if p.kind not in variadic]
        # a call with one positional argument more than these passes the output adjoint
        self.positional = sum(p.kind in positional for p in self.signature.parameters.values())
        self._parameters = None  # the function's own parameters (parameters())

    def inner_wrt(self, wrt):
        """``wrt`` (positions among the user's arguments) as positions of the function."""
        if not isinstance(self.function, types.FunctionType):
            return wrt
        params = list(inspect.signature(self.function).parameters)
        inner = []
        for k in wrt:
            if not -len(self.names) <= k < len(self.names):
                raise WrtError(f"wrt index {k} is out of range: {self.label}() has "
                               f"{len(self.names)} parameters")
            name = self.names[k]
            if name in self.kwargs:
                raise WrtError(f"wrt names '{name}' of {self.label}(), which "
                               "functools.partial bound: bound arguments are constants")
            inner.append(params.index(name))
        return tuple(inner)

    def parameters(self):
        """The function's own parameters (its variadic ones left out), in order."""
        if self._parameters is None:
            variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            self._parameters = [name for name, p in
                                inspect.signature(self.function).parameters.items()
                                if p.kind not in variadic]
        return self._parameters

    def bind(self, args, kwargs):
        """The function's arguments by name for a user call ``(*args, **kwargs)``."""
        try:
            self.signature.bind(*args, **kwargs)
            bound = inspect.signature(self.function).bind(*self.args, *args,
                                                          **{**self.kwargs, **kwargs})
        except TypeError as exc:
            raise TypeError(f"{self.label}(): {exc}") from None
        bound.apply_defaults()
        return bound.arguments


def _label(fn, function):
    """How messages name the callable: ``loss``, ``Model.loss``, ``partial(loss)``."""
    name = getattr(function, "__name__", None) or repr(function)
    if isinstance(fn, types.MethodType):
        return f"{type(fn.__self__).__name__}.{name}"
    if isinstance(fn, functools.partial):
        return f"partial({name})"
    if not isinstance(fn, types.FunctionType) and function is not fn:
        return f"{type(fn).__name__} object"
    return name


def _unwrap(fn):
    """(plain function, leading bound arguments, bound keywords) behind ``fn``."""
    if isinstance(fn, types.MethodType):
        function, args, kwargs = _unwrap(fn.__func__)
        return function, args + (fn.__self__,), kwargs
    if isinstance(fn, functools.partial):
        function, args, kwargs = _unwrap(fn.func)
        return function, args + tuple(fn.args), {**kwargs, **fn.keywords}
    if isinstance(fn, GradientFunction):
        raise TangentCkptError(f"{fn!r} is already a gradient: second derivatives are not "
                               "supported (differentiate the original function, .fn)")
    if not isinstance(fn, (types.FunctionType, types.BuiltinFunctionType, type)) and \
            isinstance(getattr(type(fn), "__call__", None), types.FunctionType) and \
            type(fn).__module__.split(".")[0] not in _LIBRARIES:
        return _unwrap(fn.__call__)  # a callable object: its bound __call__
    return fn, (), {}


# callable objects of these libraries (np.vectorize, ...) are black boxes, not user code:
# the frontend asks for an adjoint rule
_LIBRARIES = ("numpy", "scipy", "tangent_ckpt")


class GradientFunction(Generic[Result]):
    """A compiled gradient: call it like the original function.

    An extra trailing positional argument (or the keyword named in
    ``seed_name``) is the adjoint of the output; it defaults to 1.0, which for a
    non-scalar output gives the gradient of its sum.  An array adjoint must have
    the output's shape (:class:`~tangent_ckpt.errors.OutputAdjointError`).
    The output is one float or array: a function returning a tuple or list is
    refused, unless ``has_aux=True`` and it returns ``(output, aux)``; then the
    gradient function returns ``(gradient, aux)`` (``value_and_grad``:
    ``((value, aux), gradient)``), ``aux`` as computed, not differentiated.

    Attributes: ``fn`` (what was given to ``grad``), ``wrt``, ``options``,
    ``source`` (the generated code), ``compile()``.  In Jupyter the object and
    its ``source`` display as highlighted code under a one-line summary.
    """

    def __init__(self, fn: Callable[..., Any], wrt: Wrt, options: CheckpointOptions,
                 return_value: bool = False, flat: bool = False,
                 source: Optional[str] = None, progress: bool = False,
                 has_aux: bool = False):
        self.fn = fn
        self.has_aux = bool(has_aux)
        self.progress = bool(progress)
        self.wrt, self._positions = _normalize_wrt(wrt)
        self.options = options
        self.return_value = return_value
        self.flat = flat
        self.given_source = source
        self._target = _Target(fn)
        self._inner_wrt = self._target.inner_wrt(self._positions)
        self.signature = self._target.signature
        try:
            functools.update_wrapper(self, fn)
        except (AttributeError, TypeError):  # pragma: no cover - exotic callables
            pass
        self.__wrapped__ = fn
        self._compiled = None
        # wrt arguments of the last call that were containers (what .source shows)
        self._last_containers = {}
        # the shapes of the last call's arguments (what .source was compiled for),
        # and the shapes already met: {cheap signature of a call: its shapes}
        self._last_shapes = None
        self._compiled_shapes = None
        # the parameters the last call gave complex values, and the compiled gradient's
        self._last_complex = self._compiled_complex = ()
        self._last_library = self._compiled_library = None   # "cupy", "dask": not NumPy's
        self._shapes_met = {}
        # structures of run-time lists of tuples this gradient is compiled for
        # (a refusal with them as run-time values: _nested_arguments)
        self._nested_needed = set()
        # what calls gave the parameters where the gradient compiles only for numbers
        # there (_number_arguments), and what the last call and the compiled gradient
        # were given
        self._numbers_needed = set()
        self._last_numbers = self._compiled_numbers = ()
        # the string arguments (position, value) calls gave where the gradient
        # compiles only read as constants (_constant_arguments), and the last call's
        # and the compiled gradient's
        self._constants_needed = set()
        self._last_constants = self._compiled_constants = ()

    def compile(self, return_value: Optional[bool] = None):
        """Compile now (else on the first call); cached per function, wrt and options."""
        __tracebackhide__ = True  # noqa: F841 - IPython and pytest hide this frame
        compiled, error = self._compile(return_value)
        if error is not None:  # its traceback is the user's line (errors.at_user_line)
            raise error
        return compiled

    def _compile(self, return_value=None, containers=None, shapes=False):
        """(compiled gradient, None), or (None, the error to raise): the caller raises
        it, so that one frame of this module stands before the user's line.
        ``containers``: the structures of this call's container ``wrt`` arguments,
        ``shapes``: its arguments' shapes (by default those of the last call)."""
        value = self.return_value if return_value is None else return_value
        containers = self._last_containers if containers is None else containers
        shapes = self._last_shapes if shapes is False else shapes
        complex_params = self._last_complex
        numbers = self._last_numbers
        constants = self._last_constants
        if value == self.return_value and self._compiled is not None and \
                not containers and shapes == self._compiled_shapes and \
                complex_params == self._compiled_complex and \
                numbers == self._compiled_numbers and \
                constants == self._compiled_constants and \
                self._last_library == self._compiled_library and \
                not _stale(self._compiled, self.options):
            return self._compiled, None
        outside = tuple(sorted(  # objects passed outside wrt, compiled for their structure
            k for k, structure in (containers or {}).items()
            if k not in self._inner_wrt and k >= len(self._target.args) and
            container_args.holds_object(structure)))
        try:
            compiled = _compiled(self._target.function, self._inner_wrt, self.options, value,
                                 self.given_source, containers, shapes, self._last_library,
                                 self.has_aux, complex_params, numbers, constants, outside)
        except TangentCkptError as exc:
            name = getattr(self._target.function, "__name__", "<module>")
            return None, at_user_line(exc, name)
        if value == self.return_value and not containers:
            self._compiled, self._compiled_shapes = compiled, shapes
            self._compiled_complex = complex_params
            self._compiled_numbers = numbers
            self._compiled_constants = constants
            self._compiled_library = self._last_library
        return compiled, None

    def _argument_shapes(self, args, kwargs):
        """The :class:`ArgumentFacts` of this call's arguments: their shapes
        ((parameter, shape), ...) and which hold floats; the gradient is compiled
        for them (compiler/analyze/known_shapes.py), so that it can
        leave out the sums over broadcast axes these shapes do not need, and
        skip the dtype checks of subscript writes into float arrays
        (compiler/analyze/inexact_arrays.py).  No shapes with
        ``backend="numba"``; None with containers, or after
        ``_SHAPES_PER_GRADIENT`` different ones (then one general gradient serves
        every call)."""
        if len(args) == self._target.positional + 1:
            args = args[:-1]  # the output adjoint
        signature = (tuple(map(_shape_key, args)), tuple(map(_inexact_argument, args)),
                     tuple((k, _shape_key(v), _inexact_argument(v)) for k, v in kwargs.items())
                     if kwargs else ())
        shapes = self._shapes_met.get(signature, False)
        if shapes is not False:
            return shapes
        if len(self._shapes_met) >= _SHAPES_PER_GRADIENT:
            return None
        try:
            arguments = self._target.bind(args, {k: v for k, v in kwargs.items()
                                                 if k in self._target.signature.parameters})
        except TypeError:
            return None  # the call itself will say what is wrong
        shapes = None if self.options.backend == "numba" else tuple(sorted(
            (name, _shape_key(value)) for name, value in arguments.items()
            if _shape_key(value) is not None)) or None
        inexact = tuple(sorted(name for name, value in arguments.items()
                               if _inexact_argument(value)))
        facts = ArgumentFacts(shapes, inexact) if shapes or inexact else None
        self._shapes_met[signature] = facts
        return facts

    @property
    def source(self) -> "display.GeneratedSource":
        """The generated gradient's source: exactly the text that was compiled (a
        ``str``; Jupyter shows it highlighted under a one-line summary)."""
        return display.GeneratedSource(self.compile().source, self._header())

    def _header(self):
        compiled = self.compile()
        return display.header(self._target.label, compiled.wrt_names, compiled.loops,
                              self.return_value)

    @property
    def backend_report(self) -> Optional["numba_backend.JitReport"]:
        """With ``backend="numba"``: which generated functions Numba compiled, which
        run with NumPy and why, and the compile time so far (``compile_seconds``,
        apart from the gradient's own time; ``cache_hits`` counts functions loaded
        from Numba's on-disk cache).  None for the NumPy backend."""
        return getattr(self.compile().function, "jit_report", None)

    def _repr_html_(self):
        return self.source._repr_html_()

    def _repr_markdown_(self):
        return self.source._repr_markdown_()

    def __call__(self, *args: Any, **kwargs: Any) -> Result:
        __tracebackhide__ = True  # noqa: F841
        _refuse_foreign_arrays(self._target, args, kwargs)
        containers = self._container_arguments(args, kwargs)
        nested = self._nested_arguments(args, kwargs)
        if nested and tuple(sorted(nested.items())) in self._nested_needed:
            containers = {**containers, **nested}
        shapes = None if containers else self._argument_shapes(args, kwargs)
        self._last_containers, self._last_shapes = containers, shapes
        self._last_complex = self._complex_parameters(args, kwargs, containers)
        self._last_library = _array_library((*self._target.args, *args), kwargs)
        self._last_numbers = ()
        self._last_constants = ()
        if self._constants_needed:
            constants = self._constant_arguments(args, kwargs)
            if constants in self._constants_needed:
                self._last_constants = constants
        if self._numbers_needed:
            numbers = self._number_arguments(args, kwargs)
            if numbers in self._numbers_needed:
                self._last_numbers = numbers
        compiled, error = self._compile(containers=containers, shapes=shapes)
        if error is not None and set(containers) - set(self._inner_wrt) - set(nested):
            # a bound self used as a value (print(self)): read it when the code runs
            containers = {k: s for k, s in containers.items()
                          if k in self._inner_wrt or k in nested}
            self._last_containers = containers
            self._last_complex = self._complex_parameters(args, kwargs, containers)
            compiled, error = self._compile(containers=containers, shapes=shapes)
        if error is not None and nested and not set(nested) <= set(containers):
            # refused with run-time lists (of tuples, of objects made from them):
            # compiled for their structure instead
            trial = {**containers, **nested}
            before, self._last_complex = \
                self._last_complex, self._complex_parameters(args, kwargs, trial)
            retried, second = self._compile(containers=trial, shapes=None)
            if second is None:
                self._nested_needed.add(tuple(sorted(nested.items())))
                compiled, error, containers = retried, None, trial
                self._last_containers, self._last_shapes = containers, None
            else:
                self._last_complex = before
        if error is not None and not self._last_numbers:
            # refused (a write into a list copied from a parameter, whose items the
            # source cannot tell are numbers): compiled for the numbers given instead
            numbers = self._number_arguments(args, kwargs)
            if numbers:
                self._last_numbers = numbers
                retried, second = self._compile(containers=containers, shapes=shapes)
                if second is None:
                    self._numbers_needed.add(numbers)
                    compiled, error = retried, None
                else:
                    self._last_numbers = ()
        if error is not None and not self._last_constants:
            # refused (a function chosen by a string: LIMITERS[limiter]): compiled for
            # the strings given instead, read as constants
            constants = self._constant_arguments(args, kwargs)
            if constants:
                self._last_constants = constants
                retried, second = self._compile(containers=containers)
                if second is None:
                    self._constants_needed.add(constants)
                    compiled, error = retried, None
                else:
                    self._last_constants = ()
        if error is not None:  # its traceback is the user's line (errors.at_user_line)
            raise error
        seed = kwargs.pop(compiled.seed_name, None)
        if len(args) == self._target.positional + 1 and seed is None:
            args, seed = args[:-1], args[-1]
        arguments = self._target.bind(args, kwargs)
        names = self._target.parameters()
        user_values = [arguments[p] for p in names]
        values = container_args.flat_values(user_values, containers)
        if compiled.stores_on_given and containers:
            container_args.refuse_shared_objects(user_values, containers, names,
                                                 compiled.dependencies)
        for user_k, k in zip(self._positions, self._inner_wrt):
            name = names[k]
            if k in containers:
                for label, leaf in zip(container_args.leaf_labels(name, user_values[k]),
                                       container_args.leaves_of(user_values[k])):
                    _check_wrt_value(self._target.label, label, user_k, leaf)
            else:
                _check_wrt_value(self._target.label, name, user_k, user_values[k])
        checked = seed is not None and np.ndim(seed) > 0
        if checked:  # the value is needed to check the adjoint's shape
            compiled, error = self._compile(return_value=True, containers=containers,
                                            shapes=shapes)
            if error is not None:
                raise error
        try:
            if self.progress:
                with reporting():
                    result = compiled.function(*values, 1.0 if seed is None else seed)
            else:
                result = compiled.function(*values, 1.0 if seed is None else seed)
        except BaseException as exc:
            _release_loops(exc.__traceback__)
            if checked and isinstance(exc, ValueError):
                output = _output_or_none(self._target.function, values)
                if self.has_aux and isinstance(output, tuple):
                    output = output[0]
                _check_output_adjoint(seed, output, exc)
            placed = run_time_errors.placed_at_user_line(exc)
            if placed is not exc:  # a run-time refusal: named at the user's line
                raise placed from None
            raise  # with a note naming the user's line
        value = aux = None
        if checked or self.return_value:
            value, grads = result
            if self.has_aux:
                value, aux = value
        elif self.has_aux:
            grads, aux = result
        else:
            grads = result
        if checked:
            _check_output_adjoint(seed, value)
        grads = self._finish(grads, user_values, containers)
        if self.return_value:
            return ((value, aux) if self.has_aux else value), grads
        return (grads, aux) if self.has_aux else grads

    def _complex_parameters(self, args, kwargs, containers):
        """Where this call's arguments hold complex values, as paths into the
        gradient's parameters (``container_args.complex_paths``, ``containers``
        given as their leaves): the gradient is compiled for them, so that what
        they make is known to be complex (compiler/analyze/complex_values.py)."""
        given = (*self._target.args, *args, *self._target.kwargs.values(), *kwargs.values())
        if all(type(v) is np.ndarray and v.dtype.kind in "fiub" or type(v) in _REAL_NUMBERS
               for v in given):
            return ()  # real arrays and numbers: the common call, decided in 0.5 us
        if not container_args.complex_paths(given):
            return ()
        values = self._argument_values(args, kwargs)
        if values is None:
            return ()  # the call itself will say what is wrong
        return container_args.complex_paths(container_args.flat_values(values, containers))

    def _number_arguments(self, args, kwargs):
        """((position, kind), ...) of this call's arguments that are numbers, plain
        lists or tuples of numbers, or NumPy arrays of numbers
        (``fence/number_arguments.py``): the aliasing fence may take them to hold no
        memory (an array: none but its own) when the gradient is compiled for them."""
        values = self._argument_values(args, kwargs)
        if values is None:
            return ()
        return tuple((k, kind) for k, kind in enumerate(map(argument_kind, values))
                     if kind is not None)

    def _constant_arguments(self, args, kwargs):
        """((position, value), ...) of this call's string and ``None`` arguments
        outside ``wrt`` (a default the call leaves too): where the gradient is refused with them as
        values of the run, it is compiled for their values, read as constants
        (``desugar/constant_arguments.py``), one gradient per value."""
        values = self._argument_values(args, kwargs)
        if values is None:
            return ()
        return tuple((k, v) for k, v in enumerate(values)
                     if (type(v) is str or v is None) and k not in self._inner_wrt)

    def _container_arguments(self, args, kwargs):
        """{position: structure} of the ``wrt`` arguments of this call that are
        lists, tuples or dicts (each structure compiles a gradient of its own)."""
        if not any(map(container_args.is_structured,
                       [*args, *kwargs.values(), *self._target.args])):
            return {}
        values = self._argument_values(args, kwargs)
        if values is None:
            return {}  # the call itself will say what is wrong
        structures = container_args.container_positions(self._inner_wrt, values)
        structures.update(container_args.bound_objects(self._target.args, self._inner_wrt))
        structures.update(container_args.option_dicts(values, self._inner_wrt))
        return structures

    def _nested_arguments(self, args, kwargs):
        """{position: structure} of this call's arguments outside ``wrt`` that are
        lists or tuples of arrays and numbers, or of lists, tuples or dicts of them
        (container_args.nested_sequences), or objects of the user's classes and
        lists or tuples of them (container_args.outside_objects): compiled for
        their structure only when the gradient is refused with them as run-time
        values."""
        if not any(isinstance(a, (list, tuple)) or container_args.is_user_object(a)
                   for a in [*args, *kwargs.values()]):
            return {}
        values = self._argument_values(args, kwargs)
        if values is None:
            return {}
        return {**container_args.nested_sequences(values, self._inner_wrt),
                **container_args.outside_objects(values, self._inner_wrt)}

    def _argument_values(self, args, kwargs):
        """This call's argument values in the order of ``fn``'s parameters (the
        trailing output adjoint left out), or None where they do not bind."""
        if len(args) == self._target.positional + 1:
            args = args[:-1]  # the output adjoint
        try:
            arguments = self._target.bind(args, {k: v for k, v in kwargs.items()
                                                 if k in self._target.signature.parameters})
        except TypeError:
            return None
        return [arguments.get(p) for p in self._target.parameters()]

    def _finish(self, grads, values, containers):
        """Every array argument's gradient is an array of its shape.  The symbolic
        zero of the generated code is a Python 0.0, and so is a real zero computed
        from Python floats (``(s - s) * a[0]``): such a value flowing back to an
        array argument is widened here (found by tests/test_fuzz.py).  With
        ``flat=True`` the gradients are raveled into one float64 vector.  An int
        ``wrt`` gives the gradient itself, a tuple a tuple (``wrt=(0,)``: a 1-tuple)."""
        if containers:  # one gradient per wrt argument, a container's in its shape
            grads = tuple(container_args.regroup(grads, self._inner_wrt, values, containers,
                                                 lambda g, x: _shaped_one(g, x, as_gradient)))
        elif len(self._inner_wrt) == 1:  # the generated code returns one gradient bare
            grads = (_shaped_one(grads, values[self._inner_wrt[0]], as_gradient),)
        else:
            grads = tuple(_shaped_one(g, values[k], as_gradient)
                          for g, k in zip(grads, self._inner_wrt))
        if self.flat:
            return ravel(grads)[0]
        return grads[0] if isinstance(self.wrt, int) else grads

    def __repr__(self):
        return f"<gradient of {getattr(self.fn, '__qualname__', self._target.label)} " \
               f"wrt {self.wrt}>"

    def __reduce__(self):
        """Pickled as what makes it -- the function (by reference when importable,
        as ``pickle`` does; cloudpickle takes a ``__main__`` function by value with
        only the globals it reads), ``wrt`` and the options -- never the compiled
        code and its namespace; it compiles again where it is loaded.  A gradient
        that is itself a module attribute (``@tc.grad_with_checkpointing``) is
        pickled by that name."""
        if importable_as(self, self.fn):
            return self.__qualname__
        return (_rebuild_gradient, (self.fn, self.wrt, self.options, self.return_value,
                                    self.flat, _portable_source(self.fn, self.given_source),
                                    self.progress, self.has_aux))


#: what ``grad_with_checkpointing(wrt=..., ...)`` without a function returns
Decorator = Callable[[Callable[..., Any]], GradientFunction[Grads]]


class DecoratesFirst(Protocol):
    """``grad_with_checkpointing(...)`` with ``wrt=0``: the gradient has the type of
    the decorated function's first parameter."""
    def __call__(self, fn: Callable[Concatenate[Arg, Rest], Any], /) -> GradientFunction[Arg]: ...


class DecoratesSecond(Protocol):
    """``grad_with_checkpointing(...)`` with ``wrt=1``: the type of the second parameter."""
    def __call__(self, fn: Callable[Concatenate[Any, Arg, Rest], Any], /
                 ) -> GradientFunction[Arg]: ...


def _rebuild_gradient(fn, wrt, options, return_value, flat, source, progress, has_aux=False):
    return GradientFunction(fn, wrt, options, return_value=return_value, flat=flat,
                            source=source, progress=progress, has_aux=has_aux)


def _portable_source(fn, given):
    """The source a gradient needs where it is unpickled: ``given``, or for a
    function pickled by value (defined in ``__main__`` or inside a function:
    cloudpickle rebuilds it without a file), its text read now."""
    if given is not None or not isinstance(fn, types.FunctionType) or \
            fn.__name__ == "<lambda>" or \
            (fn.__module__ != "__main__" and importable_as(fn, fn)):
        return given
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None


def importable_as(obj, fn):
    """Whether ``obj`` is what ``fn``'s module and qualified name lead to (a gradient
    a decorator put in place of its function)."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    found = module
    for part in (getattr(fn, "__qualname__", None) or "<locals>").split("."):
        if part == "<locals>":
            return False
        found = getattr(found, part, None)
    return found is obj


# different argument shapes one gradient is compiled for before it keeps the general code
_SHAPES_PER_GRADIENT = 8


def _without_views(write, library):
    """The refusal of code that writes through views or aliases, on an array
    library whose slices are copies."""
    filename, line, names = write
    where = place(filename, line) + ": " if filename and line else ""
    return backends.BackendError(
        f"{where}a write into one of {', '.join(names)}, which share memory in NumPy "
        f"(views or aliases of one array): {library} arrays have no views (a slice is a "
        f"copy), so this code computes something else on {library} arrays than NumPy "
        "does; write into the array itself, not through a view or another name for it "
        "(v = x[1:3], z = x), or give NumPy or CuPy arrays")


def _array_library(args, kwargs):
    """The library of the arguments' arrays when it is not NumPy ("cupy",
    "dask"; runtime/backends.py), looking into containers and objects too."""
    library = backends.array_library(args) or backends.array_library(kwargs.values())
    if library is None and any(map(container_args.is_structured, [*args, *kwargs.values()])):
        library = backends.array_library(
            leaf for value in [*args, *kwargs.values()] if container_args.is_structured(value)
            for leaf in _leaves_or_nothing(value))
    return library


def _leaves_or_nothing(value):
    try:
        return container_args.leaves_of(value)
    except WrtError:
        return []


class ArgumentFacts(NamedTuple):
    """What a gradient is compiled for, of one call's arguments: ``shapes``
    ((parameter, ``_shape_key``), ...) and ``inexact`` (the parameters given float
    or complex arrays or numbers)."""
    shapes: Optional[tuple]
    inexact: tuple


def _inexact_argument(value):
    """Does ``value`` surely hold floats (a float or complex array or number)?"""
    if type(value) is np.ndarray:
        return value.dtype.kind in "fc"
    return type(value) is float or isinstance(value, (np.floating, np.complexfloating))


_REAL_NUMBERS = (float, int, bool, np.float64, np.float32, np.int64)


def _shape_key(value):
    """What the compiler may assume of an argument: an array's or a number's
    shape, "int" for a Python int (an index), None for anything else."""
    kind = type(value)
    if kind is np.ndarray:
        return value.shape
    if kind is float or isinstance(value, np.generic):
        return ()
    if kind is int:
        return "int"
    return None


def _output_or_none(function, values):
    """The primal output, to name its shape; None when the primal itself fails."""
    try:
        return function(*values)
    except Exception:
        return None


def _check_output_adjoint(seed, output, cause=None):
    """An array output adjoint must have the output's shape."""
    if output is not None and np.shape(seed) != np.shape(output):
        raise OutputAdjointError(
            f"the output adjoint has shape {np.shape(seed)} but the function's output has "
            f"shape {np.shape(output)}: give an adjoint of shape {np.shape(output)} or a "
            "scalar") from cause


def _shaped_one(g, x, as_gradient):
    """The gradient ``g`` of the argument ``x`` as the user receives it: an array
    of ``x``'s shape and dtype; for a scalar ``x`` (a Python float or a NumPy
    float scalar) a NumPy scalar of its dtype -- ``np.float64`` for a Python
    float, a subclass of ``float`` -- whichever path computed it (a Python float,
    a NumPy scalar or a 0-d array).  A 0-d CuPy or Dask array stays one: making
    it a NumPy scalar would copy it to the host or compute a lazy graph now."""
    if isinstance(x, (float, np.floating)) and not is_foreign_array(g):
        dtype = x.dtype if isinstance(x, np.floating) else np.dtype(np.float64)
        return dtype.type(as_gradient(g, x))
    if is_array(x) and not (type(g) is type(x) and g.shape == x.shape and
                            g.dtype == x.dtype) or np.iscomplexobj(g):
        return as_gradient(g, x)
    return g


def _refuse_foreign_arrays(target, args, kwargs):
    """A pandas Series (or another library's array-like) where an array is expected."""
    for position, value in [*enumerate(args), *kwargs.items()]:
        if container_args.foreign_array(value):
            names = target.names
            name = names[position] if isinstance(position, int) and position < len(names) \
                else position
            kind = type(value)
            library = kind.__module__.split(".")[0]
            raise WrtError(f"{target.label}() argument {name!r} is a {library} {kind.__name__}: "
                           "tangent_ckpt differentiates NumPy arrays; pass "
                           f"np.asarray({name}) (for pandas, {name}.to_numpy())")


def _check_wrt_value(label, name, position, value):
    where = f"{label}() argument '{name}' (position {position})"
    if isinstance(value, bool):
        raise WrtError(f"{where} is a bool; gradients need float inputs")
    if isinstance(value, (int, np.integer)):
        raise WrtError(f"{where} is an integer ({value!r}); gradients are defined for float "
                       f"inputs: pass {float(value)!r} or drop it from wrt")
    if isinstance(value, (float, np.floating)):
        return
    if is_array(value):  # a NumPy array or a CuPy or Dask one
        if np.issubdtype(value.dtype, np.floating):
            return
        raise WrtError(f"{where} is an array of dtype {value.dtype}; gradients need a float "
                       "array: pass x.astype(float) or drop it from wrt")
    if isinstance(value, (complex, np.complexfloating)):
        raise WrtError(f"{where} is complex; only real float inputs are supported")
    raise WrtError(f"{where} is a {type(value).__name__}; gradients need a float array or "
                   "a float (convert lists with np.asarray(x, dtype=float))")


_OPTIONS_DOC = """
    Options (keyword only; a misspelt one is an :class:`OptionError` naming the
    closest valid option):

    - ``checkpoint``: ``False`` tapes every loop; ``True`` checkpoints every loop
      on ``schedule``; ``"auto"`` lets ``memory_budget`` decide loops and segments.
      Not given, loops are taped, and the options below that act only on
      checkpointed loops (``snapshots`` to ``nested``) are an :class:`OptionError`
      unless the function marks a loop (``tc.checkpointed_loop``): they would act
      on nothing.  An explicit ``checkpoint=False`` accepts and ignores them (a
      call that toggles checkpointing keeps its options).
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
    - ``disk_snapshots``: extra snapshots kept as files in a private folder.
    - ``snapshot_store``: where disk snapshots go: None (a private temporary
      folder of ``.npy`` files), a folder, an fsspec URL (zarr arrays, the
      ``[store]`` extra) or ``tangent_ckpt.SnapshotStore(url, codec="zstd")``;
      see docs/storage.md.
    - ``costs``: what a step and a disk write / read cost, for the RAM + disk
      plan: ``None`` (a disk write or read costs one step), ``"measure"`` (time
      the first step and one snapshot before planning), a dict with ``forward``,
      ``write``, ``read`` (and ``adjoint``), or a 4-tuple; see docs/schedules.md.
    - ``verify``: re-run snapshotted steps and require identical bytes.
    - ``nested``: checkpoint loops nested in a checkpointed loop too.
    - ``flat``: return the gradients raveled into one float64 vector
      (:func:`tangent_ckpt.ravel` of the tuple of gradients, in ``wrt`` order).
    - ``source``: the function's source text, for functions whose source
      Python did not keep (the plain prompt, ``exec``).
    - ``backend``: ``"numpy"`` (default) or ``"numba"``: compile the loop
      steps with ``numba.njit(cache=True)`` (the ``[numba]`` extra; a function
      Numba cannot compile runs with NumPy, with one warning); see
      docs/numba.md and ``backend_report``.
    - ``progress``: show the progress of each checkpointed loop's forward and
      reverse sweeps (steps done, recomputed, snapshots held) on stderr, with
      tqdm when installed; the environment variable
      ``TANGENT_CKPT_PROGRESS=1`` turns it on for every gradient.
    - ``has_aux``: ``fn`` returns a pair ``(output, aux)``; ``output`` (a float
      or an array) is differentiated and ``aux`` (any value: arrays, numbers,
      strings, containers of them) is returned as computed: ``grad`` gives
      ``(gradient, aux)``, ``value_and_grad`` ``((value, aux), gradient)``.
      Without it a function returning a tuple or list is refused.
"""


F = TypeVar("F", bound=Callable[..., Any])


def options_checked(api_function: F) -> F:
    """``api_function`` refusing a keyword it does not take with an
    :class:`OptionError` (a ``TypeError``) naming the closest valid option.  Its
    signature stays exact, so a type checker flags the misspelling too."""
    parameters = inspect.signature(api_function).parameters
    valid = [name for name, p in parameters.items()
             if p.kind in (inspect.Parameter.KEYWORD_ONLY,
                           inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    options = [name for name in valid if parameters[name].kind == inspect.Parameter.KEYWORD_ONLY]

    @functools.wraps(api_function)
    def checked(*args, **kwargs):
        unknown = sorted(set(kwargs) - set(valid))
        if unknown:
            close = difflib.get_close_matches(unknown[0], valid, n=1)
            hint = f"did you mean {close[0]!r}?" if close else \
                f"valid options: {', '.join(options)}"
            raise OptionError(f"{api_function.__name__}() has no option {unknown[0]!r}: "
                              f"{hint}")
        return api_function(*args, **kwargs)
    return cast(F, checked)


@overload
def grad(
        fn: Callable[Concatenate[Arg, Rest], Any], wrt: Literal[0] = ..., *,
        flat: Literal[False] = ..., has_aux: Literal[False] = ...,
        **options: Unpack[GradOptions],
) -> GradientFunction[Arg]: ...


@overload
def grad(
        fn: Callable[Concatenate[Any, Arg, Rest], Any], wrt: Literal[1], *,
        flat: Literal[False] = ..., has_aux: Literal[False] = ...,
        **options: Unpack[GradOptions],
) -> GradientFunction[Arg]: ...


@overload
def grad(
        fn: Callable[..., Any], wrt: int, *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Any]: ...


@overload
def grad(
        fn: Callable[..., Any], wrt: Tuple[int], *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Any]]: ...


@overload
def grad(
        fn: Callable[..., Any], wrt: Tuple[int, int], *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Any, Any]]: ...


@overload
def grad(
        fn: Callable[..., Any], wrt: Tuple[int, int, int], *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Any, Any, Any]]: ...


@overload
def grad(
        fn: Callable[..., Any], wrt: Sequence[int], *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Any, ...]]: ...


@overload
def grad(
        fn: Callable[..., Any], wrt: Wrt = ..., *, flat: Literal[True],
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Flat]: ...


@overload
def grad(
        fn: Callable[..., Any], wrt: Wrt = ..., *, flat: bool = ..., has_aux: bool = ...,
        **options: Unpack[GradOptions],
) -> GradientFunction[Any]: ...


@options_checked
def grad(fn: Callable[..., Any], wrt: Wrt = 0, *,
         checkpoint: Union[bool, str, None] = None, snapshots: Optional[int] = None,
         memory_budget: MemoryBudget = None, schedule: str = "revolve", min_steps: int = 0,
         disk_snapshots: int = 0, verify: bool = False, nested: bool = False,
         costs: Any = None, snapshot_store: Any = None, flat: bool = False,
         source: Optional[str] = None, progress: bool = False,
         backend: str = "numpy", has_aux: bool = False) -> GradientFunction[Any]:
    """The gradient of ``fn`` with respect to the arguments at positions ``wrt``.

    ``fn`` is a def, a lambda, a bound method, a ``functools.partial`` or a
    callable object.  Returns a function with ``fn``'s signature (plus an
    optional trailing output adjoint) that returns the gradient.  ``wrt`` follows
    JAX's ``argnums``: an int gives the gradient itself, a tuple (or list) of
    ints a tuple of gradients in ``wrt`` order -- ``wrt=(0,)`` a 1-tuple,
    ``wrt=0`` (the default) the array.  A gradient has its argument's shape and
    dtype (a container's structure); a float argument's is a NumPy scalar of its
    dtype (``np.float64`` for a Python float, a subclass of ``float``).
    ``df.source`` is the generated code.
    """
    options = CheckpointOptions(checkpoint=checkpoint, snapshots=snapshots,
                                memory_budget=memory_budget, schedule=schedule,
                                min_steps=min_steps, disk_snapshots=disk_snapshots,
                                verify=verify, nested=nested, costs=costs,
                                snapshot_store=snapshot_store, backend=backend)
    return GradientFunction(fn, wrt, options, flat=flat, source=source, progress=progress,
                            has_aux=has_aux)


@overload
def value_and_grad(
        fn: Callable[Concatenate[Arg, Rest], Out], wrt: Literal[0] = ..., *,
        flat: Literal[False] = ..., has_aux: Literal[False] = ...,
        **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Out, Arg]]: ...


@overload
def value_and_grad(
        fn: Callable[Concatenate[Any, Arg, Rest], Out], wrt: Literal[1], *,
        flat: Literal[False] = ..., has_aux: Literal[False] = ...,
        **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Out, Arg]]: ...


@overload
def value_and_grad(
        fn: Callable[..., Out], wrt: int, *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Out, Any]]: ...


@overload
def value_and_grad(
        fn: Callable[..., Out], wrt: Tuple[int], *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Out, Tuple[Any]]]: ...


@overload
def value_and_grad(
        fn: Callable[..., Out], wrt: Tuple[int, int], *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Out, Tuple[Any, Any]]]: ...


@overload
def value_and_grad(
        fn: Callable[..., Out], wrt: Tuple[int, int, int], *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Out, Tuple[Any, Any, Any]]]: ...


@overload
def value_and_grad(
        fn: Callable[..., Out], wrt: Sequence[int], *, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Out, Tuple[Any, ...]]]: ...


@overload
def value_and_grad(
        fn: Callable[..., Out], wrt: Wrt = ..., *, flat: Literal[True],
        has_aux: Literal[False] = ..., **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Out, Flat]]: ...


@overload
def value_and_grad(
        fn: Callable[..., Any], wrt: Wrt = ..., *, flat: bool = ..., has_aux: bool = ...,
        **options: Unpack[GradOptions],
) -> GradientFunction[Tuple[Any, Any]]: ...


@options_checked
def value_and_grad(fn: Callable[..., Any], wrt: Wrt = 0, *,
                   checkpoint: Union[bool, str, None] = None, snapshots: Optional[int] = None,
                   memory_budget: MemoryBudget = None, schedule: str = "revolve",
                   min_steps: int = 0, disk_snapshots: int = 0, verify: bool = False,
                   nested: bool = False, costs: Any = None, snapshot_store: Any = None,
                   flat: bool = False, source: Optional[str] = None,
                   progress: bool = False, backend: str = "numpy",
                   has_aux: bool = False) -> GradientFunction[Any]:
    """Like :func:`grad`, but the gradient function returns ``(value, gradient)``.

    With ``flat=True`` the gradient is one float64 vector, the shape
    ``scipy.optimize.minimize(fun, x0, jac=True)`` wants: pair it with
    :func:`tangent_ckpt.ravel` of the same arguments (``examples/optimize.py``).
    """
    options = CheckpointOptions(checkpoint=checkpoint, snapshots=snapshots,
                                memory_budget=memory_budget, schedule=schedule,
                                min_steps=min_steps, disk_snapshots=disk_snapshots,
                                verify=verify, nested=nested, costs=costs,
                                snapshot_store=snapshot_store, backend=backend)
    return GradientFunction(fn, wrt, options, return_value=True, flat=flat, source=source,
                            progress=progress, has_aux=has_aux)


@overload
def grad_with_checkpointing(
        fn: Callable[Concatenate[Arg, Rest], Any], *, wrt: Literal[0] = ...,
        flat: Literal[False] = ..., has_aux: Literal[False] = ...,
        **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Arg]: ...


@overload
def grad_with_checkpointing(
        fn: Callable[Concatenate[Any, Arg, Rest], Any], *, wrt: Literal[1],
        flat: Literal[False] = ..., has_aux: Literal[False] = ...,
        **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Arg]: ...


@overload
def grad_with_checkpointing(
        fn: Callable[..., Any], *, wrt: int, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Any]: ...


@overload
def grad_with_checkpointing(
        fn: Callable[..., Any], *, wrt: Tuple[int], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Tuple[Any]]: ...


@overload
def grad_with_checkpointing(
        fn: Callable[..., Any], *, wrt: Tuple[int, int], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Tuple[Any, Any]]: ...


@overload
def grad_with_checkpointing(
        fn: Callable[..., Any], *, wrt: Tuple[int, int, int], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Tuple[Any, Any, Any]]: ...


@overload
def grad_with_checkpointing(
        fn: Callable[..., Any], *, wrt: Sequence[int], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Tuple[Any, ...]]: ...


@overload
def grad_with_checkpointing(
        fn: Callable[..., Any], *, wrt: Wrt = ..., flat: Literal[True],
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Flat]: ...


@overload
def grad_with_checkpointing(
        fn: Callable[..., Any], *, wrt: Wrt = ..., flat: bool = ..., has_aux: bool = ...,
        **options: Unpack[CheckpointingOptions],
) -> GradientFunction[Any]: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: Literal[0] = ..., flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> DecoratesFirst: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: Literal[1], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> DecoratesSecond: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: int, flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> Decorator[Any]: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: Tuple[int], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> Decorator[Tuple[Any]]: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: Tuple[int, int], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> Decorator[Tuple[Any, Any]]: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: Tuple[int, int, int], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> Decorator[Tuple[Any, Any, Any]]: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: Sequence[int], flat: Literal[False] = ...,
        has_aux: Literal[False] = ..., **options: Unpack[CheckpointingOptions],
) -> Decorator[Tuple[Any, ...]]: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: Wrt = ..., flat: Literal[True], has_aux: Literal[False] = ...,
        **options: Unpack[CheckpointingOptions],
) -> Decorator[Flat]: ...


@overload
def grad_with_checkpointing(
        fn: None = None, *, wrt: Wrt = ..., flat: bool = ..., has_aux: bool = ...,
        **options: Unpack[CheckpointingOptions],
) -> Decorator[Any]: ...


@options_checked
def grad_with_checkpointing(fn: Optional[Callable[..., Any]] = None, *, wrt: Wrt = 0,
                            snapshots: Optional[int] = None, memory_budget: MemoryBudget = None,
                            schedule: str = "revolve", min_steps: int = 0,
                            disk_snapshots: int = 0, verify: bool = False, nested: bool = False,
                            costs: Any = None, snapshot_store: Any = None, flat: bool = False,
                            source: Optional[str] = None, progress: bool = False,
                            backend: str = "numpy",
                            has_aux: bool = False) -> Any:  # the overloads above say what
    """The gradient of ``fn`` with its loops checkpointed (Revolve by default):
    ``grad(fn, wrt, checkpoint=True, ...)``.

    Use bare (``@grad_with_checkpointing``), with options
    (``@grad_with_checkpointing(wrt=(1, 2), snapshots=10)``) or as a call.
    """

    def wrap(f):
        return grad(f, wrt=wrt, checkpoint=True, snapshots=snapshots,
                    memory_budget=memory_budget, schedule=schedule, min_steps=min_steps,
                    disk_snapshots=disk_snapshots, verify=verify, nested=nested, costs=costs,
                    snapshot_store=snapshot_store, flat=flat, source=source, progress=progress,
                    backend=backend, has_aux=has_aux)
    if fn is None:
        return wrap
    return wrap(fn)


for _api_function in (grad, value_and_grad, grad_with_checkpointing):
    _api_function.__doc__ += _OPTIONS_DOC


def source(df: GradientFunction) -> str:
    """The generated source of a gradient function returned by ``grad`` (or of
    ``jvp`` / ``hvp``: their ``.source``)."""
    if isinstance(df, GradientFunction) or \
            type(df).__module__ == "tangent_ckpt.second_order":
        return df.source
    raise TypeError(f"source() takes a function returned by tangent_ckpt.grad, not {df!r}")
