"""The one-way pipeline: frontend -> normalize -> analyze -> reverse -> emit."""

import linecache
import itertools

import numpy as np

from tangent_ckpt import runtime
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.analyze import activity, assignment_counts
from tangent_ckpt.compiler.code import Blank, Block, Comment, Line, finish_saves, render
from tangent_ckpt.compiler.frontend import parse_function
from tangent_ckpt.compiler.normalize import normalize
from tangent_ckpt.compiler.reverse import AdjointNames, Reverser
from tangent_ckpt.errors import TransformError

_counter = itertools.count(1)


class CompiledGradient:
    """The result of compiling: source text, the function, and what it needs."""

    def __init__(self, source, function, namespace, name, params, wrt_names, result,
                 seed_name):
        self.source = source
        self.function = function
        self.namespace = namespace
        self.name = name
        self.params = params
        self.wrt_names = wrt_names
        self.result = result
        self.seed_name = seed_name


def _error_factory(function):
    def make(cls, message, line, construct=None, hint=None):
        return cls(message, filename=function.filename, lineno=line, construct=construct,
                   hint=hint)
    return make


def _render_default(value, bindings, namer, name):
    if value is None or isinstance(value, (bool, int, float, str)) and \
            repr(value) not in ("inf", "-inf", "nan"):  # those are bound like objects
        return repr(value)
    if isinstance(value, tuple) and all(isinstance(v, (int, float, bool)) for v in value):
        return repr(value)
    gname = namer.fresh(f"{name}_default")
    bindings[gname] = value
    return gname


def compile_gradient(fn, wrt, options, return_value=False):
    """Compile the gradient of ``fn`` w.r.t. the parameters at positions ``wrt``."""
    from tangent_ckpt.compiler import loops, segments  # these transforms build on this module

    parsed = parse_function(fn)
    function, bindings, namer = normalize(parsed)
    for k in wrt:
        if not -len(function.params) <= k < len(function.params):
            from tangent_ckpt.errors import WrtError
            raise WrtError(f"wrt index {k} is out of range: {function.name}() has "
                           f"{len(function.params)} parameters")
    wrt_names = [function.params[k] for k in wrt]
    handler = loops.mark_loops(function, options)
    plan = _auto_plan(function, options, handler, namer)
    function.segment_handler = segments.SegmentHandler(function, options, plan=plan)
    active = activity(function, wrt_names)
    adj = AdjointNames(namer.used)
    error = _error_factory(function)
    rev = Reverser(function, active, namer, adj, bindings, error, loop_handler=handler)
    rev.is_top = True
    rev.counts = assignment_counts(function.body, function.params)
    rev._primal_names = {adj(n): n for n in list(namer.used)}
    defined = set(function.params) | set(bindings)
    primal = rev.primal(function.body, set(defined), set(defined))
    seed = adj(function.result)
    namer.reserve({seed})
    adjoint_code, nonzero = rev.adjoint(function.body, {seed})

    grads = []
    for p in wrt_names:
        b = adj(p)
        if b not in nonzero:
            grads.append(f"rt.zeros_like({p})")
        elif b in rev.maybe_scalar_zero or rev.counts.get(p, 0) > 1:
            grads.append(f"rt.as_gradient({b}, {p})")
        else:
            grads.append(b)
    grad_text = grads[0] if len(grads) == 1 else ", ".join(grads)
    if return_value:
        returned = f"{function.result}, ({grad_text}{',' if len(grads) == 1 else ''})" \
            if len(grads) > 1 else f"{function.result}, {grad_text}"
    else:
        returned = grad_text
    ret = Line(f"return {returned}")
    primal, adjoint_code, needed = finish_saves(primal, adjoint_code, ret,
                                        handler.extra_needed if handler else ())

    name = namer.fresh("d" + function.name)
    params = []
    for p in function.params:
        if p in function.defaults:
            params.append(f"{p}={_render_default(function.defaults[p], bindings, namer, p)}")
        else:
            params.append(p)
    params.append(f"{seed}=1.0")
    body = []
    body.append(Comment(f"gradient of {function.name}() ({_short(function.filename)}:"
                        f"{function.line}) with respect to {', '.join(wrt_names)}"))
    if plan:
        body.extend(_auto_comment(function, options, plan))
    for var in rev.predeclare:
        if var in needed:  # a variable saved before its first assignment
            body.append(Line(f"{var} = None"))
    if rev.tape is not None and rev.tape in _slot_names(primal):
        body.append(Line(f"{rev.tape} = []"))
    body.extend(primal)
    body.append(Blank())
    body.append(Comment("reverse sweep"))
    body.extend(adjoint_code)
    body.append(ret)
    helpers = function.segment_handler.definitions + (handler.definitions if handler else [])
    text = render([Block(f"def {name}({', '.join(params)}):", body)],
                  line_texts=function.line_texts)
    if helpers:
        text = "\n\n\n".join([render(h, line_texts=function.line_texts) for h in helpers] +
                             [text])
    source = text + "\n"
    namespace = {"np": np, "rt": runtime}
    namespace.update(bindings)
    filename = f"<tangent_ckpt {name} #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as exc:  # pragma: no cover - a compiler bug, reported with the text
        raise TransformError(f"internal error: generated code does not compile: {exc}\n{source}")
    exec(code, namespace)
    return CompiledGradient(source, namespace[name], namespace, name, function.params,
                            wrt_names, function.result, seed)


def _auto_plan(function, options, handler, namer):
    """checkpoint="auto": the name of the gradient's rt.MemoryPlan, or None."""
    if options.checkpoint != "auto":
        return None
    from tangent_ckpt.errors import CheckpointError
    if options.memory_budget is None:
        raise CheckpointError('checkpoint="auto" needs memory_budget= (e.g. "1GB"): the '
                              "choice of what to checkpoint is made to fit it")
    if options.nested:
        raise CheckpointError('checkpoint="auto" does not combine with nested=True: inner '
                              "loops are taped inside their loop's adjoint step")
    plan = namer.fresh("plan")
    if handler is not None:
        handler.plan = plan
    return plan


def _auto_comment(function, options, plan):
    loops = [s for s in ir.walk(function.body)
             if isinstance(s, (ir.For, ir.While)) and s.checkpoint]
    segs = [s for s in function.body if isinstance(s, ir.Segment)]
    where = ", ".join(str(s.line) for s in loops) or "-"
    text = [f"auto: memory_budget {options.memory_budget} bytes shared at run time by the "
            f"checkpointed loops (lines {where})",
            "and the segments of this function: each loop gets an equal share of what is left "
            "when it starts",
            "(every state kept when they fit, else taped segments or Revolve in that share); "
            "a segment keeps",
            "its record when it fits in a loop's share, else it is recomputed"
            + (f" (lines {', '.join(str(s.line) for s in segs)})" if segs else "")]
    return [Comment(t) for t in text] + [
        Line(f"{plan} = rt.MemoryPlan({options.memory_budget}, loops={len(loops)})",
             None)]


def _slot_names(items):
    from tangent_ckpt.compiler.code import used_slots
    return used_slots(items)


def _short(filename):
    import os
    return os.path.basename(filename or "?")
