"""User-facing markers for segment checkpointing.

Inside a function given to :func:`tangent_ckpt.grad`, the compiler recognizes
these objects (by identity, under any alias) and rewrites the code around them:

- ``y = tc.checkpoint(fn, *args)``: the intermediates of ``fn`` are not kept;
  ``fn`` is run again in the reverse sweep.
- ``with tc.checkpoint_scope("name"):``: the same for a block of statements.
- ``@tc.custom_adjoint``: a stage whose adjoint the user supplies.

Called outside a gradient they do the obvious thing (call ``fn``, do nothing),
so the same model code runs with and without differentiation.
"""

import contextlib

from tangent_ckpt.adjoints.registry import register_adjoint

__all__ = ["checkpoint", "checkpoint_scope", "custom_adjoint"]


def checkpoint(fn, *args, min_bytes=None):
    """``fn(*args)``; inside a differentiated function, a recomputed segment.

    ``min_bytes``: only checkpoint when the outputs hold at least this many
    bytes (decided at run time, each time the segment runs); smaller outputs
    keep the segment's record instead of recomputing it.
    """
    return fn(*args)


@contextlib.contextmanager
def checkpoint_scope(name, enabled=True):
    """A no-op context manager; inside a differentiated function the block's
    intermediates are recomputed in the reverse sweep (unless ``enabled`` is false)."""
    yield


def custom_adjoint(fn=None, *, adjoint=None):
    """Give a stage a user-supplied adjoint.

        @tc.custom_adjoint
        def stage(x, W):
            return np.tanh(x @ W)

        @stage.defadjoint
        def _(g, ans, x, W):            # g: adjoint of the output, ans: the output
            gpre = g * (1 - ans ** 2)
            return gpre @ W.T, x.T @ gpre   # one adjoint per positional argument (None: no gradient)

    or ``@tc.custom_adjoint(adjoint=rule)``.  Until an adjoint is given, the
    stage is differentiated like any other function.  The adjoint may do
    anything: analytic formulas, finite differences, or call another gradient
    (``tc.grad_with_checkpointing(...)``) to checkpoint inside the stage.
    """
    def wrap(f):
        def defadjoint(rule):
            register_adjoint(f, rule)
            return rule
        f.defadjoint = defadjoint
        if adjoint is not None:
            register_adjoint(f, adjoint)
        return f
    if fn is None:
        return wrap
    return wrap(fn)
