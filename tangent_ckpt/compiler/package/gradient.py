"""Package: the gradient function around the two sweeps.

``def dloss(h, W, b, n, bloss=1.0):`` — a comment naming the function and the
``wrt`` parameters, the variables saved before their first assignment, the
tape, the primal sweep, the reverse sweep, and the return of the gradients —
preceded by the functions the checkpointed loops and segments generated.
"""

import ast
import copy
import os
from dataclasses import dataclass

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Blank, Block, Comment, Line, names_read
from tangent_ckpt.compiler.package.dead_primal import drop_dead_primal, drop_dead_state
from tangent_ckpt.compiler.package.negations import fold_negations
from tangent_ckpt.compiler.package.saves import finish_saves, keep_bound_checks, stand_ins
from tangent_ckpt.errors import CheckpointError


@dataclass
class GradientCode:
    """The packaged gradient: ``definitions`` (blocks, the gradient function last),
    named ``name``, taking ``params`` and then ``seed`` (the result's adjoint)."""
    name: str
    params: list
    seed: str
    definitions: list


def auto_plan(options, namer):
    """checkpoint="auto": the name of the gradient's ``rt.MemoryPlan``, else None."""
    if options.checkpoint != "auto":
        return None
    if options.memory_budget is None:
        raise CheckpointError('checkpoint="auto" needs memory_budget= (e.g. "1GB"): the '
                              "choice of what to checkpoint is made to fit it")
    if options.nested:
        raise CheckpointError('checkpoint="auto" does not combine with nested=True: inner '
                              "loops are taped inside their loop's adjoint step")
    return namer.fresh("plan")


def package_gradient(function, sweeps, wrt_names, bindings, namer, options, plan,
                     return_value, helpers, planned=()):
    """Package.  Takes the lowered function, its :class:`Sweeps` (their loops
    packaged), the ``wrt`` parameter names, the definitions the loop and segment
    packaging made (``helpers``) and the ids of the loops planned for
    checkpointing; gives the :class:`GradientCode` that emit prints."""
    rev = sweeps.reverser
    grads = []
    for p in wrt_names:
        b = sweeps.adj(p)
        if b not in sweeps.nonzero:
            grads.append(sx.rt("zeros_like", p))
        elif b in rev.maybe_scalar_zero or rev.counts.get(p, 0) > 1:
            grads.append(sx.rt("as_gradient", b, p))
        else:
            grads.append(sx.name(b))
    gradients = sx.tuple_(grads) if len(grads) > 1 else grads[0]
    aux = copy.deepcopy(function.aux)  # has_aux: returned as computed, after the value
    if return_value:
        value = function.result if aux is None else sx.tuple_([function.result, aux])
        returned = [value, gradients]
    elif aux is not None:
        returned = [gradients, aux]
    else:
        returned = grads
    ret = Line(sx.return_(returned))
    sweep = sweeps.adjoint
    if not function.scalar_output and sweeps.seed in names_read(sweep):
        # a scalar seed of an array output: every element's adjoint (scalar_output.py)
        sweep = [Line(sx.assign(sweeps.seed, sx.rt("output_adjoint", sweeps.seed,
                                                   function.result)))] + sweep
    primal, adjoint, needed = finish_saves(sweeps.primal, sweep, ret)
    primal = keep_bound_checks(primal, rev.saves.maybe_unbound(needed), natural=True)
    primal = drop_dead_primal(primal, names_read(adjoint + [ret]))
    helpers = drop_dead_state(primal, helpers, names_read(adjoint + [ret]))

    name = namer.fresh("d" + function.name)
    params = list(function.params) + [sweeps.seed]
    defaults = [_default_node(function.defaults[p], bindings, namer, p)
                for p in function.params if p in function.defaults] + [sx.const(1.0)]
    body = [Comment(f"gradient of {function.name}() ({os.path.basename(function.filename or '?')}:"
                    f"{function.line}) with respect to {', '.join(wrt_names)}")]
    if plan:
        body.extend(_auto_comment(function, options, plan, planned))
    body += rev.saves.entry_lines(needed)
    if rev.saves.tape is not None and rev.saves.tape in names_read(primal):
        body.append(Line(sx.assign(rev.saves.tape, ast.List(elts=[], ctx=ast.Load()))))
    body += primal
    kept_as_shapes = stand_ins(primal, adjoint, ret, function.params)
    if kept_as_shapes:
        body += [Comment("only the shapes of these are read back: their memory is freed")]
        body += [Line(sx.assign(n, sx.rt("stand_in", n))) for n in kept_as_shapes]
    copied = _returned_values(function, return_value, aux)
    if copied:
        body += [Comment("returned as computed: the reverse sweep puts back what the "
                         "writes in place overwrote")]
        body += [Line(sx.assign(n, sx.rt("returned", n))) for n in copied]
    body += [Blank(), Comment("reverse sweep")] + adjoint + [ret]
    gradient = [Block(sx.def_(name, params, defaults), body)]
    definitions = list(helpers) + [gradient]
    for item in (item for d in definitions for item in d):
        if isinstance(item, Block):
            fold_negations(item)
    return GradientCode(name, list(function.params), sweeps.seed, definitions)


def _returned_values(function, return_value, aux):
    """The names of the values the gradient function returns besides the
    gradients (the output with ``return_value``, the leaves of an aux), where the
    function writes into arrays in place: the reverse sweep writes back into such
    an array what each write overwrote, and a returned value may be (or view) one."""
    if not any(isinstance(s, ir.SetItem) for s in ir.walk(function.body)):
        return []
    names = [function.result] if return_value else []
    if aux is not None:
        names += [n.id for n in ast.walk(aux) if isinstance(n, ast.Name)]
    return list(dict.fromkeys(names))


def _default_node(value, bindings, namer, name):
    if value is None or isinstance(value, (bool, int, float, str)):
        return sx.const(value)
    if isinstance(value, tuple) and all(isinstance(v, (int, float, bool)) for v in value):
        return sx.const(value)
    gname = namer.fresh(f"{name}_default")
    bindings[gname] = value
    return sx.name(gname)


def _auto_comment(function, options, plan, planned):
    loops = [s for s in ir.walk(function.body) if id(s) in planned]
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
        Line(sx.assign(plan, sx.rt("MemoryPlan", sx.const(options.memory_budget),
                                   loops=sx.const(len(loops)))))]
