"""Transform: a checkpointed loop, reversed into the pieces packaging assembles.

For each loop its :class:`~tangent_ckpt.compiler.ir.LoopPlan` names (decided
before the transform, from the options), the Reverser gives the loop to
:func:`forward`, which makes an :class:`~tangent_ckpt.compiler.code.CheckpointedLoop`:

- the loop's facts: its carried state and invariants, the active ones, the
  names of its functions and of their parameters;
- the body of its primal step, from a Reverser of its own (no tape);
- the body of its adjoint step, from another, recomputing one iteration with
  its tape and then reversing it (:class:`~tangent_ckpt.compiler.code.ReversedBody`),
  and the same for a taped run of steps where the plan asks for one;
- what the enclosing code keeps around the driver calls: the values the loop
  overwrites (saved before, put back after the reverse call), the private
  adjoints and zeros the reverse call starts from.

The sweeps hold ``DriverCall(node)`` where the forward call goes and
``DriverCall(node, reverse=True)`` where the reverse call goes;
``package/checkpointed_loops.py`` turns them into the step functions and the
calls of ``rt.CheckpointedLoop``.  Nothing here sees the options.
"""

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import CheckpointedLoop, DriverCall, Line, ReversedBody
from tangent_ckpt.compiler.transform.owned_adjoints import private_carried

# the functions a checkpointed loop named ``loop4`` defines: loop4_step, ...
LOOP_FUNCTIONS = ("_step", "_cond", "_adjoint", "_segment", "_probe")
# the parameters its step functions take besides the user's variables
STEP_PARAMETERS = ("state", "next_state", "bstate", "steps", "writes")


class CheckpointedLoops:
    """The checkpointed loops of one compile: shared by the Reversers that may
    checkpoint a loop (the gradient function's and each adjoint step's)."""

    def __init__(self, plans):
        self.plans = dict(plans)  # id(loop) -> ir.LoopPlan; a loop with nothing to
        # checkpoint takes the loops inside it out (they are taped with it)
        self.params = None  # the step functions' own parameter names, chosen once
        self.nodes = []  # the code.CheckpointedLoop made, inner loops before outer ones

    def planned(self, loop):
        return id(loop) in self.plans


def forward(rev, loop, defined, possibly, in_loop):
    """The primal code of the planned ``loop`` (``defined``/``possibly`` updated
    in place): ``DriverCall(node)``, or an ordinary loop when it carries nothing
    to differentiate."""
    loops = rev.checkpointed
    plan = loops.plans[id(loop)]
    carried = plan.carried
    args = [v for v in plan.invariants if (v in defined or v in rev.held) and
            v not in rev.bindings]
    active_carried = [c for c in carried if c in rev.active]
    active_invariants = [v for v in args if v in rev.active]
    if not carried or (not active_carried and not active_invariants):
        # nothing to differentiate, or nothing the loop computes is read after
        # it (no state to checkpoint): an ordinary loop, and so are the loops
        # inside it (a checkpointed loop inside a taped one would be reversed
        # once per outer iteration from the last forward only)
        for inner in ir.walk(loop.body):
            loops.plans.pop(id(inner), None)
        return rev.primal_loop(loop, defined, possibly, in_loop)
    if loops.params is None:
        loops.params = {p: rev.namer.fresh(p) for p in STEP_PARAMETERS}
    name = rev.namer.fresh_family(f"loop{loop.line}", LOOP_FUNCTIONS)
    index = loop.target if isinstance(loop, ir.For) else rev.namer.fresh("k")
    body = [s for s in loop.body if not isinstance(s, ir.Break)]
    unsure = frozenset(c for c in carried if c not in defined)  # bound if a step ran
    rev.unsure |= unsure
    enter, empty = [], set()  # empty: first assigned inside the loop: the state starts
    # rt.UNBOUND, which the reads after the loop check (SavePoints.maybe_unbound)
    for c in carried:
        if c not in possibly and not in_loop:
            empty.add(c)  # passed as rt.UNBOUND; nothing before the loop reads it: no save
            rev.saves.started_unbound.add(c)
        elif c not in possibly:  # in a loop its tape save needs a value: rt.UNBOUND
            enter.append(Line(sx.assign(c, sx.dotted("rt.UNBOUND")), loop.line))
            rev.saves.started_unbound.add(c)
            defined.add(c)
            possibly.add(c)
        elif c not in defined and c not in rev.saves.unbound:
            rev.saves.unbound.append(c)  # bound on some paths only: rt.UNBOUND on entry
    # the values the loop overwrites are kept for the code before it (reverse order)
    carried_saves = []
    if in_loop:  # a driver per trip of a taped loop (tc.checkpointed_loop in a for):
        # each trip's reverse needs its own, so the previous one goes on the tape
        carried_saves.append(_save(rev, enter, name, loop.line, defined, possibly, in_loop))
    for c in carried:
        if c not in empty:
            carried_saves.append(_save(rev, enter, c, loop.line, defined, possibly, in_loop))
    in_place = list(plan.journal) if rev.top and not in_loop else []
    private = private_carried(loop, active_carried, rev.facts)
    inputs = set(carried) | set(args) | set(rev.bindings)
    sub = rev.nested(replayed=True)
    sub.in_place = set(in_place)
    sub.held = unsure  # (its reads of them check rt.UNBOUND until it binds them)
    step = sub.primal(body, (inputs - unsure) | {index}, inputs | {index})
    adjoint_step = _reversed(rev, loops, body, inputs | {index}, active_carried,
                             active_invariants, in_place, private)
    taped = None
    if plan.taped_segment:
        segment = ir.For(index, [], body, loop.line, header=loop.header)
        segment.steps_name = loops.params["steps"]
        taped = _reversed(rev, None, [segment], inputs, active_carried, active_invariants,
                          (), private)
    steps = sx.copy_tree(loop.record.range_node) if isinstance(loop, ir.For) and \
        loop.record.range_node else None
    node = CheckpointedLoop(
        loop, name, index, loops.params, carried, args, active_carried, active_invariants,
        empty, in_place, private, steps, enter, step, adjoint_step, taped, [],
        plan.target_read_after,
        [rev.adj(c) for c in active_carried] + [rev.adj(v) for v in active_invariants],
        carried_saves, unsure)
    defined.update(carried)
    possibly.update(carried)
    if plan.target_read_after:  # its value from before, for the reverse of the code before
        node.carried_saves.append(_save(rev, node.target_saves, loop.target, loop.line,
                                        defined, possibly, in_loop))
        possibly.add(loop.target)
    loops.nodes.append(node)
    rev.loop_nodes[id(loop)] = node
    return [DriverCall(node)]


def _save(rev, out, name, line, defined, possibly, in_loop):
    """Keep the value of ``name`` that the driver call overwrites; returns the
    write it stands for, which :func:`reverse` puts back."""
    write = ir.Assign(name, ir.Copy(ir.Const(None)), line)
    rev.save(out, write, name, defined, possibly, in_loop)
    return write


def _reversed(rev, loops, body, defined, active_carried, active_invariants, in_place,
              private):
    """``body`` run forward, then in reverse, threading the adjoints of the carried
    state and of the invariants: the adjoint step (``loops``: it checkpoints the
    planned loops inside it) or a taped run of steps.  ``in_place``: carried
    arrays written in place; ``private``: carried arrays whose adjoints are private
    buffers (made so before the reverse sweep), zeroed and added to in place."""
    sub = rev.nested(loops, recording=True)
    sub.in_place = set(in_place)
    primal = sub.primal(body, set(defined), set(defined))
    seeds = [rev.adj(c) for c in active_carried] + [rev.adj(v) for v in active_invariants]
    sub.owned = {rev.adj(v) for v in active_invariants}  # private: the driver threads them
    sub.owned |= {rev.adj(c) for c in private}
    adjoint, nonzero = sub.adjoint(body, set(seeds))
    results = [sx.name(rev.adj(c)) if rev.adj(c) in nonzero else sx.rt("zeros_like", c)
               for c in active_carried + active_invariants]
    return ReversedBody(primal, adjoint, seeds, results, sub.saves)


def reverse(rev, node, nonzero):
    """The adjoint code of a checkpointed loop: its private adjoints and zeros,
    ``DriverCall(node, reverse=True)``, and the values from before the loop put
    back.  Returns (code, nonzero before the loop)."""
    nonzero = set(nonzero)
    line = node.loop.line
    invariants = {rev.adj(v) for v in node.invariants if v in rev.active}
    invariants |= {rev.adj(c) for c in node.private}
    out = rev.make_private(invariants - rev.owned, nonzero, line)
    out += rev.materialize([b for b in node.adjoint_names
                            if b not in nonzero and b not in invariants], line)
    out.append(DriverCall(node, reverse=True))
    nonzero.update(node.adjoint_names)
    for write in reversed(node.carried_saves):
        rev.restore(write, out)
    # adjoints of carried variables that are not active stay as they were
    return out, nonzero
