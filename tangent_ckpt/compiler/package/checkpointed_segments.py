"""Checkpointed segments: ``tc.checkpoint(fn, ...)`` calls and
``with tc.checkpoint_scope(name):`` blocks (``ir.Segment``).

A segment becomes two generated functions, whose bodies the same
:class:`~tangent_ckpt.compiler.transform.reverse.Reverser` that differentiates
function bodies produced (as for loop bodies):

- ``segment12_primal(inputs...)``: the block without any record, returns its outputs;
- ``segment12_adjoint(inputs...)``: a generator that re-records the block,
  ``yield``\\ s its outputs, receives their adjoints and returns the inputs'
  adjoints.

and two calls to the runtime (``rt.Segment``) in the code that contains it::

    segment12 = rt.Segment('segment12', segment12_primal, segment12_adjoint)
    h2 = segment12.forward(h1, W)            # outputs only: no intermediates kept
    ...
    bh1, bW = segment12.reverse(bh2, h1, W)  # re-run the block, then reverse it

Only the segment's inputs and outputs stay alive between the sweeps.  With
``min_bytes`` (or ``enabled`` known only at run time, or the auto mode's memory
plan) ``forward`` records the block and keeps the record when the segment is
not to be checkpointed: the suspended generator *is* the record.

Where a function only runs forward (the primal step of a checkpointed loop),
the segment is a plain call ``h2 = segment12_primal(h1, W)``.

This runs after the transform, on its output: the transform
(``transform/segment_bodies.py``) hands each segment over as an
``code.CheckpointedSegment`` (its inputs, outputs and the bodies of its two
functions, saves still marked) and marks its calls with ``code.SegmentCall``.
"""

import ast

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, Line, SegmentCall
from tangent_ckpt.compiler.ir import operand_node
from tangent_ckpt.compiler.package.driver_calls import random_draws
from tangent_ckpt.compiler.package.saves import finish_saves, keep_bound_checks, resolve_saves
from tangent_ckpt.compiler.transform.segment_bodies import describe


def _pack(names):
    """The value of several names: None, one name, or a tuple."""
    if not names:
        return sx.const(None)
    return sx.pack(names)


class SegmentPackage:
    """The functions and ``rt.Segment`` calls of one compile's segments."""

    def __init__(self, function, plan, bindings, namer):
        self.function = function
        self.plan = plan  # auto mode: the name of the gradient's rt.MemoryPlan
        self.bindings = bindings
        self.namer = namer
        self.definitions = []

    def add(self, node):
        """Write the two functions of ``node`` (an ``code.CheckpointedSegment``)."""
        self.definitions.append(self._primal_function(node))
        self.definitions.append(self._adjoint_function(node))

    def expand(self, items):
        """``items`` with each ``code.SegmentCall`` written out (inside blocks too)."""
        out = []
        for item in items:
            if isinstance(item, SegmentCall):
                out += self._reverse_call(item) if item.reverse else self._forward_call(item)
            else:
                if isinstance(item, Block):
                    item.body = self.expand(item.body)
                out.append(item)
        return out

    # --- the two generated functions ----------------------------------------------
    def _primal_function(self, node):
        code = keep_bound_checks(resolve_saves(self.expand(node.primal_body), set()), ())
        lines = [Comment(t) for t in describe(node)]
        lines.append(Comment("run without keeping intermediates"))
        lines += code
        lines.append(Line(ast.Return(value=_pack(node.outputs))))
        return [Block(sx.def_(node.primal, node.inputs), lines)]

    def _adjoint_function(self, node):
        body = node.adjoint_body
        ret = Line(sx.return_(body.results))
        primal, adjoint, needed = finish_saves(self.expand(body.primal),
                                               self.expand(body.adjoint), ret)
        primal = keep_bound_checks(primal, body.saves.maybe_unbound(needed))
        lines = [Comment(t) for t in describe(node)]
        lines.append(Comment("re-record it, hand back its outputs, then reverse it with their "
                             "adjoints"))
        lines += body.saves.entry_lines(needed)
        if body.saves.tape is not None:
            lines.append(Line(sx.assign(body.saves.tape, ast.List(elts=[], ctx=ast.Load()))))
        lines += primal
        lines.append(Line(sx.assign(list(body.seeds), sx.yield_(_pack(node.outputs)))))
        lines += adjoint
        lines.append(ret)
        return [Block(sx.def_(node.adjoint, node.inputs), lines)]

    # --- the calls in the enclosing code -------------------------------------------
    def _forward_call(self, call):
        node, seg, lhs = call.node, call.node.segment, call.targets
        if not call.reversed:  # the enclosing function only runs forward
            ctor = Line(None, seg.line,
                        comment="(no reverse sweep here: the segment only runs forward)")
            run = sx.call(node.primal, *node.inputs)
        else:
            label = seg.name if seg.kind == "scope" else node.base  # the profiler's name
            ctor = Line(sx.assign(call.obj, sx.rt("Segment", sx.const(label), node.primal,
                                                  node.adjoint, **self._options(call))),
                        seg.line)
            run = sx.method(call.obj, "forward", *node.inputs)
        return [ctor, Line(sx.assign(lhs, run) if lhs else sx.statement(run), seg.line)]

    def _options(self, call):
        seg = call.node.segment
        kwargs = {}
        if seg.min_bytes is not None:
            kwargs["min_bytes"] = operand_node(seg.min_bytes)
        if seg.enabled is not None:
            kwargs["enabled"] = operand_node(seg.enabled)
        global_state, generators = random_draws(seg.body, seg.line, self.bindings, self.namer,
                                                self.function.filename, "segment")
        if global_state:
            kwargs["random_state"] = sx.const(True)
        if generators:
            kwargs["generators"] = ast.List(elts=[sx.name(g) for g in generators],
                                            ctx=ast.Load())
        if self.plan and call.top:  # the auto mode's plan lives there
            kwargs["plan"] = sx.name(self.plan)
        return kwargs

    @staticmethod
    def _reverse_call(call):
        node = call.node
        reverse = sx.method(call.obj, "reverse", _pack(call.adjoints), *node.inputs)
        return [Line(sx.assign(call.targets, reverse), node.segment.line, True)]
