"""Package: the driver a checkpointed loop calls, as generated code writes it.

``rt.CheckpointedLoop(range(n), snapshots=10, ...)`` with the loop's own options
(``tc.checkpointed_loop``) or the compile's, and the one-line description of
its schedule that the generated comments and the notebook display show.
"""

import ast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.ir import operand_node
from tangent_ckpt.runtime import random_state


def schedule_text(loop, options, plan):
    """``"Revolve schedule, 10 snapshots"``: how ``loop`` is checkpointed, with its
    own options or the compile's (``options``; ``plan``: the auto mode's plan)."""
    o = loop.options or options  # tc.checkpointed_loop: its own
    schedule = "online" if isinstance(loop, ir.While) or loop.break_flag else o.schedule
    label = {"revolve": "Revolve", "uniform": "uniform sqrt(n)", "online": "online"}[schedule]
    if o.snapshots:
        size = f"{o.snapshots} snapshots"
    elif plan and o is options:
        size = "snapshots from this loop's share of the auto plan's budget"
    elif o.memory_budget:
        size = f"snapshots fitted to a {o.memory_budget}-byte budget at run time"
    else:
        size = "snapshots chosen from the trip count at run time"
    return f"{label} schedule, {size}"


def budgeted(loop, options, plan):
    """Is this loop's snapshot count fitted to a memory budget at run time?"""
    o = loop.options or options
    return bool(o.memory_budget) or bool(plan and o is options)


def driver_constructor(loop, name, options, plan, in_place=(), segmented=False, probe=False):
    """``rt.CheckpointedLoop(...)`` for ``loop`` (the driver object ``name``):
    ``in_place``: carried arrays its steps write in place; ``segmented`` /
    ``probe``: it has a taped segment / an adjoint probe function."""
    o = loop.options or options
    if isinstance(loop, ir.For):
        steps = sx.copy_tree(loop.record.range_node) if loop.record.range_node else \
            sx.builtin_call("range", *[operand_node(b) for b in loop.bounds])
    else:
        steps = sx.const(None)
    kwargs = {}
    schedule = "online" if isinstance(loop, ir.While) or loop.break_flag else o.schedule
    if schedule != "revolve":
        kwargs["schedule"] = sx.const(schedule)
    if o.snapshots:
        kwargs["snapshots"] = sx.const(o.snapshots)
    if plan and o is options:  # checkpoint="auto"
        kwargs["plan"] = sx.name(plan)
    elif o.memory_budget:
        kwargs["memory_budget"] = sx.const(o.memory_budget)
    if o.disk_snapshots:
        kwargs["disk_snapshots"] = sx.const(o.disk_snapshots)
    if o.costs is not None:
        kwargs["costs"] = sx.const(o.costs)
    if o.disk_snapshots and o.snapshot_store is not None:
        kwargs["snapshot_store"] = _store_node(o.snapshot_store)
    if o.min_steps:
        kwargs["min_steps"] = sx.const(o.min_steps)
    if o.verify:
        kwargs["verify"] = sx.const(True)
    if segmented:
        kwargs["taped_segment"] = sx.name(f"{name}_segment")
    if probe:
        kwargs["adjoint_probe"] = sx.name(f"{name}_probe")
    kwargs["copy_snapshots"] = sx.const(False)  # the steps never write into their input
    if in_place:  # ... but into these, telling the journal what they overwrite
        kwargs["in_place"] = ast.List(elts=[sx.name(c) for c in in_place], ctx=ast.Load())
    if loop.record.next_state:
        kwargs["next_state"] = sx.const(True)
    if _draws_from_global_state(loop):
        kwargs["random_state"] = sx.const(True)
    kwargs["name"] = sx.const(name)
    return sx.rt("CheckpointedLoop", steps, **kwargs)


def _draws_from_global_state(loop):
    """Whether ``loop``'s body (a test included: ``if np.random.rand() < p``) or
    its ``while`` test calls NumPy's legacy global random functions."""
    if isinstance(loop, ir.While) and loop.test.draws:
        return True
    for stmt in ir.walk(loop.body):
        expr = getattr(stmt, "expr", None)
        if isinstance(expr, ir.Prim) and random_state.uses_global_state(expr.fn):
            return True
        if isinstance(expr, ir.NonDiff) and expr.draws:
            return True
        if isinstance(stmt, ir.While) and stmt.test.draws:
            return True
    return False


def _store_node(spec):
    """An rt.SnapshotStore as generated code writes it: a plain folder or URL as a string."""
    options = {}
    if spec.codec is not None:
        options["codec"] = sx.const(spec.codec)
    if spec.level is not None:
        options["level"] = sx.const(spec.level)
    if spec.write_queue != 2:
        options["write_queue"] = sx.const(spec.write_queue)
    if not spec.prefetch:
        options["prefetch"] = sx.const(False)
    if not options:
        return sx.const(spec.where)
    return sx.rt("SnapshotStore", sx.const(spec.where), **options)
