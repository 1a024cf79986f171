"""Checkpointed loops: each loop becomes a primal step, an adjoint step and
calls to the runtime driver (``rt.CheckpointedLoop``) that runs the schedule.

- the primal step runs one iteration with no tape;
- the adjoint step re-records one iteration and reverses it; it is produced by
  the same :class:`~tangent_ckpt.compiler.transform.reverse.Reverser` that differentiates
  function bodies, applied to the loop body;
- ``loopN.forward(...)`` runs all steps and stores snapshots,
  ``loopN.reverse(...)`` restores, advances and reverses on the schedule;
- ``if loopN.n: t = loopN.last_index`` after the forward call gives the loop
  variable its value after the loop when later code reads it (a name the
  function binds elsewhere too is bound in the body instead, from the loop's own
  index: lower/loop_statements.py, and carried).

Adjoints of the invariants, and of carried arrays the body changes only by
subscript writes (``u[1:-1] = ...``), are private buffers made once before
``loopN.reverse`` (``rt.private_adjoint``): every adjoint step zeroes and adds
to them in place (``bu[1:-1] = 0.0``, ``bu[2:] += g``) and hands them on.

Loops whose trip count is known when they start use the chosen schedule
(Revolve by default); ``while`` loops and loops with ``break`` use the online
schedule.  Loops nested in a checkpointed loop are taped inside its adjoint
step, or checkpointed themselves with ``nested=True``.
"""

import ast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, Line
from tangent_ckpt.errors import OptionError
from tangent_ckpt.compiler.package.driver_calls import budgeted, driver_constructor, \
    random_draws, schedule_text
from tangent_ckpt.compiler.package.hoist import transpose_invariants
from tangent_ckpt.compiler.package.loop_state import carried_state, header_reads, \
    target_read_after
from tangent_ckpt.compiler.package.next_state import drop_idle_saves, use_next_state
from tangent_ckpt.compiler.package.saves import finish_saves, journal_saves, resolve_saves
from tangent_ckpt.compiler.package.written_rows import rows_written_once
from tangent_ckpt.compiler.transform.owned_adjoints import private_carried


def mark_loops(function, options, plan=None):
    """Mark the loops to checkpoint; returns the handler the reverse pass calls.
    ``plan``: the name of the auto mode's ``rt.MemoryPlan``, or None."""
    if not options.checkpoint:  # only loops the user marked (tc.checkpointed_loop)
        marked = any(isinstance(s, (ir.For, ir.While)) and s.checkpoint
                     for s in ir.walk(function.body))
        if not marked and not options.checkpoint_given and options.checkpoint_only():
            given = [f"{name}=" for name in options.checkpoint_only()]
            verb = "acts" if len(given) == 1 else "act"
            raise OptionError(f"{', '.join(given)} only {verb} on checkpointed loops, and "
                              "without checkpoint= no loop is checkpointed (the function "
                              "marks none with tc.checkpointed_loop): pass checkpoint=True "
                              "(or checkpoint='auto' with memory_budget=), or use "
                              "tc.grad_with_checkpointing")
        return LoopHandler(function, options, plan) if marked else None
    _mark(function.body, options.nested, inside_loop=False)
    return LoopHandler(function, options, plan)


def _mark(body, nested, inside_loop):
    for stmt in body:
        if isinstance(stmt, ir.If):
            _mark(stmt.body, nested, inside_loop)
            _mark(stmt.orelse, nested, inside_loop)
        elif isinstance(stmt, (ir.For, ir.While)):
            stmt.checkpoint = nested or not inside_loop
            _mark(stmt.body, nested, inside_loop=True)


# the functions a checkpointed loop named ``loop4`` defines: loop4_step, ...
LOOP_FUNCTIONS = ("_step", "_cond", "_adjoint", "_segment", "_probe")
# the parameters its step functions take besides the user's variables
STEP_PARAMETERS = ("state", "next_state", "bstate", "steps", "writes")


class LoopHandler:
    """Called by the Reverser for every loop marked ``checkpoint``."""

    def __init__(self, function, options, plan=None):
        self.function = function
        self.options = options
        self.plan = plan  # checkpoint="auto": the name of the gradient's rt.MemoryPlan
        self.definitions = []  # the step functions, printed before the gradient
        self.param = None  # {"state": the name the step functions give it, ...}
        self._header_reads = None  # what each statement's header reads (loop_state.py)
        self.in_place = {}  # id(loop) -> carried arrays its steps write in place (written_rows.py)
        # id(loop) -> carried arrays whose adjoints stay one private buffer across the
        # adjoint steps (owned_adjoints.private_carried; includes ``in_place``)
        self.private = {}

    def _name_parameters(self, rev):
        """Choose once the names of the step functions' own parameters (``state``
        unless the user's code has a ``state``)."""
        if self.param is None:
            self.param = {p: rev.namer.fresh(p) for p in STEP_PARAMETERS}

    # --- the parts of one loop -----------------------------------------------------
    def primal(self, rev, loop, defined, possibly, in_loop):
        if self._header_reads is None:
            self._header_reads = header_reads(self.function)
        facts = carried_state(self.function, loop, defined, rev.bindings, self._header_reads)
        active_carried = [c for c in facts.carried if c in rev.active]
        active_invariants = [v for v in facts.invariants if v in rev.active]
        if not facts.carried or (not active_carried and not active_invariants):
            # nothing to differentiate, or nothing the loop computes is read after
            # it (no state to checkpoint): an ordinary loop, and so are the loops
            # inside it (a checkpointed loop inside a taped one would be reversed
            # once per outer iteration from the last forward only)
            loop.record.plain = True
            for inner in ir.walk(loop.body):
                if isinstance(inner, (ir.For, ir.While)):
                    inner.checkpoint = False
            return rev.primal_loop(loop, defined, possibly, in_loop)
        loop.record.plain = False
        self._name_parameters(rev)
        name = rev.namer.fresh_family(f"loop{loop.line}", LOOP_FUNCTIONS)
        loop.record.name = name
        index = loop.target if isinstance(loop, ir.For) else rev.namer.fresh("k")
        body = [s for s in loop.body if not isinstance(s, ir.Break)]
        carried = facts.carried
        args = facts.invariants
        schedule = schedule_text(loop, self.options, self.plan)
        out = [Comment(f"loop at line {loop.line}: `{loop.header}` is checkpointed"),
               Comment(f"carried: {', '.join(carried) or '-'}; "
                       f"invariant: {', '.join(args) or '-'}; {schedule}")]
        empty = set()  # first assigned inside the loop: the state starts as None
        for c in carried:
            if c not in possibly and not in_loop:
                empty.add(c)  # passed as None; nothing before the loop reads it: no save
            elif c not in possibly:  # in a loop its tape save needs a value: None
                out.append(Line(sx.assign(c, sx.const(None)), loop.line))
                defined.add(c)
                possibly.add(c)
            elif c not in defined and c not in rev.saves.unbound:
                rev.saves.unbound.append(c)  # bound on some paths only: None on entry
        # the values the loop overwrites are kept for the code before it (reverse order)
        loop.record.carried_saves = []
        for c in carried:
            if c in empty:
                continue
            fake = ir.Assign(c, ir.Copy(ir.Const(None)), loop.line)
            rev.save(out, fake, c, defined, possibly, in_loop)
            loop.record.carried_saves.append(fake)
        in_place = [] if in_loop else self._in_place_arrays(rev, loop, carried)
        self.in_place[id(loop)] = in_place
        self.private[id(loop)] = private_carried(loop, active_carried, rev.facts)
        step = self._primal_step(rev, loop, name, index, body, carried, args, in_place)
        loop.record.transposes = {}  # {W: W_T}: made once before the reverse sweep (hoist.py)
        adjoint = self._adjoint_step(rev, loop, name, index, body, carried, args,
                                     active_carried, active_invariants)
        self.definitions.extend([step, adjoint])
        segmented = self.options.memory_budget is not None and isinstance(loop, ir.For) \
            and not loop.break_flag and self.options.schedule == "revolve"
        if segmented:
            self.definitions.append(self._taped_segment(rev, loop, name, index, body, carried,
                                                        args, active_carried, active_invariants))
        probe = budgeted(loop, self.options, self.plan)
        if probe:
            self.definitions.append(self._adjoint_probe(loop, name, index, carried, args,
                                                        active_carried, active_invariants))
        ctor = driver_constructor(loop, name, self.options, self.plan,
                                  self.in_place.get(id(loop)), segmented, probe,
                                  random_draws(loop.body, loop.line, rev.bindings, rev.namer,
                                               self.function.filename,
                                               test=loop.test if isinstance(loop, ir.While)
                                               else None))
        out.append(Line(sx.assign(name, ctor), loop.line))
        state = sx.pack([sx.const(None) if c in empty else c for c in carried])
        if isinstance(loop, ir.While) or loop.break_flag:
            cond = self._condition(rev, loop, name, index, carried, args)
            self.definitions.append(cond)
            call = sx.method(name, "forward_while", f"{name}_cond", f"{name}_step", state, *args)
        else:
            journal = [sx.attr(name, "writes")] if in_place else []
            call = sx.method(name, "forward", f"{name}_step", state, *args, *journal)
        out.append(Line(sx.assign(list(carried), call), loop.line))
        defined.update(carried)
        possibly.update(carried)
        if target_read_after(self.function, loop):
            out += self._rebind_target(rev, loop, name, defined, possibly, in_loop)
        loop.record.adjoint_names = [rev.adj(c) for c in active_carried] + \
            [rev.adj(v) for v in active_invariants]
        loop.record.reverse_args = args
        return out

    @staticmethod
    def _rebind_target(rev, loop, name, defined, possibly, in_loop):
        """``if loopN.n: t = loopN.last_index``: the loop variable after the loop,
        as Python leaves it (the steps ran in functions of their own).  Its value
        from before is kept for the reverse sweep of the code before the loop."""
        target = loop.target
        out = []
        fake = ir.Assign(target, ir.Copy(ir.Const(None)), loop.line)
        rev.save(out, fake, target, defined, possibly, in_loop)
        loop.record.carried_saves.append(fake)
        rebind = Line(sx.assign(target, sx.attr(name, "last_index")),
                      comment=f"`{target}` after the loop: the index of its last step")
        out.append(Block(sx.if_(sx.attr(name, "n")), [rebind], loop.line))
        possibly.add(target)
        return out

    def _in_place_arrays(self, rev, loop, carried):
        """Carried arrays the steps write in place, their snapshots kept by the
        driver's journal: RAM snapshots of a for loop on a fixed schedule only."""
        o = loop.options or self.options
        if not rev.top or o.memory_budget or self.plan or o.disk_snapshots or \
                o.costs is not None or o.schedule == "online":
            return []
        return rows_written_once(loop, carried, rev.in_place)

    def summaries(self, function):
        """(line, "Revolve schedule, 10 snapshots" or "taped") for every loop of
        ``function``, once packaged: the header of a gradient's notebook display."""
        return [(loop.line, schedule_text(loop, self.options, self.plan)
                 if loop.record.name and not loop.record.plain else "taped")
                for loop in ir.walk(function.body) if isinstance(loop, (ir.For, ir.While))]

    def _adjoint_probe(self, loop, name, index, carried, args, active_carried,
                       active_invariants):
        """One adjoint step from zero adjoints (shaped like the state after the
        step): a memory budget measures it on step 0 before the schedule is planned
        and throws its result away."""
        p = self.param
        if len(carried) == 1:
            after = {carried[0]: sx.name(p["next_state"])}
        else:
            after = {c: sx.subscript(p["next_state"], sx.const(i)) for i, c in enumerate(carried)}
        zeros = [sx.rt("zeros_like", after[c]) for c in active_carried] + \
            [sx.rt("zeros_like", v) for v in active_invariants]
        transposed = [sx.attr(a, "T") for a in args if a in loop.record.transposes]
        state = carried[0] if len(carried) == 1 else p["state"]
        states = [state, p["next_state"]] if loop.record.next_state else [state]
        call = sx.call(f"{name}_adjoint", index, *states, p["bstate"], *args, *transposed)
        lines = [Comment(f"measure one adjoint step of the loop at line {loop.line} "
                         "(memory budget)"),
                 Line(sx.assign(p["bstate"], sx.pack(zeros))),
                 Line(sx.return_([call]))]
        params = self._signature(index, carried, [p["next_state"]], args)
        return [Block(sx.def_(f"{name}_probe", params), lines)]

    def _signature(self, index, carried, first_extra, args):
        params = [index]
        params.append(carried[0] if len(carried) == 1 else self.param["state"])
        params += first_extra
        params += list(args)
        return params

    def _unpack_state(self, carried, line):
        if len(carried) == 1:
            return []
        return [Line(sx.assign(list(carried), self.param["state"]))]

    def _primal_step(self, rev, loop, name, index, body, carried, args, in_place=()):
        sub = rev.nested()
        sub.in_place = set(in_place)
        defined = set(carried) | set(args) | {index} | set(rev.bindings)
        code = sub.primal(body, set(defined), set(defined))
        if in_place:
            code = journal_saves(code, self.param["writes"])
            args = list(args) + [self.param["writes"]]
        code = resolve_saves(code, set())
        lines = [Comment(f"one iteration of the loop at line {loop.line}, no tape")]
        lines += self._unpack_state(carried, loop.line)
        lines += code
        lines.append(Line(sx.return_([sx.pack(carried)])))
        return [Block(sx.def_(f"{name}_step", self._signature(index, carried, [], args)), lines)]

    def _condition(self, rev, loop, name, index, carried, args):
        tests = []
        if isinstance(loop, ir.While):
            tests.append(sx.copy_tree(loop.test.node))
        if loop.break_flag:
            tests.append(sx.not_(loop.break_flag))
        lines = self._unpack_state(carried, loop.line)
        lines.append(Line(sx.return_([sx.and_(tests)]), loop.line))
        return [Block(sx.def_(f"{name}_cond", self._signature(index, carried, [], args)), lines)]

    def _adjoint_step(self, rev, loop, name, index, body, carried, args, active_carried,
                      active_invariants):
        """Reverse one iteration (what the schedule calls per step).  It re-runs
        only what the reverse sweep reads of the iteration, and starts from the
        states before and after it when a carried variable's value after the
        step is read and its last assignment can take that state (see
        next_state.py)."""
        handler = self if self.options.nested else None
        defined = set(carried) | set(args) | {index} | set(rev.bindings)
        line = loop.line

        def header(after):
            p = self.param
            extra = [p["bstate"]] if not after else \
                [after[carried[0]] if len(carried) == 1 else p["next_state"], p["bstate"]]
            params = self._signature(index, carried, extra, self._reverse_args(loop, args))
            return sx.def_(f"{name}_adjoint", params)

        def comment(after):
            if not after:
                return f"re-record one iteration of the loop at line {line}, then reverse it"
            return (f"reverse one iteration of the loop at line {line} from the states before "
                    f"and after it\n({', '.join(after.values())}); only what the reverse sweep "
                    "reads is recomputed")

        reserved = {index, self.param["state"], self.param["next_state"], self.param["bstate"]} \
            | set(carried) | set(args)
        in_place = self.in_place.get(id(loop), [])
        blocks, after = self._reverse_function(
            rev, handler, body, defined, carried, active_carried, active_invariants,
            header, comment, next_state=None if in_place else reserved,
            transposes=(args, loop.record.transposes, True), in_place=in_place,
            private=self.private[id(loop)])
        loop.record.next_state = bool(after)
        return blocks

    @staticmethod
    def _reverse_args(loop, args):
        """The invariants, then the transposed copies the reverse sweep reads."""
        return list(args) + [loop.record.transposes[a] for a in args
                             if a in loop.record.transposes]

    def _taped_segment(self, rev, loop, name, index, body, carried, args, active_carried,
                       active_invariants):
        """Record a run of steps with a tape, then reverse them: what a memory budget
        buys when it cannot hold every state (see CheckpointedLoop.taped_segment)."""
        segment = ir.For(index, [], body, loop.line, header=loop.header)
        segment.steps_name = self.param["steps"]
        defined = set(carried) | set(args) | set(rev.bindings)
        params = self._signature(self.param["steps"], carried, [self.param["bstate"]],
                                 self._reverse_args(loop, args))
        return self._reverse_function(
            rev, None, [segment], defined, carried, active_carried, active_invariants,
            lambda _: sx.def_(f"{name}_segment", params),
            lambda _: f"record the given steps of the loop at line {loop.line} on a tape, "
            "then reverse them", transposes=(args, loop.record.transposes, False),
            private=self.private[id(loop)])[0]

    def _reverse_function(self, rev, handler, body, defined, carried, active_carried,
                          active_invariants, header, comment, next_state=None, transposes=None,
                          in_place=(), private=()):
        """A function that runs ``body`` forward, then its adjoint, threading the
        adjoints of the carried state and of the invariants through ``bstate``.

        ``next_state`` (the parameter names of the function, or None): try to
        start from the state after ``body`` too.  Returns ``(blocks, after)``:
        ``after`` maps the carried variables taken from that state to their
        parameters (empty: the function re-records ``body`` whole).
        ``header`` and ``comment`` are called with ``after``.
        ``transposes``: ``(invariants, {W: W_T}, grow)`` for hoist.py.
        ``in_place``: carried arrays written in place; ``private``: carried arrays
        whose adjoints are private buffers (made so before the reverse sweep),
        zeroed and added to in place."""
        sub = rev.nested(handler, recording=True)
        sub.in_place = set(in_place)
        primal = sub.primal(body, set(defined), set(defined))
        seeds = [rev.adj(c) for c in active_carried] + [rev.adj(v) for v in active_invariants]
        sub.owned = {rev.adj(v) for v in active_invariants}  # private: the driver threads them
        sub.owned |= {rev.adj(c) for c in private}
        adjoint, nonzero = sub.adjoint(body, set(seeds))
        results = [sx.name(rev.adj(c)) if rev.adj(c) in nonzero else sx.rt("zeros_like", c)
                   for c in active_carried + active_invariants]
        ret = Line(sx.return_(results))
        primal, adjoint, needed = finish_saves(primal, adjoint, ret)
        if transposes is not None:
            invariants, names, grow = transposes
            adjoint = transpose_invariants(adjoint, invariants, names, rev.namer.fresh, grow)
        after = {}
        if next_state is not None:
            primal, after = use_next_state(primal, adjoint, ret, carried, reserved=next_state)
            primal, adjoint = drop_idle_saves(primal, adjoint)
        lines = [Comment(text) for text in comment(after).split("\n")]
        lines += self._unpack_state(carried, None)
        if after and len(carried) > 1:
            if len(after) == len(carried):
                lines.append(Line(sx.assign([after[c] for c in carried],
                                            self.param["next_state"])))
            else:
                lines += [Line(sx.assign(after[c], sx.subscript(self.param["next_state"],
                                                                sx.const(carried.index(c)))))
                          for c in carried if c in after]
        lines.append(Line(sx.assign(list(seeds), self.param["bstate"])))
        lines += sub.saves.entry_lines(needed)
        if sub.saves.tape is not None:
            lines.append(Line(sx.assign(sub.saves.tape, ast.List(elts=[], ctx=ast.Load()))))
        lines += primal + adjoint
        lines.append(ret)
        return [Block(header(after), lines)], after

    def adjoint(self, rev, loop, nonzero):
        if loop.record.plain:
            return rev.adjoint_loop(loop, nonzero)
        nonzero = set(nonzero)
        out = []
        record = loop.record
        names = record.adjoint_names
        invariants = {rev.adj(v) for v in record.reverse_args if v in rev.active}
        invariants |= {rev.adj(c) for c in self.private.get(id(loop), ())}
        out += rev.make_private(invariants - rev.owned, nonzero, loop.line)
        out += rev.materialize([b for b in names if b not in nonzero and b not in invariants],
                               loop.line)
        for a in record.reverse_args:
            if a in record.transposes:
                out.append(Line(sx.assign(record.transposes[a], sx.rt("transposed", a)), loop.line,
                                True, comment=f"{a}.T in row order, made once for every step's "
                                "adjoint"))
        call = sx.method(record.name, "reverse", f"{record.name}_adjoint", sx.pack(names),
                         *self._reverse_args(loop, record.reverse_args))
        out.append(Line(sx.assign(list(names), call), loop.line, True))
        nonzero.update(names)
        for fake in reversed(record.carried_saves):
            rev.restore(fake, out)
        # adjoints of carried variables that are not active stay as they were
        return out, nonzero
