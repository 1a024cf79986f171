"""The compiler, one way: parse -> lower -> analyze -> transform -> package -> emit.

Each stage is one call below, a function from one representation to the next
(its docstring says what it takes and gives); docs/design.md is the map.
"""

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.aliasing import check_writes
from tangent_ckpt.compiler.analyze import activity, wrt_parameters
from tangent_ckpt.compiler.emit import emit
from tangent_ckpt.compiler.lower.normalize import normalize
from tangent_ckpt.compiler.package.checkpointed_loops import mark_loops
from tangent_ckpt.compiler.package.checkpointed_segments import SegmentHandler
from tangent_ckpt.compiler.package.gradient import auto_plan, package_gradient
from tangent_ckpt.compiler.parse import parse_function, recording
from tangent_ckpt.compiler.shapes import shape_facts
from tangent_ckpt.compiler.transform.reverse import reverse_function


def compile_gradient(fn, wrt, options, return_value=False):
    """Compile the gradient of ``fn`` w.r.t. the parameters at positions ``wrt``;
    returns an :class:`~tangent_ckpt.compiler.emit.CompiledGradient` whose
    ``dependencies`` are the free names it was compiled against."""
    with recording() as dependencies:
        parsed = parse_function(fn)                                 # parse
        check_writes(parsed)                                        # aliasing fence
        function, bindings, namer = normalize(parsed)               # lower
        wrt_names = wrt_parameters(function, wrt)                   # analyze
        active = activity(function, wrt_names)
        shape_facts(function)
        plan = auto_plan(options, namer)
        loops = mark_loops(function, options, plan)
        segments = SegmentHandler(function, options, plan)
        sweeps = reverse_function(function, active, namer, bindings,  # transform
                                  loops=loops, segments=segments)
        helpers = segments.definitions + (loops.definitions if loops else [])
        code = package_gradient(function, sweeps, wrt_names, bindings,  # package
                                namer, options, plan, return_value, helpers)
    compiled = emit(code, function, bindings, wrt_names)            # emit
    compiled.dependencies = dependencies
    compiled.loops = loops.summaries(function) if loops else \
        [(loop.line, "taped") for loop in ir.walk(function.body)
         if isinstance(loop, (ir.For, ir.While))]
    return compiled
