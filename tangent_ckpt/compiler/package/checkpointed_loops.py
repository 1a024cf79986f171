"""Checkpointed loops: each loop becomes a primal step, an adjoint step and
calls to the runtime driver (``rt.CheckpointedLoop``) that runs the schedule.

- the primal step runs one iteration with no tape;
- the adjoint step re-records one iteration and reverses it; its body is
  produced by the same :class:`~tangent_ckpt.compiler.transform.reverse.Reverser`
  that differentiates function bodies, applied to the loop body;
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

This runs after the transform, on its output: the transform
(``transform/checkpointed_bodies.py``) hands each loop over as a
``code.CheckpointedLoop`` (its facts, the bodies of its steps with the saves still
marked, what the enclosing code keeps around the calls) and marks the places of
its driver calls with ``code.DriverCall``; :func:`package_loops` writes the
functions and the calls.  Which loops are checkpointed was planned before the
transform (``loop_plans.py``).
"""

import ast
import dataclasses

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Comment, DriverCall, Line, SegmentCall
from tangent_ckpt.compiler.package.checkpointed_segments import SegmentPackage
from tangent_ckpt.compiler.package.driver_calls import budgeted, driver_constructor, \
    random_draws, schedule_text
from tangent_ckpt.compiler.package.hoist import transpose_invariants
from tangent_ckpt.compiler.package.next_state import drop_idle_saves, use_next_state
from tangent_ckpt.compiler.package.saves import finish_saves, journal_saves, \
    keep_bound_checks, resolve_saves


def package_loops(function, sweeps, options, plan, bindings, namer):
    """Package the checkpointed loops and segments of a reverse transform's
    :class:`Sweeps`: gives ``(sweeps, package)``, the sweeps with each
    ``code.DriverCall`` and ``code.SegmentCall`` written out, and the
    :class:`LoopPackage` (``helpers``: the functions they call, printed before
    the gradient; ``summaries``)."""
    segments = SegmentPackage(function, plan, bindings, namer)
    for node in sweeps.segments:  # inner segments first; they hold no loop's calls
        segments.add(node)
    package = LoopPackage(function, options, plan, bindings, namer, segments)
    for node in sweeps.loops:  # inner loops first: their calls are in the outer steps
        package.add(node)
    return dataclasses.replace(sweeps, primal=package.expand(sweeps.primal),
                               adjoint=package.expand(sweeps.adjoint)), package


@dataclasses.dataclass
class _Packaged:
    """What packaging decided about one loop while writing its adjoint step."""
    transposes: dict  # {W: W_T}: made once before the reverse sweep (hoist.py)
    next_state: bool  # the adjoint step also takes the state after the step


class LoopPackage:
    """The step functions and driver calls of one compile's checkpointed loops."""

    def __init__(self, function, options, plan, bindings, namer, segments):
        self.function = function
        self.options = options
        self.plan = plan  # checkpoint="auto": the name of the gradient's rt.MemoryPlan
        self.bindings = bindings
        self.namer = namer
        self.segments = segments  # the SegmentPackage: the calls of segments in the steps
        self.definitions = []  # the step functions, printed before the gradient
        self._packaged = {}  # id(node) -> _Packaged
        self._nodes = []  # the code.CheckpointedLoop nodes packaged

    def add(self, node):
        """Write the functions of ``node`` (an ``code.CheckpointedLoop``)."""
        loop = node.loop
        packaged = _Packaged({}, False)
        self._packaged[id(node)] = packaged
        self._nodes.append(node)
        step = self._primal_step(node)
        adjoint = self._adjoint_step(node, packaged)
        self.definitions.extend([step, adjoint])
        if node.taped_segment is not None:
            self.definitions.append(self._taped_segment(node, packaged))
        if budgeted(loop, self.options, self.plan):
            self.definitions.append(self._adjoint_probe(node, packaged))
        if isinstance(loop, ir.While) or loop.break_flag:
            self.definitions.append(self._condition(node))

    @property
    def helpers(self):
        """The functions the gradient calls through the drivers: the segments'
        first, then the loops'."""
        return self.segments.definitions + self.definitions

    def expand(self, items):
        """``items`` with each ``code.DriverCall`` and ``code.SegmentCall`` written out
        (inside blocks too)."""
        out = []
        for item in items:
            if isinstance(item, DriverCall):
                out += self._reverse_call(item.node) if item.reverse else \
                    self._forward_call(item.node)
            elif isinstance(item, SegmentCall):
                out += self.segments.expand([item])
            else:
                if isinstance(item, Block):
                    item.body = self.expand(item.body)
                out.append(item)
        return out

    def summaries(self, function):
        """(line, "Revolve schedule, 10 snapshots" or "taped") for every loop of
        ``function``, once packaged: the header of a gradient's notebook display."""
        checkpointed = {id(node.loop) for node in self._nodes}
        return [(loop.line, schedule_text(loop, self.options, self.plan)
                 if id(loop) in checkpointed else "taped")
                for loop in ir.walk(function.body) if isinstance(loop, (ir.For, ir.While))]

    # --- the calls in the enclosing code -------------------------------------------
    def _forward_call(self, node):
        loop, name, carried, args = node.loop, node.name, node.carried, node.invariants
        schedule = schedule_text(loop, self.options, self.plan)
        out = [Comment(f"loop at line {loop.line}: `{loop.header}` is checkpointed"),
               Comment(f"carried: {', '.join(carried) or '-'}; "
                       f"invariant: {', '.join(args) or '-'}; {schedule}")]
        out += node.enter
        random = random_draws(loop.body, loop.line, self.bindings, self.namer,
                              self.function.filename,
                              test=loop.test if isinstance(loop, ir.While) else None,
                              carried=carried)
        ctor = driver_constructor(loop, name, self.options, self.plan, node.in_place,
                                  node.taped_segment is not None,
                                  budgeted(loop, self.options, self.plan), random,
                                  steps=node.steps,
                                  next_state=self._packaged[id(node)].next_state)
        out.append(Line(sx.assign(name, ctor), loop.line))
        state = sx.pack([sx.dotted("rt.UNBOUND") if c in node.empty else c for c in carried])
        if isinstance(loop, ir.While) or loop.break_flag:
            call = sx.method(name, "forward_while", f"{name}_cond", f"{name}_step", state, *args)
        else:
            journal = [sx.attr(name, "writes")] if node.in_place else []
            call = sx.method(name, "forward", f"{name}_step", state, *args, *journal)
        out.append(Line(sx.assign(list(carried), call), loop.line))
        if node.rebind_target:
            out += node.target_saves
            out.append(self._rebind_target(node))
        return out

    @staticmethod
    def _rebind_target(node):
        """``if loopN.n: t = loopN.last_index``: the loop variable after the loop,
        as Python leaves it (the steps ran in functions of their own).  Its value
        from before was kept for the reverse sweep of the code before the loop."""
        target = node.loop.target
        rebind = Line(sx.assign(target, sx.attr(node.name, "last_index")),
                      comment=f"`{target}` after the loop: the index of its last step")
        return Block(sx.if_(sx.attr(node.name, "n")), [rebind], node.loop.line)

    def _reverse_call(self, node):
        line = node.loop.line
        transposes = self._packaged[id(node)].transposes
        out = []
        for a in node.invariants:
            if a in transposes:
                out.append(Line(sx.assign(transposes[a], sx.rt("transposed", a)), line, True,
                                comment=f"{a}.T in row order, made once for every step's "
                                "adjoint"))
        call = sx.method(node.name, "reverse", f"{node.name}_adjoint", sx.pack(node.adjoint_names),
                         *self._reverse_args(node))
        out.append(Line(sx.assign(list(node.adjoint_names), call), line, True))
        return out

    def _reverse_args(self, node):
        """The invariants, then the transposed copies the reverse sweep reads."""
        transposes = self._packaged[id(node)].transposes
        return list(node.invariants) + [transposes[a] for a in node.invariants
                                        if a in transposes]

    # --- the step functions --------------------------------------------------------
    def _signature(self, node, first_extra, args, index=None):
        params = [node.index if index is None else index]
        params.append(node.carried[0] if len(node.carried) == 1 else node.params["state"])
        params += first_extra
        params += list(args)
        return params

    @staticmethod
    def _unpack_state(node):
        if len(node.carried) == 1:
            return []
        return [Line(sx.assign(list(node.carried), node.params["state"]))]

    def _primal_step(self, node):
        code = self.expand(node.step)
        args = node.invariants
        if node.in_place:
            code = journal_saves(code, node.params["writes"])
            args = list(args) + [node.params["writes"]]
        code = keep_bound_checks(resolve_saves(code, set()), node.unsure)
        lines = [Comment(f"one iteration of the loop at line {node.loop.line}, no tape")]
        lines += self._unpack_state(node)
        lines += code
        lines.append(Line(sx.return_([sx.pack(node.carried)])))
        return [Block(sx.def_(f"{node.name}_step", self._signature(node, [], args)), lines)]

    def _condition(self, node):
        loop = node.loop
        tests = []
        if isinstance(loop, ir.While):
            tests.append(sx.copy_tree(loop.test.node))
        if loop.break_flag:
            tests.append(sx.not_(loop.break_flag))
        lines = self._unpack_state(node)
        lines.append(Line(sx.return_([sx.and_(tests)]), loop.line))
        return [Block(sx.def_(f"{node.name}_cond", self._signature(node, [], node.invariants)),
                      lines)]

    def _adjoint_step(self, node, packaged):
        """Reverse one iteration (what the schedule calls per step).  It re-runs
        only what the reverse sweep reads of the iteration, and starts from the
        states before and after it when a carried variable's value after the
        step is read and its last assignment can take that state (see
        next_state.py)."""
        p, carried, line = node.params, node.carried, node.loop.line

        def header(after):
            extra = [p["bstate"]] if not after else \
                [after[carried[0]] if len(carried) == 1 else p["next_state"], p["bstate"]]
            params = self._signature(node, extra, self._reverse_args(node))
            return sx.def_(f"{node.name}_adjoint", params)

        def comment(after):
            if not after:
                return f"re-record one iteration of the loop at line {line}, then reverse it"
            return (f"reverse one iteration of the loop at line {line} from the states before "
                    f"and after it\n({', '.join(after.values())}); only what the reverse sweep "
                    "reads is recomputed")

        reserved = {node.index, p["state"], p["next_state"], p["bstate"]} \
            | set(carried) | set(node.invariants)
        blocks, after = self._forward_then_reverse(
            node, node.adjoint_step, header, comment, packaged.transposes, True,
            next_state=None if node.in_place else reserved)
        packaged.next_state = bool(after)
        return blocks

    def _taped_segment(self, node, packaged):
        """Record a run of steps with a tape, then reverse them: what a memory budget
        buys when it cannot hold every state (see CheckpointedLoop.taped_segment)."""
        p = node.params
        params = self._signature(node, [p["bstate"]], self._reverse_args(node),
                                 index=p["steps"])
        return self._forward_then_reverse(
            node, node.taped_segment, lambda _: sx.def_(f"{node.name}_segment", params),
            lambda _: f"record the given steps of the loop at line {node.loop.line} on a tape, "
            "then reverse them", packaged.transposes, False)[0]

    def _adjoint_probe(self, node, packaged):
        """One adjoint step from zero adjoints (shaped like the state after the
        step): a memory budget measures it on step 0 before the schedule is planned
        and throws its result away."""
        p, carried, args = node.params, node.carried, node.invariants
        if len(carried) == 1:
            after = {carried[0]: sx.name(p["next_state"])}
        else:
            after = {c: sx.subscript(p["next_state"], sx.const(i)) for i, c in enumerate(carried)}
        zeros = [sx.rt("zeros_like", after[c]) for c in node.active_carried] + \
            [sx.rt("zeros_like", v) for v in node.active_invariants]
        transposed = [sx.attr(a, "T") for a in args if a in packaged.transposes]
        state = carried[0] if len(carried) == 1 else p["state"]
        states = [state, p["next_state"]] if packaged.next_state else [state]
        call = sx.call(f"{node.name}_adjoint", node.index, *states, p["bstate"], *args,
                       *transposed)
        lines = [Comment(f"measure one adjoint step of the loop at line {node.loop.line} "
                         "(memory budget)"),
                 Line(sx.assign(p["bstate"], sx.pack(zeros))),
                 Line(sx.return_([call]))]
        params = self._signature(node, [p["next_state"]], args)
        return [Block(sx.def_(f"{node.name}_probe", params), lines)]

    def _forward_then_reverse(self, node, body, header, comment, transposes, grow,
                          next_state=None):
        """The function that runs ``body`` (an ``code.ReversedBody``) forward, then its
        adjoint, threading the adjoints of the carried state and of the invariants
        through ``bstate``.

        ``next_state`` (the parameter names of the function, or None): try to
        start from the state after ``body`` too.  Returns ``(blocks, after)``:
        ``after`` maps the carried variables taken from that state to their
        parameters (empty: the function re-records ``body`` whole).
        ``header`` and ``comment`` are called with ``after``; ``transposes``
        ({W: W_T}) and ``grow`` are for hoist.py."""
        carried, p = node.carried, node.params
        ret = Line(sx.return_(body.results))
        primal, adjoint, needed = finish_saves(self.expand(body.primal),
                                               self.expand(body.adjoint), ret)
        primal = keep_bound_checks(primal, body.saves.maybe_unbound(needed))
        adjoint = transpose_invariants(adjoint, node.invariants, transposes, self.namer.fresh,
                                       grow)
        after = {}
        if next_state is not None:
            primal, after = use_next_state(primal, adjoint, ret, carried, reserved=next_state)
            primal, adjoint = drop_idle_saves(primal, adjoint)
        lines = [Comment(text) for text in comment(after).split("\n")]
        lines += self._unpack_state(node)
        if after and len(carried) > 1:
            if len(after) == len(carried):
                lines.append(Line(sx.assign([after[c] for c in carried], p["next_state"])))
            else:
                lines += [Line(sx.assign(after[c], sx.subscript(p["next_state"],
                                                                sx.const(carried.index(c)))))
                          for c in carried if c in after]
        lines.append(Line(sx.assign(list(body.seeds), p["bstate"])))
        lines += body.saves.entry_lines(needed)
        if body.saves.tape is not None:
            lines.append(Line(sx.assign(body.saves.tape, ast.List(elts=[], ctx=ast.Load()))))
        lines += primal + adjoint
        lines.append(ret)
        return [Block(header(after), lines)], after
