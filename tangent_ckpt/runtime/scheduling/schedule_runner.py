"""Any action stream executed directly, without the driver's bookkeeping: for
experiments and tests of schedules (``rt.run_schedule``)."""

from tangent_ckpt.runtime.scheduling.schedules import ADVANCE, FIRST_TURN, FREE, RESTORE, STORE
from tangent_ckpt.runtime.stores.snapshots import RamStore

__all__ = ["run_schedule"]


def run_schedule(actions, step, adjoint_step, state, bstate, n, store=None):
    """Execute any action stream directly (for experiments and tests).

    ``step(k, state)`` and ``adjoint_step(k, state, bstate)``; returns
    (final_state, bstate, counts) where counts has forward_steps and recorded_steps.
    The final state is the result of the last plain step (one extra plain step).
    """
    store = store if store is not None else RamStore()
    counts = {"forward_steps": 0, "recorded_steps": 0}
    work, pos, final = state, 0, state
    try:
        for a in actions:
            if a.kind is ADVANCE:
                for _ in range(a.n):
                    work = step(pos, work)
                    pos += 1
                counts["forward_steps"] += a.n
            elif a.kind is STORE:
                store.store(a.slot, work)
            elif a.kind is RESTORE:
                work, pos = store.restore(a.slot), a.pos
            elif a.kind is FREE:
                store.free(a.slot)
            else:
                if a.kind is FIRST_TURN:
                    final = step(a.pos, work)
                    counts["forward_steps"] += 1
                bstate = adjoint_step(a.pos, work, bstate)
                counts["recorded_steps"] += 1
    finally:
        store.close()
    return final, bstate, counts
