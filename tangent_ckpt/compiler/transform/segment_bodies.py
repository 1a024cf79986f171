"""Transform: a checkpointed segment (``ir.Segment``: a ``tc.checkpoint(fn, ...)``
call or a ``with tc.checkpoint_scope(name):`` block), reversed into the pieces
packaging assembles.

Each segment becomes an :class:`~tangent_ckpt.compiler.code.CheckpointedSegment`
once: its inputs and outputs, the names of its two functions, the body of the
primal function (run by a Reverser of its own, nothing kept) and the body of
the adjoint function (re-recorded, then reversed: an ``code.ReversedBody``).
Where the enclosing code runs it, the primal sweep holds an
``code.SegmentCall`` (the forward call), after the saves of the values it
overwrites; where its reverse sweep reaches it, the adjoint sweep holds the
reverse call's ``code.SegmentCall``, followed by the restores and the sums of
its inputs' adjoints.  ``package/checkpointed_segments.py`` writes the
functions and the calls of ``rt.Segment``.  A segment with nothing to
differentiate through it is ordinary code.
"""

import re

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.analyze.activity import upward_exposed
from tangent_ckpt.compiler.code import CheckpointedSegment, Comment, Line, ReversedBody, \
    SegmentCall


class CheckpointedSegments:
    """The segments of one compile, shared by all its Reversers."""

    def __init__(self, function):
        self.function = function
        self.nodes = []  # code.CheckpointedSegment with functions, inner segments first
        self._made = {}  # id(segment) -> its code.CheckpointedSegment

    def node(self, rev, seg):
        """The ``code.CheckpointedSegment`` of ``seg``, made at its first visit."""
        node = self._made.get(id(seg))
        if node is not None:
            return node
        assigned = list(dict.fromkeys(ir.assigned_names(seg.body)))
        after = _reads_outside(self.function, seg)
        outputs = [n for n in assigned if n in after]
        sure = _surely_assigned(seg.body)
        inputs = [n for n in upward_exposed(seg.body) if n not in rev.bindings]
        inputs += [n for n in outputs if n not in sure and n not in inputs]
        base = rev.namer.fresh(f"segment{seg.line}" if seg.kind == "checkpoint"
                               else f"scope_{identifier(seg.name)}")
        node = CheckpointedSegment(
            seg, base, inputs, outputs, [n for n in inputs if n in rev.active],
            [n for n in outputs if n in rev.active],
            rev.namer.fresh(f"{base}_primal"), rev.namer.fresh(f"{base}_adjoint"))
        self._made[id(seg)] = node
        if not node.plain:
            node.primal_body = _primal_body(rev, node)
            node.adjoint_body = _adjoint_body(rev, node)
            self.nodes.append(node)
        return node


def identifier(text):
    text = re.sub(r"\W+", "_", str(text)).strip("_")
    return text if text and not text[0].isdigit() else f"s_{text}"


def _primal_body(rev, node):
    """The primal function's body: the block without any record."""
    sub = rev.nested()
    defined = set(node.inputs) | set(rev.bindings)
    return sub.primal(node.segment.body, set(defined), set(defined))


def _adjoint_body(rev, node):
    """The adjoint function's body: the block re-recorded, then reversed from the
    adjoints of its outputs."""
    sub = rev.nested(recording=True, observing=True)  # (the only run when kept)
    defined = set(node.inputs) | set(rev.bindings)
    primal = sub.primal(node.segment.body, set(defined), set(defined))
    seeds = [rev.adj(o) for o in node.active_outputs]
    adjoint, nonzero = sub.adjoint(node.segment.body, set(seeds))
    results = [sx.name(rev.adj(x)) if rev.adj(x) in nonzero else sx.rt("zeros_like", x)
               for x in node.active_inputs]
    return ReversedBody(primal, adjoint, seeds, results, sub.saves)


def describe(node):
    """The two comment lines that name a segment, its inputs and its outputs."""
    seg = node.segment
    what = f"`{seg.label}`" if seg.label else seg.name
    kind = "checkpointed segment" if seg.kind == "checkpoint" else \
        f"checkpoint scope '{seg.name}'"
    return [f"{kind} at line {seg.line}: {what}",
            f"inputs: {', '.join(node.inputs) or '-'}; outputs: {', '.join(node.outputs) or '-'}"]


def forward(rev, seg, defined, possibly, in_loop):
    """The primal code of ``seg`` (``defined``/``possibly`` updated in place)."""
    node = rev.segments.node(rev, seg)
    if node.plain:  # nothing to differentiate through it: ordinary code
        return rev.primal(seg.body, defined, possibly, in_loop)
    out = [Comment(t) for t in describe(node)]
    for x in node.inputs:
        if x not in possibly:  # first assigned inside the segment (on some path)
            out.append(Line(sx.assign(x, sx.const(None)), seg.line))
            defined.add(x)
            possibly.add(x)
    obj = node.base if not node.object_named else rev.namer.fresh(node.base)
    node.object_named = True
    call = SegmentCall(node, obj, list(node.outputs), top=rev.top)
    call.saves = [_save(rev, out, name, seg.line, defined, possibly, in_loop)
                  for name in [obj] + node.outputs]
    out.append(call)
    for name in [obj] + node.outputs:
        defined.add(name)
        possibly.add(name)
    rev.segment_calls[id(seg)] = call
    return out


def _save(rev, out, name, line, defined, possibly, in_loop):
    """Keep the value of ``name`` that the segment's call overwrites; returns the
    write it stands for, which :func:`reverse` puts back."""
    write = ir.Assign(name, ir.Copy(ir.Const(None)), line)
    rev.save(out, write, name, defined, possibly, in_loop)
    return write


def reverse(rev, seg, nonzero):
    """The adjoint code of ``seg``; returns (code, nonzero before it)."""
    node = rev.segments.node(rev, seg)
    if node.plain:
        return rev.adjoint(seg.body, nonzero)
    call = rev.segment_calls[id(seg)]
    call.reversed = True
    nonzero = set(nonzero)
    out = []
    bouts = [rev.adj(o) for o in node.active_outputs]
    flowing = any(b in nonzero for b in bouts)
    if flowing:
        out += rev.materialize([b for b in bouts if b not in nonzero], seg.line)
    obj_save, output_saves = call.saves[0], call.saves[1:]
    for write in reversed(output_saves):  # the inputs hold their values from before
        rev.restore(write, out)
    for b in bouts:
        nonzero.discard(b)
    if flowing:
        targets, accumulate = [], []
        for x in node.active_inputs:
            b = rev.adj(x)
            if b in nonzero:
                tmp = rev.namer.fresh(f"{b}_{node.base}")
                targets.append(tmp)
                accumulate.append((x, tmp))
            else:
                targets.append(b)
                nonzero.add(b)
        out.append(SegmentCall(node, call.obj, targets, reverse=True, adjoints=bouts))
        for x, tmp in accumulate:
            rev.accumulate(x, tmp, out, nonzero, seg.line)
    rev.restore(obj_save, out)
    return out, nonzero


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


def _reads_outside(function, seg):
    inside = {id(s) for s in ir.walk(seg.body)}
    names = ir.returned_names(function)
    for stmt in ir.walk(function.body):
        if id(stmt) not in inside and stmt is not seg:
            names.update(_stmt_reads(stmt))
    return names


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
