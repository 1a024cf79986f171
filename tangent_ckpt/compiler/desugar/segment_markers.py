"""The markers ``desugar/checkpoint_calls.py`` writes and the lowering reads
(``lower/statements.py``): ``with checkpointed_segment(...):`` around the block of a
``tc.checkpoint`` call, ``with checkpointed_scope(...):`` for the user's ``with
tc.checkpoint_scope(...):``, ``with checkpointed_steps(...):`` around the loop of a
``tc.checkpointed_loop`` call.  A name of the desugared function denotes each
(``ParsedFunction.inlined_names``); run as Python, each does nothing."""

import contextlib


@contextlib.contextmanager
def checkpointed_segment(name, label, min_bytes=None):
    """The block recomputed in the reverse sweep: ``name``, the checkpointed
    function's source; ``label``, the user's call (comments); ``min_bytes``, the
    run-time threshold (``tc.checkpoint``'s) or None."""
    yield


@contextlib.contextmanager
def checkpointed_scope(name, label, enabled=None):
    """The block of ``with tc.checkpoint_scope(name, enabled=...):``: ``label``, the
    user's ``with`` (comments); ``enabled``, the run-time switch, or None where it
    is on when compiling."""
    yield


@contextlib.contextmanager
def checkpointed_steps(num_checkpoints, header):
    """The loop checkpointed with ``num_checkpoints`` snapshots (a constant int, or
    None for the gradient's options); ``header``: the loop's text in comments."""
    yield
