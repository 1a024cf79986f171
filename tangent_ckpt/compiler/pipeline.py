"""The compiler, one way: parse -> desugar -> fence -> lower -> analyze -> transform ->
package -> emit.

Each stage is one call below, a function from one representation to the next
(its docstring says what it takes and gives); docs/design.md is the map.
"""

import contextlib
import gc

from tangent_ckpt.compiler.analyze.activity import activity, varied_on_entry, wrt_parameters
from tangent_ckpt.compiler.frontend.deep import on_deep_stack
from tangent_ckpt.compiler.emit.rendering import emit
from tangent_ckpt.compiler.emit.user_code import desugared_text
from tangent_ckpt.compiler.fence.fence_once import fence_once
from tangent_ckpt.compiler.analyze.known_shapes import argument_shapes
from tangent_ckpt.compiler.analyze.numpy_operands import drop_proved_checks
from tangent_ckpt.compiler.lower.container_values import expand_positions
from tangent_ckpt.compiler.lower.normalize import normalize
from tangent_ckpt.compiler.backend.numba_code import numba_code
from tangent_ckpt.compiler.package.checkpointed_loops import package_loops
from tangent_ckpt.compiler.package.gradient import auto_plan, package_gradient
from tangent_ckpt.compiler.package.loop_plans import plan_loops
from tangent_ckpt.compiler.package.tangent import package_tangent
from tangent_ckpt.compiler.frontend.parse import parse_function, recording
from tangent_ckpt.compiler.analyze.scalar_output import output_is_scalar
from tangent_ckpt.compiler.analyze.shapes import shape_facts
from tangent_ckpt.compiler.transform.forward import tangent_function
from tangent_ckpt.compiler.transform.reverse import reverse_function
from tangent_ckpt.compiler.desugar.passes import (containers_left, desugar, given_containers,
                                                  given_objects)
from tangent_ckpt.compiler.desugar.views import recording_shared_writes


def compile_gradient(fn, wrt, options, return_value=False, containers=None, shapes=None,
                     has_aux=False, inexact=(), complex_params=(), numbers=(), constants=(),
                     outside=()):
    """Compile the gradient of ``fn`` w.r.t. the parameters at positions ``wrt``;
    returns an :class:`~tangent_ckpt.compiler.emit.rendering.CompiledGradient` whose
    ``dependencies`` are the free names it was compiled against.  Deeply nested
    expressions are compiled on a deep stack (:mod:`deep`).  ``containers``
    (position -> ``tangent_ckpt.flatten.structure_of``) names parameters given
    as lists, tuples or dicts: the gradient takes one parameter per element, and
    ``wrt`` naming such a parameter means all its elements, in order.  ``shapes``
    ({parameter name: shape}, :mod:`known_shapes`): the gradient is compiled for
    arguments of these shapes only (the caller keys its cache by them).  With
    ``has_aux`` ``fn`` returns ``(output, aux)``: ``output`` is differentiated and
    the gradient function returns ``aux`` as computed, after the gradients.
    ``inexact``: the parameters given float or complex values (the caller keys its
    cache by them too): a subscript write into them needs no check for truncation
    (:mod:`inexact_arrays`).  ``complex_params``: where the arguments hold complex
    values, (position, attribute, ...) paths (keyed too): what they make is complex
    (:mod:`complex_values`).  ``numbers``: ((position, kind), ...) of the parameters
    given numbers or lists or tuples of numbers (keyed too), which the aliasing
    fence takes to hold no memory (``fence/number_arguments.py``).  ``constants``:
    ((position, str), ...) of the string arguments the gradient is compiled for
    (keyed too), read as constants (``desugar/constant_arguments.py``).  ``outside``:
    the positions of ``containers`` that are objects, or lists of them, passed
    outside ``wrt`` (keyed too): their attributes are parameters, so the code
    may store no attribute on an object it did not make (``parsed.outside_given``)."""
    with _collector_paused():
        return on_deep_stack(lambda: _stages(fn, wrt, options, return_value, containers,
                                             shapes, has_aux, inexact, complex_params,
                                             numbers, constants, outside), fn)


@contextlib.contextmanager
def _collector_paused():
    """Python's cycle collector off while compiling: the compiler makes hundreds of
    thousands of small tree nodes, and the collections they trigger, each scanning
    every node alive, were a fifth of the compile time of a 1 000-line function
    (benchmarks/compile_time.py).  Cycles made meanwhile are collected afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _analyzed(fn, wrt, containers=None, shapes=None, one_output=True, has_aux=False,
              inexact=(), complex_params=(), numbers=(), constants=(), outside=()):
    """The stages both modes share: parse, desugar, the fence (aliases, once, on the
    function and every helper it may inline, each desugared first), lower, analyze.
    ``containers``: the structure of container arguments (``wrt`` positions are
    expanded to their leaves); ``shapes``: the arguments' shapes, when known;
    ``one_output``: a returned tuple or list of outputs is refused; ``has_aux``:
    ``fn`` returns ``(output, aux)``; ``inexact``: the parameters the call gives float
    or complex values; ``complex_params``: where it gives complex ones (paths);
    ``numbers``: where it gives numbers, ((position, kind), ...); ``constants``:
    where it gives strings read as constants, ((position, value), ...); ``outside``:
    where it gives objects outside ``wrt`` compiled for their structure."""
    parsed = parse_function(fn)                                     # parse
    parameters = _parameters(parsed)
    parsed.outside_given = frozenset(parameters[k] for k in outside if k < len(parameters))
    followed = desugar(parsed, given=given_objects(parsed, containers),  # desugar (+ views)
                       structures=given_containers(parsed, containers),
                       constants={parameters[k]: value for k, value in constants
                                  if k < len(parameters)})
    left = containers_left(parsed, containers, parameters)  # objects desugar did not flatten
    fenced = fence_once(parsed, followed, left,                     # aliasing fence
                        {parameters[k]: kind for k, kind in numbers if k < len(parameters)})
    function, bindings, namer = normalize(parsed, left,             # lower
                                          one_output, has_aux, fenced,
                                          {p for p, shape in (shapes or {}).items()
                                           if isinstance(shape, tuple)})
    if containers:
        wrt = expand_positions(wrt, containers, len(parameters))
    wrt_names = wrt_parameters(function, wrt)                       # analyze
    active = activity(function, wrt_names)
    function.varied_on_entry = varied_on_entry(function, wrt_names)
    function.stores_on_given = parsed.stores_on_given
    function.scalar_output = output_is_scalar(function, shapes)
    function.inexact_params = frozenset(inexact) & set(function.params)
    function.complex_params = _complex_parameters(function, complex_params, wrt_names)
    scalars = frozenset(name for name, value in bindings.items() if type(value) is float)
    shape_facts(function, scalars)
    if shapes:
        argument_shapes(function, shapes, scalars)
    drop_proved_checks(function)
    return function, bindings, namer, wrt_names, active


def _complex_parameters(function, paths, wrt_names):
    """``paths`` (``container_args.complex_paths``: (position, attribute, ...)) as
    names: ``z`` for a parameter, ``m.c`` for an attribute of one.  A complex
    ``wrt`` argument is refused when called (WrtError), not here."""
    return frozenset(".".join((function.params[path[0]],) + path[1:]) for path in paths
                     if path[0] < len(function.params) and
                     (len(path) > 1 or function.params[path[0]] not in wrt_names))


def _parameters(parsed):
    """The names of the function's parameters, in the order calls give them."""
    args = parsed.node.args
    return [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]


def desugared(fn, containers=None):
    """The user's function after the stages before lowering (parse, desugar, the
    fence), as text: what ``tangent-ckpt dump --stage desugar`` prints.  Raises
    what those stages raise (a refused write names the user's line)."""
    def stages():
        parsed = parse_function(fn)
        parameters = _parameters(parsed)
        followed = desugar(parsed, given=given_objects(parsed, containers),
                           structures=given_containers(parsed, containers))
        fenced = fence_once(parsed, followed, containers_left(parsed, containers, parameters))
        helpers = [(f"{role} {f.__qualname__}()", prepared.parsed, prepared.error)
                   for (role, f), prepared in fenced.functions.items()]
        return desugared_text(parsed, helpers)
    with _collector_paused():
        return on_deep_stack(stages, fn)


def _stages(fn, wrt, options, return_value, containers=None, shapes=None, has_aux=False,
            inexact=(), complex_params=(), numbers=(), constants=(), outside=()):
    with recording() as dependencies, recording_shared_writes() as shared_writes:
        function, bindings, namer, wrt_names, active = _analyzed(
            fn, wrt, containers, shapes, has_aux=has_aux, inexact=inexact,
            complex_params=complex_params, numbers=numbers, constants=constants,
            outside=outside)
        plan = auto_plan(options, namer)
        loop_plans = plan_loops(function, options, plan)            # which loops, how
        sweeps = reverse_function(function, active, namer, bindings,  # transform
                                  loop_plans=loop_plans)
        sweeps, loops = package_loops(function, sweeps, options, plan,  # package
                                      bindings, namer)
        code = package_gradient(function, sweeps, wrt_names, bindings,
                                namer, options, plan, return_value, loops.helpers,
                                planned=loop_plans)
        if options.backend == "numba":
            code, bindings = numba_code(code, bindings)             # backend numba
    compiled = emit(code, function, bindings, wrt_names)            # emit
    compiled.dependencies = dependencies
    compiled.shared_writes = tuple(shared_writes)
    compiled.loops = loops.summaries(function)
    compiled.stores_on_given = function.stores_on_given
    return compiled


def compile_tangent(fn, wrt, return_value=True, has_aux=False, complex_params=()):
    """Compile the tangent-linear (forward mode) function of ``fn`` in the
    direction of the parameters at positions ``wrt``: it takes ``fn``'s
    parameters and one tangent per ``wrt`` parameter, and returns ``(value,
    tangent of the value)`` (the tangent alone without ``return_value``, the
    function ``tc.hvp`` differentiates again: then ``fn`` must return one
    output).  A returned tuple or list of outputs has a tangent of the same
    structure; with ``has_aux`` ``fn`` returns ``(output, aux)`` and the tangent
    function ``(value, tangent, aux)``.  ``complex_params``: where the arguments hold
    complex values, paths as for :func:`compile_gradient` (the caller keys its cache
    by them)."""
    with _collector_paused():
        return on_deep_stack(lambda: _forward_stages(fn, wrt, return_value, has_aux,
                                                     complex_params), fn)


def _forward_stages(fn, wrt, return_value, has_aux=False, complex_params=()):
    with recording() as dependencies, recording_shared_writes() as shared_writes:
        function, bindings, namer, wrt_names, active = _analyzed(
            fn, wrt, one_output=not return_value, has_aux=has_aux,
            complex_params=complex_params)
        body, tan, nonzero = tangent_function(function, active, namer,  # transform
                                              bindings, wrt_names)
        code = package_tangent(function, body, tan, nonzero, wrt_names,  # package
                               namer, return_value)
    compiled = emit(code, function, bindings, wrt_names)            # emit
    compiled.dependencies = dependencies
    compiled.shared_writes = tuple(shared_writes)
    return compiled
