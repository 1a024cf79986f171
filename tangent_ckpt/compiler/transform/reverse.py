"""Reverse: the normalized function -> primal code followed by adjoint code.

Straight-line code needs no tape: a value about to be overwritten is kept in a
local (``h_old = h``) and put back in the reverse sweep.  Inside loops each run
of a block adds one entry to a tape (``tape.extend((y, h_old))``, taken back
by ``y, h_old = tape[-2:]``; ``save_points.py``; taped loops:
``taped_loops.py``).  Saves for values the reverse sweep never reads are dropped.

Adjoints are named after the user's variables (``bW`` for ``W``).  The pass
tracks which adjoints are still zero, so the first contribution is a plain
assignment (``bW = ...``) and later ones accumulate (``bW = bW + ...``); a zero
is written out (``bW = 0.0``) only where control flow needs a value.
"""

import ast
from dataclasses import dataclass

from tangent_ckpt import runtime
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.analyze.activity import assignment_counts
from tangent_ckpt.compiler.analyze.complex_values import complex_names, refused_for_complex
from tangent_ckpt.compiler.analyze.inexact_arrays import surely_inexact
from tangent_ckpt.compiler.code import Block, BoundCheck, Line
from tangent_ckpt.compiler.analyze.fresh_arrays import owned_arrays
from tangent_ckpt.compiler.ir import expr_node, operand_node
from tangent_ckpt.compiler.transform import checkpointed_bodies, segment_bodies, taped_loops
from tangent_ckpt.compiler.transform.owned_adjoints import ArrayFacts, array_facts
from tangent_ckpt.compiler.transform.rules import adjoint_of_primitive, negated, track_fresh
from tangent_ckpt.compiler.transform.save_points import SavePoints, read_counts
from tangent_ckpt.errors import UnsupportedFunctionError


@dataclass
class Sweeps:
    """The reverse transform of one function: its primal sweep, its adjoint sweep
    (code items, saves and calls still marked), what packaging needs to finish it."""
    primal: list
    adjoint: list
    nonzero: set  # adjoints that hold a value at the start of the function
    seed: str  # the adjoint of the result: the gradient function's last parameter
    adj: "AdjointNames"
    reverser: "Reverser"  # saves (tape, entry_lines), maybe_scalar_zero, counts
    loops: list  # code.CheckpointedLoop: each checkpointed loop, inner ones first
    segments: list  # code.CheckpointedSegment: each segment with functions, inner ones first


def reverse_function(function, active, namer, bindings, loop_plans=None):
    """Transform (reverse mode).  Takes the lowered ``ir.Function``, its active
    names, the compile's namer and bindings, and the plans of the loops to checkpoint
    ({id(loop): ir.LoopPlan}, made before it); gives its :class:`Sweeps`, with an
    ``code.DriverCall`` / ``code.SegmentCall`` where a loop's / segment's calls go."""
    adj = AdjointNames(namer.used)
    loops = checkpointed_bodies.CheckpointedLoops(loop_plans) if loop_plans else None
    segments = segment_bodies.CheckpointedSegments(function)
    rev = Reverser(function, active, namer, adj, bindings, error_factory(function),
                   checkpointed=loops, segments=segments,
                   counts=assignment_counts(function.body, function.params),
                   primal_names={adj(n): n for n in list(namer.used)}, top=True,
                   in_place=owned_arrays(function), reads=read_counts(function))
    rev.facts = array_facts(function)
    defined = set(function.params) | set(bindings)
    bound = set(defined)
    primal = rev.primal(function.body, bound, set(defined))
    primal += rev.bound_checks(None, bound, sorted(ir.returned_names(function)))
    seed = adj(function.result)
    namer.reserve({seed})
    adjoint, nonzero = rev.adjoint(function.body, {seed})
    return Sweeps(primal, adjoint, nonzero, seed, adj, rev, loops.nodes if loops else [],
                  segments.nodes)


def _users_call(expr):
    """An observation that is a call of the user's (``print``, logging), not one of
    the runtime's checks (an ``assert``'s ``rt.check``, which may well run again)."""
    return isinstance(expr, ir.NonDiff) and isinstance(expr.node, ast.Call) and \
        not isinstance(expr.node, sx.HelperCall)


def _with_adjoints(names, adj):
    return frozenset(names) | frozenset(map(adj, names))


def error_factory(function):
    """``make(cls, message, line, construct, hint)``: an error naming the user's file:line."""
    def make(cls, message, line, construct=None, hint=None):
        return cls(message, filename=function.filename, lineno=line, construct=construct,
                   hint=hint)
    return make


class AdjointNames:
    """``b`` + the variable's name, with a prefix no user variable collides with."""

    def __init__(self, user_names):
        for prefix in ("b", "d", "adj_", "adjoint_"):
            if not any(prefix + n in user_names for n in user_names):
                break
        self.prefix = prefix

    def __call__(self, name):
        return self.prefix + name


class Reverser:
    """Builds the primal and adjoint code of one generated function body.

    Its public methods are what the transform's parts use (``taped_loops.py``, ...):

    - ``primal(body, defined, possibly, in_loop)`` / ``adjoint(body, nonzero)``: the
      code of a body, forward and in reverse; ``primal_loop`` / ``adjoint_loop``: a taped loop;
    - ``save(out, stmt, target, defined, possibly, in_loop)`` / ``restore(stmt, out)``:
      keep the value a write overwrites, and put it back in the reverse sweep;
    - ``accumulate(name, contribution, out, nonzero, line)``: add to an adjoint;
      ``materialize``, ``make_private``, ``zero_of``: zeros and private accumulators;
    - ``nested(checkpointed)``: a Reverser for a generated function of its own (a
      loop step, a segment) that shares this one's names, activity and bindings;
      after it ran, ``saves`` (:class:`~.save_points.SavePoints`: ``tape``,
      ``entry_lines``, ``unbound``) says what that function sets up.

    ``checkpointed`` / ``segments``: the compile's planned loops (None where none
    is checkpointed) / segments (``checkpointed_bodies.py`` / ``segment_bodies.py``).
    ``top``: this Reverser builds the gradient function itself.
    ``in_place``: arrays the function owns (``fresh_arrays.py``): subscript writes
    into them go in place and keep only the elements they overwrite.  The
    generated functions of checkpointed loops and segments get none: the driver
    keeps their input states as snapshots, which an in-place write would change.
    """

    def __init__(self, function, active, namer, adj, bindings, parsed_error,
                 checkpointed=None, segments=None, counts=None, primal_names=None, top=False,
                 in_place=frozenset(), complex_values=None, reads=None, inexact=None):
        self.function = function
        # names surely holding floats: a write into any other checks its dtype
        # for truncation (inexact_arrays.py)
        self.inexact = inexact if inexact is not None else surely_inexact(function, bindings)
        # names that may hold complex values, and their adjoints (complex_values.py)
        self.complex_values = complex_values if complex_values is not None else \
            _with_adjoints(complex_names(function, bindings), adj)
        self.active = active
        self.namer = namer
        self.adj = adj
        self.bindings = bindings
        self.error = parsed_error
        self.checkpointed = checkpointed  # the planned loops it checkpoints, or None
        self.segments = segments  # the compile's segments (segment_bodies.py)
        # id(loop) / id(segment) -> the code.CheckpointedLoop / code.SegmentCall its primal made
        self.loop_nodes, self.segment_calls = {}, {}
        self.counts = counts if counts is not None else {}  # name -> places assigning it
        self.primal_names = primal_names if primal_names is not None else {}  # bx -> x
        self.top = top
        self.reads = reads if reads is not None else read_counts(function)  # name -> readers
        self.in_place = set(in_place)
        self.saves = SavePoints(namer, self.counts, self.reads)
        self.maybe_scalar_zero = set()
        self.bound_before = {}  # id(ir.If) -> the names surely bound before it
        # names a checkpointed loop carries that were unbound before it: ``defined``
        # after it, and maybe rt.UNBOUND (checkpointed_bodies.forward)
        self.unsure = set()
        self.held = frozenset()  # a loop step's state that may start rt.UNBOUND
        self.read_outside = {}  # loop variable -> read outside its loops (taped_loops.py)
        self.live_after = None  # id(loop) -> names live after it (taped_loops.py)
        self.owned = set()  # adjoints that are private accumulators: updated in place
        self.batched = set()  # owned adjoints that may be an rt.ProductSum until settled
        self.recording = False  # see nested()
        self.replayed = False  # see nested()
        self.observing = False  # see nested()
        self.fresh = set()  # adjoints holding an array only they refer to (rules.track_fresh)
        self.facts = ArrayFacts()  # arrays, matmul operands, counters (owned_adjoints.py)

    def _observation(self, stmt):
        """A statement that only observes; in a step the driver may run again,
        run only when the step first runs (a print is printed once)."""
        lines = self._primal_statement(stmt)
        if not (self.replayed or self.observing) or not _users_call(stmt.expr):
            return lines
        inside = [Line(item.stmt, None, item.adjoint, item.comment) if isinstance(item, Line)
                  else item for item in lines]  # (the line's comment goes above the if)
        return [Block(sx.if_(ast.UnaryOp(op=ast.Not(), operand=sx.rt("replaying"))), inside,
                      stmt.line)]

    def nested(self, checkpointed=None, recording=False, replayed=False, observing=False):
        """A Reverser for another generated function (a loop step, a segment);
        ``recording``: it recomputes a step for its reverse sweep, where the
        statements that only observe (``print``, ``assert``) are left out;
        ``replayed``: a checkpointed loop's step, which the driver may run again
        (or code inside one), where they run only the first time
        (``rt.replaying()``); ``observing``: a recording that may be the only run
        (a segment whose record is kept), which keeps them, as a replayed one."""
        sub = Reverser(self.function, self.active, self.namer, self.adj, self.bindings,
                       self.error, checkpointed=checkpointed, segments=self.segments,
                       counts=self.counts, primal_names=self.primal_names,
                       complex_values=self.complex_values, reads=self.reads,
                       inexact=self.inexact)
        sub.recording = recording
        sub.replayed = replayed or self.replayed
        sub.observing = observing
        sub.facts = self.facts
        return sub

    # --- primal -----------------------------------------------------------------
    def primal(self, body, defined, possibly, in_loop=False, read_after=False,
               restored=frozenset()):
        """Primal code for ``body``; ``defined``/``possibly`` are the names surely /
        possibly holding a value (updated in place).  ``in_loop``: ``body`` runs in a
        taped loop (its values go on the tape); ``read_after``: it is the body of a
        taped loop no other loop encloses, whose values may be read after it;
        ``restored``: names it rebinds whose value from before each run the reverse
        needs back (``SavePoints.block_record``, ``carry_to_record``)."""
        out = []
        saves = self.saves
        record = saves.block_record(body, read_after, restored) if in_loop else None
        for k, stmt in enumerate(body):
            if record is not None and isinstance(stmt, ir.Break):
                out.append(record)  # pushed before the loop may stop
                out.extend(saves.carried_after(record))
                record = None
            if isinstance(stmt, (ir.Assign, ir.SetItem)) and \
                    (not self.recording or self.observing):  # (a recording ran them)
                out.extend(self.bound_checks(stmt, defined))
            if isinstance(stmt, ir.Assign) and stmt.observes:
                if not self.recording or self.observing:  # print(...), assert: forward only
                    out.extend(self._observation(stmt))
            elif isinstance(stmt, (ir.Assign, ir.SetItem)):
                if id(stmt) in saves.first_writes:
                    pass  # a value its block makes afresh: the block's TapeRecord keeps it
                elif record is not None and stmt.target in defined:
                    saves.save_to_record(out, stmt, record, self.writes_in_place(stmt))
                elif record is not None and stmt.target in restored and \
                        stmt.target not in possibly:  # unbound before the loop
                    saves.carry_to_record(stmt, record)
                else:
                    self.save(out, stmt, stmt.target, defined, possibly, in_loop)
                out.extend(self._primal_statement(stmt))
                defined.add(stmt.target)
                possibly.add(stmt.target)
            elif isinstance(stmt, ir.If):
                self.bound_before[id(stmt)] = frozenset(defined)  # (for materialize)
                d1, d2 = set(defined), set(defined)
                p1, p2 = set(possibly), set(possibly)
                body1 = self.primal(stmt.body, d1, p1, in_loop)
                body2 = self.primal(stmt.orelse, d2, p2, in_loop)
                saves.keep_branch_values(stmt.body, body1, d1, p2, possibly, body[k + 1:])
                saves.keep_branch_values(stmt.orelse, body2, d2, p1, possibly, body[k + 1:])
                out.append(Block(sx.if_(stmt.test), body1, stmt.line))
                if body2:
                    out.append(Block(None, body2, stmt.line))
                defined |= d1 & d2
                possibly |= p1 | p2
            elif isinstance(stmt, (ir.For, ir.While)):
                if self.checkpointed is not None and self.checkpointed.planned(stmt):
                    out.extend(checkpointed_bodies.forward(self, stmt, defined, possibly,
                                                           in_loop))
                else:
                    out.extend(self.primal_loop(stmt, defined, possibly, in_loop))
            elif isinstance(stmt, ir.Break):
                out.append(Block(sx.if_(stmt.flag), [Line(sx.break_(), stmt.line)], stmt.line))
            elif isinstance(stmt, ir.Segment):  # checkpointed segments
                out.extend(segment_bodies.forward(self, stmt, defined, possibly, in_loop))
        if record is not None:
            out.append(record)
            out.extend(saves.carried_after(record))
        return out

    def bound_checks(self, stmt, defined, names=None):
        """``rt.check_bound(x, 'x')`` for each name ``stmt`` reads (or ``names``)
        that is not surely bound (not in ``defined``): where the function binds
        it to ``rt.UNBOUND`` on entry, the read raises Python's UnboundLocalError,
        not the placeholder's value (packaging drops the other checks)."""
        reads = ir.read_names([stmt]) if names is None else names
        unsure = [n for n in dict.fromkeys(reads) if n.isidentifier() and
                  (n not in defined or n in self.unsure)]  # ('<np>': NumPy, no variable)
        line = stmt.line if stmt is not None else None
        return [BoundCheck(sx.statement(sx.rt("check_bound", n, sx.const(n))), line, name=n)
                for n in unsure]

    def save(self, out, stmt, target, defined, possibly, in_loop):
        """Keep the value of ``target`` that ``stmt`` overwrites (SavePoints.save)."""
        self.saves.save(out, stmt, target, defined, possibly, in_loop,
                        in_place=self.writes_in_place(stmt))

    def restore(self, stmt, out):
        """Put back what :meth:`save` kept for ``stmt``."""
        self.saves.restore(stmt, out, in_place=self.writes_in_place(stmt))

    def writes_in_place(self, stmt):
        """Is ``stmt`` a subscript write into an array the function owns?"""
        return isinstance(stmt, ir.SetItem) and stmt.target in self.in_place

    def _primal_statement(self, stmt):
        if isinstance(stmt, ir.Assign) and isinstance(stmt.expr, ir.Prim):
            label = refused_for_complex(stmt.expr, [
                n for a in stmt.expr.args for n in ir.operand_names(a) if n in self.active],
                self.complex_values)
            if label is not None:
                raise self.error(UnsupportedFunctionError, f"{label} of a differentiated "
                                 "complex value: its rule is written for real input", stmt.line,
                                 construct=label, hint="take np.real / np.imag / np.abs of "
                                 "the complex value first (docs/spectral.md)")
        if isinstance(stmt, ir.SetItem):
            write = sx.subscript(stmt.target, sx.copy_tree(stmt.index.node))
            assign = Line(sx.assign(write, operand_node(stmt.value)), stmt.line)
            if self.writes_in_place(stmt):
                return [assign]
            return [Line(sx.assign(stmt.target, sx.method(stmt.target, "copy")), stmt.line),
                    assign]
        return [Line(sx.assign(stmt.target, expr_node(stmt.expr)), stmt.line)]

    def primal_loop(self, loop, defined, possibly, in_loop):
        """An ordinary (taped) loop, forward (taped_loops.primal_loop)."""
        return taped_loops.primal_loop(self, loop, defined, possibly, in_loop)

    # --- adjoint ----------------------------------------------------------------
    def adjoint(self, body, nonzero):
        """Adjoint code for ``body`` (statements in reverse order).

        ``nonzero``: adjoint names that may hold a value at the end of ``body``;
        returns (code, nonzero at the start of ``body``)."""
        out = self.saves.block_start(body)  # a block's own values first: a, b = tape.pop()
        nonzero = set(nonzero)
        self.fresh = set()
        for stmt in reversed(body):
            start = len(out)
            if isinstance(stmt, ir.Assign):
                self._adjoint_assign(stmt, out, nonzero)
                track_fresh(self.fresh, out[start:])
                continue
            if isinstance(stmt, ir.SetItem):
                self._adjoint_setitem(stmt, out, nonzero)
                track_fresh(self.fresh, out[start:])
                continue
            self.fresh = set()
            if isinstance(stmt, ir.If):
                code1, n1 = self.adjoint(stmt.body, nonzero)
                code2, n2 = self.adjoint(stmt.orelse, nonzero)
                merged = n1 | n2
                bound = self.bound_before.get(id(stmt))
                code1 += self.materialize(merged - n1, stmt.line, bound)
                code2 += self.materialize(merged - n2, stmt.line, bound)
                if code1 or code2:
                    out.append(Block(sx.if_(stmt.test), code1, stmt.line, True))
                    if code2:
                        out.append(Block(None, code2, stmt.line, True))
                nonzero = merged
            elif isinstance(stmt, (ir.For, ir.While)):
                if id(stmt) in self.loop_nodes:
                    code, nonzero = checkpointed_bodies.reverse(
                        self, self.loop_nodes[id(stmt)], nonzero)
                else:
                    code, nonzero = self.adjoint_loop(stmt, nonzero)
                out.extend(code)
            elif isinstance(stmt, ir.Segment):
                code, nonzero = segment_bodies.reverse(self, stmt, nonzero)
                out.extend(code)
            self.fresh = set()
        return out, nonzero

    def materialize(self, names, line, bound=None):
        """Zero adjoints for ``names`` (the reverse of a path that did not touch
        them).  ``bound``: the names surely bound at that point of the primal,
        where known; a variable outside it (bound by one branch of an earlier
        ``if``, or by a loop's body) is bound to ``rt.UNBOUND`` on entry, so that
        its zero reads a value on the paths that never bound it (a scalar zero
        that no later adjoint reads there, as no earlier statement mentions the
        variable on such a path)."""
        code = []
        for b in sorted(names):
            var = self.primal_of(b)
            if bound is not None and var is not None and var not in bound:
                self.saves.bind_on_entry(var)
            code.append(Line(sx.assign(b, self.zero_of(b)), line, True))
        return code

    def zero_of(self, adjoint_name):
        """How to write a zero adjoint: shaped like the variable's value at this point.

        The reverse sweep has restored the variable there, so the zero has the
        right shape even when the variable changes shape across assignments (at
        a taped loop's head too: ``taped_loops._zeroed_at_head``); a scalar
        ``0.0`` would break adjoints such as ``np.swapaxes(g, 0, 1)``."""
        var = self.primal_of(adjoint_name)
        if var is not None:
            return sx.rt("zeros_like", var)
        self.maybe_scalar_zero.add(adjoint_name)
        return sx.const(0.0)

    def primal_of(self, adjoint_name):
        return self.primal_names.get(adjoint_name)

    def make_private(self, names, nonzero, line):
        """Before a loop accumulates in place: fresh zeros, or a private copy."""
        code = []
        for b in sorted(names):
            var = self.primal_of(b)
            if b in nonzero:
                code.append(Line(sx.assign(b, sx.rt("private_adjoint", b, var)), line, True))
            else:
                code.append(Line(sx.assign(b, sx.rt("zeros_like", var)), line, True))
        return code

    def adjoint_loop(self, loop, nonzero):
        """An ordinary (taped) loop, in reverse (taped_loops.adjoint_loop)."""
        return taped_loops.adjoint_loop(self, loop, nonzero)

    def accumulate(self, name, contribution, out, nonzero, line):
        """Add ``contribution`` (an expression node, or a name) to the adjoint of ``name``."""
        b = self.adj(name)
        contribution = sx.expr(contribution)
        if self.complex_values and name not in self.complex_values and \
                not sx.all_names(contribution).isdisjoint(self.complex_values):
            # a real name's adjoint is real: the imaginary part is no derivative
            contribution = sx.rt("real_part", contribution)
        if b in nonzero and b in self.owned:
            if sx.calls_helper(contribution, runtime.matmul_adjoint_x2) and \
                    self.may_gather(name):
                # gathered a few steps at a time (rt.ProductSum)
                call = sx.rt("accumulate_matmul_adjoint_x2", b, *contribution.args,
                             **{k.arg: k.value for k in contribution.keywords})
                out.append(Line(sx.assign(b, call), line, True))
                self.batched.add(b)
                return
            if not self.may_gather(name) and negated(contribution) is not None:
                out.append(Line(sx.subtract_from(b, negated(contribution)), line, True))
                return
            out.append(Line(sx.add_to(b, contribution), line, True))
        elif b in nonzero and negated(contribution) is not None:   # b - x, not b + -x
            out.append(Line(sx.assign(b, sx.binop(b, "-", negated(contribution))), line, True))
        elif b in nonzero:
            out.append(Line(sx.assign(b, sx.binop(b, "+", contribution)), line, True))
        else:
            out.append(Line(sx.assign(b, contribution), line, True))
            nonzero.add(b)

    def may_gather(self, name):
        """May the private adjoint of ``name`` become an ``rt.ProductSum``?"""
        return name in self.facts.gathered and name not in self.in_place

    def _adjoint_assign(self, stmt, out, nonzero):
        target = stmt.target
        g = self.adj(target)
        if isinstance(stmt.expr, ir.Copy) and isinstance(stmt.expr.value, ir.Name) and \
                stmt.expr.value.id == target:
            self.restore(stmt, out)  # S_0 = S_0 (an element kept by S[1] = v): identity
            return
        if target in self.active and g in nonzero and not isinstance(stmt.expr, ir.NonDiff):
            expr = stmt.expr
            if isinstance(expr, ir.Copy):
                for name in ir.operand_names(expr.value):
                    if name in self.active:
                        self.accumulate(name, g, out, nonzero, stmt.line)
            elif isinstance(expr, ir.Prim):
                adjoint_of_primitive(self, stmt, expr, g, out, nonzero)
        nonzero.discard(g)
        self.restore(stmt, out)

    def _adjoint_setitem(self, stmt, out, nonzero):
        g = self.adj(stmt.target)
        if stmt.target in self.active and g in nonzero:
            value = stmt.value

            def region():
                return sx.subscript(g, sx.copy_tree(stmt.index.node))
            if isinstance(value, ir.Name) and value.id in self.active:
                if stmt.target not in self.inexact or value.id in self.complex_values:
                    # maybe an integer array: it truncates what it stores, and the helper
                    # checks (inexact_arrays.py); or a complex value: a real array keeps
                    # its real part, and the helper takes the real part of its adjoint
                    part = sx.rt("setitem_adjoint_value", g, stmt.index.value(), value.id,
                                 stmt.target)
                elif g in self.owned and stmt.value_fits:  # a private array: bS[t], copied
                    # when it becomes the value's adjoint (bS[t] is zeroed next)
                    part = region() if self.adj(value.id) in nonzero else \
                        sx.method(region(), "copy")
                else:
                    part = sx.rt("setitem_adjoint_value", g, stmt.index.value(), value.id)
                self.accumulate(value.id, part, out, nonzero, stmt.line)
            if g in self.owned:  # a private array (a SetItem's target): bS[t] = 0.0
                out.append(Line(sx.assign(region(), sx.const(0.0)), stmt.line, True))
            else:
                out.append(Line(sx.assign(g, sx.rt("setitem_adjoint_array", g,
                                                   stmt.index.value())), stmt.line, True))
        self.restore(stmt, out)

