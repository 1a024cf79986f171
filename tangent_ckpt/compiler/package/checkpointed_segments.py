"""Checkpointed segments: ``tc.checkpoint(fn, ...)`` calls and
``with tc.checkpoint_scope(name):`` blocks (``ir.Segment``).

A segment becomes two generated functions, both produced by the same
:class:`~tangent_ckpt.compiler.transform.reverse.Reverser` that differentiates function
bodies (as :mod:`loops` does for loop bodies):

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
the segment is a plain call ``h2 = segment12_primal(h1, W)``: the call line is
written when the reverse pass visits the segment.
"""

import ast
import re
from dataclasses import dataclass

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.analyze.activity import upward_exposed
from tangent_ckpt.compiler.code import Block, Comment, Line
from tangent_ckpt.compiler.ir import operand_node
from tangent_ckpt.compiler.package.driver_calls import random_draws
from tangent_ckpt.compiler.package.saves import finish_saves, resolve_saves


def _pack(names):
    """The value of several names: None, one name, or a tuple."""
    if not names:
        return sx.const(None)
    return sx.pack(names)


def _stmt_reads(stmt):
    """Names a statement reads itself (a compound statement: its header only)."""
    if isinstance(stmt, ir.If):
        return [stmt.test]
    if isinstance(stmt, ir.For):
        return [n for b in stmt.bounds for n in ir.operand_names(b)]
    if isinstance(stmt, ir.While):
        return list(stmt.test.names)
    if isinstance(stmt, ir.Segment):
        return list(ir.operand_names(stmt.min_bytes)) + list(ir.operand_names(stmt.enabled))
    return ir.read_names([stmt])


def _surely_assigned(body):
    names = set()
    for stmt in body:
        if isinstance(stmt, (ir.Assign, ir.SetItem)):
            names.add(stmt.target)
        elif isinstance(stmt, ir.If):
            names |= _surely_assigned(stmt.body) & _surely_assigned(stmt.orelse)
        elif isinstance(stmt, ir.Segment):
            names |= _surely_assigned(stmt.body)
    return names


def identifier(text):
    text = re.sub(r"\W+", "_", str(text)).strip("_")
    return text if text and not text[0].isdigit() else f"s_{text}"


@dataclass
class SegmentInfo:
    """One segment's names: ``base`` (``segment12``), its inputs and outputs (and
    the active ones), and the names of its two generated functions."""
    base: str
    inputs: list
    outputs: list
    active_inputs: list
    active_outputs: list
    primal: str
    adjoint: str
    object_named: bool = False  # its rt.Segment object has been named once

    @property
    def plain(self):
        return not self.active_outputs or not self.active_inputs


class SegmentHandler:
    """Called by every Reverser (its ``segments``) for ``ir.Segment``."""

    def __init__(self, function, options=None, plan=None):
        self.function = function
        self.options = options
        self.plan = plan  # auto mode: the name of the gradient's rt.MemoryPlan
        self.definitions = []
        self._info = {}
        self._calls = {}  # (id(reverser), id(segment)) -> the lines its primal wrote

    # --- analysis -------------------------------------------------------------------
    def _reads_outside(self, seg):
        inside = {id(s) for s in ir.walk(seg.body)}
        names = ir.returned_names(self.function)
        for stmt in ir.walk(self.function.body):
            if id(stmt) not in inside and stmt is not seg:
                names.update(_stmt_reads(stmt))
        return names

    def info(self, rev, seg):
        info = self._info.get(id(seg))
        if info is not None:
            return info
        assigned = list(dict.fromkeys(ir.assigned_names(seg.body)))
        after = self._reads_outside(seg)
        outputs = [n for n in assigned if n in after]
        sure = _surely_assigned(seg.body)
        inputs = [n for n in upward_exposed(seg.body) if n not in rev.bindings]
        inputs += [n for n in outputs if n not in sure and n not in inputs]
        active_inputs = [n for n in inputs if n in rev.active]
        active_outputs = [n for n in outputs if n in rev.active]
        base = rev.namer.fresh(f"segment{seg.line}" if seg.kind == "checkpoint"
                               else f"scope_{identifier(seg.name)}")
        info = SegmentInfo(base, inputs, outputs, active_inputs, active_outputs,
                           rev.namer.fresh(f"{base}_primal"), rev.namer.fresh(f"{base}_adjoint"))
        self._info[id(seg)] = info
        if not info.plain:
            self.definitions.append(self._primal_function(rev, seg, info))
            self.definitions.append(self._adjoint_function(rev, seg, info))
        return info

    def _describe(self, seg, info):
        what = f"`{seg.label}`" if seg.label else seg.name
        kind = "checkpointed segment" if seg.kind == "checkpoint" else \
            f"checkpoint scope '{seg.name}'"
        return [f"{kind} at line {seg.line}: {what}",
                f"inputs: {', '.join(info.inputs) or '-'}; outputs: {', '.join(info.outputs) or '-'}"]

    # --- the two generated functions ----------------------------------------------
    def _primal_function(self, rev, seg, info):
        sub = rev.nested()
        defined = set(info.inputs) | set(rev.bindings)
        code = resolve_saves(sub.primal(seg.body, set(defined), set(defined)), set())
        lines = [Comment(t) for t in self._describe(seg, info)]
        lines.append(Comment("run without keeping intermediates"))
        lines += code
        lines.append(Line(ast.Return(value=_pack(info.outputs))))
        return [Block(sx.def_(info.primal, info.inputs), lines)]

    def _adjoint_function(self, rev, seg, info):
        sub = rev.nested(recording=True)
        defined = set(info.inputs) | set(rev.bindings)
        primal = sub.primal(seg.body, set(defined), set(defined))
        seeds = [rev.adj(o) for o in info.active_outputs]
        adjoint, nonzero = sub.adjoint(seg.body, set(seeds))
        results = [sx.name(rev.adj(x)) if rev.adj(x) in nonzero else sx.rt("zeros_like", x)
                   for x in info.active_inputs]
        ret = Line(sx.return_(results))
        primal, adjoint, needed = finish_saves(primal, adjoint, ret)
        lines = [Comment(t) for t in self._describe(seg, info)]
        lines.append(Comment("re-record it, hand back its outputs, then reverse it with their "
                             "adjoints"))
        lines += sub.saves.entry_lines(needed)
        if sub.saves.tape is not None:
            lines.append(Line(sx.assign(sub.saves.tape, ast.List(elts=[], ctx=ast.Load()))))
        lines += primal
        lines.append(Line(sx.assign(list(seeds), sx.yield_(_pack(info.outputs)))))
        lines += adjoint
        lines.append(ret)
        return [Block(sx.def_(info.adjoint, info.inputs), lines)]

    # --- the calls in the enclosing code -------------------------------------------
    def _options(self, seg):
        kwargs = {}
        if seg.min_bytes is not None:
            kwargs["min_bytes"] = operand_node(seg.min_bytes)
        if seg.enabled is not None:
            kwargs["enabled"] = operand_node(seg.enabled)
        return kwargs

    def primal(self, rev, seg, defined, possibly, in_loop):
        info = self.info(rev, seg)
        if info.plain:  # nothing to differentiate through it: ordinary code
            return rev.primal(seg.body, defined, possibly, in_loop)
        out = [Comment(t) for t in self._describe(seg, info)]
        for x in info.inputs:
            if x not in possibly:  # first assigned inside the segment (on some path)
                out.append(Line(sx.assign(x, sx.const(None)), seg.line))
                defined.add(x)
                possibly.add(x)
        obj = info.base if not info.object_named else rev.namer.fresh(info.base)
        info.object_named = True
        obj_fake = ir.Assign(obj, ir.Copy(ir.Const(None)), seg.line)
        rev.save(out, obj_fake, obj, defined, possibly, in_loop)
        fakes = []
        for o in info.outputs:
            fake = ir.Assign(o, ir.Copy(ir.Const(None)), seg.line)
            rev.save(out, fake, o, defined, possibly, in_loop)
            fakes.append(fake)
        lhs = list(info.outputs)
        ctor = Line(None, seg.line, comment="(no reverse sweep here: the segment only runs forward)")
        run = sx.call(info.primal, *info.inputs)
        call = Line(sx.assign(lhs, run) if lhs else sx.statement(run), seg.line)
        out += [ctor, call]
        for name in [obj] + info.outputs:
            defined.add(name)
            possibly.add(name)
        self._calls[id(rev), id(seg)] = (obj, ctor, call, obj_fake, fakes, lhs)
        return out

    def adjoint(self, rev, seg, nonzero):
        info = self.info(rev, seg)
        if info.plain:
            return rev.adjoint(seg.body, nonzero)
        obj, ctor, call, obj_fake, fakes, lhs = self._calls[id(rev), id(seg)]
        label = seg.name if seg.kind == "scope" else info.base  # the profiler's name
        kwargs = self._options(seg)
        global_state, generators = random_draws(seg.body, seg.line, rev.bindings, rev.namer,
                                                self.function.filename, "segment")
        if global_state:
            kwargs["random_state"] = sx.const(True)
        if generators:
            kwargs["generators"] = ast.List(elts=[sx.name(g) for g in generators],
                                            ctx=ast.Load())
        if self.plan and rev.top:  # the auto mode's plan lives there
            kwargs["plan"] = sx.name(self.plan)
        ctor.comment = ""
        ctor.stmt = sx.assign(obj, sx.rt("Segment", sx.const(label), info.primal, info.adjoint,
                                         **kwargs))
        run = sx.method(obj, "forward", *info.inputs)
        call.stmt = sx.assign(lhs, run) if lhs else sx.statement(run)
        nonzero = set(nonzero)
        out = []
        bouts = [rev.adj(o) for o in info.active_outputs]
        flowing = any(b in nonzero for b in bouts)
        if flowing:
            out += rev.materialize([b for b in bouts if b not in nonzero], seg.line)
        for fake in reversed(fakes):  # the inputs hold their values from before the segment
            rev.restore(fake, out)
        for b in bouts:
            nonzero.discard(b)
        if flowing:
            targets, accumulate = [], []
            for x in info.active_inputs:
                b = rev.adj(x)
                if b in nonzero:
                    tmp = rev.namer.fresh(f"{b}_{info.base}")
                    targets.append(tmp)
                    accumulate.append((x, tmp))
                else:
                    targets.append(b)
                    nonzero.add(b)
            out.append(Line(sx.assign(targets, sx.method(obj, "reverse", _pack(bouts),
                                                         *info.inputs)), seg.line, True))
            for x, tmp in accumulate:
                rev.accumulate(x, tmp, out, nonzero, seg.line)
        rev.restore(obj_fake, out)
        return out, nonzero
