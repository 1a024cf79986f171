"""Which loops are checkpointed, and how: decided from the options before the
transform, and handed to it as plain data ({id(loop): ir.LoopPlan}).

``checkpoint=True`` (or ``"auto"``) checkpoints every loop no other loop
encloses, and with ``nested=True`` the loops inside them too; otherwise only
the loops the user marked (``tc.checkpointed_loop``), the inner ones of those
only with ``nested=True``.  A plan carries what packaging needs decided before
the transform runs: the loop's carried state and invariants
(``loop_state.py``), whether code after it reads its variable, which carried
arrays its steps may write in place (``written_rows.py``, RAM snapshots of a
for loop on a fixed schedule only), and whether a memory budget buys a taped
run of steps too.
"""

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.analyze.fresh_arrays import owned_arrays
from tangent_ckpt.compiler.package.loop_state import carried_state, header_reads, \
    target_read_after
from tangent_ckpt.compiler.package.written_rows import rows_written_once
from tangent_ckpt.errors import OptionError


def plan_loops(function, options, plan=None):
    """{id(loop): ir.LoopPlan} for the loops of ``function`` to checkpoint (empty:
    none).  ``plan``: the name of the auto mode's ``rt.MemoryPlan``, or None."""
    if options.checkpoint:
        chosen = _outermost(function.body, options.nested)
    else:  # only loops the user marked (tc.checkpointed_loop)
        marked = [s for s in ir.walk(function.body)
                  if isinstance(s, (ir.For, ir.While)) and s.checkpoint]
        if not marked and not options.checkpoint_given and options.checkpoint_only():
            given = [f"{name}=" for name in options.checkpoint_only()]
            verb = "acts" if len(given) == 1 else "act"
            raise OptionError(f"{', '.join(given)} only {verb} on checkpointed loops, and "
                              "without checkpoint= no loop is checkpointed (the function "
                              "marks none with tc.checkpointed_loop): pass checkpoint=True "
                              "(or checkpoint='auto' with memory_budget=), or use "
                              "tc.grad_with_checkpointing")
        chosen = _marked(marked, options.nested)
    reads = header_reads(function) if chosen else None
    owned = owned_arrays(function) if chosen else set()
    read_anywhere = set(ir.read_names(function.body)) if chosen else set()
    return {id(loop): _plan(function, loop, options, plan, reads, owned, read_anywhere)
            for loop in chosen}


def _outermost(body, nested, inside_loop=False):
    """The loops ``checkpoint=True`` checkpoints: those no loop encloses (all with
    ``nested``), outside segments (a segment's loops keep the user's marks)."""
    chosen = []
    for stmt in body:
        if isinstance(stmt, ir.If):
            chosen += _outermost(stmt.body, nested, inside_loop)
            chosen += _outermost(stmt.orelse, nested, inside_loop)
        elif isinstance(stmt, (ir.For, ir.While)):
            if nested or not inside_loop:
                chosen.append(stmt)
            chosen += _outermost(stmt.body, nested, inside_loop=True)
        elif isinstance(stmt, ir.Segment) and (nested or not inside_loop):
            chosen += _marked([s for s in ir.walk(stmt.body)
                               if isinstance(s, (ir.For, ir.While)) and s.checkpoint], nested)
    return chosen


def _marked(marked, nested):
    """The loops of ``marked`` (the user's marks) to checkpoint: all with ``nested``,
    else those in the body of no other marked loop (the inner ones are taped
    inside their loop's adjoint step)."""
    if nested:
        return marked
    inner = {id(s) for loop in marked for s in ir.walk(loop.body)}
    return [loop for loop in marked if id(loop) not in inner]


def _plan(function, loop, options, plan, reads, owned, read_anywhere):
    everything = set(ir.read_names([loop]))
    facts = carried_state(function, loop, everything, {}, reads)
    o = loop.options or options
    journaled = not (o.memory_budget or plan or o.disk_snapshots or o.costs is not None or
                     o.schedule == "online")
    return ir.LoopPlan(
        carried=list(facts.carried), invariants=list(facts.invariants),
        # a loop variable the function never reads is read after no loop (one pass
        # over the function instead of one per loop: compile time stays linear)
        target_read_after=isinstance(loop, ir.For) and (
            loop.target == function.result or loop.target in read_anywhere) and
        target_read_after(function, loop),
        journal=rows_written_once(loop, facts.carried, owned) if journaled else [],
        taped_segment=options.memory_budget is not None and isinstance(loop, ir.For)
        and not loop.break_flag and options.schedule == "revolve")
