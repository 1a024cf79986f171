"""Whether a checkpointed loop's steps are running again.

The reverse sweep of a checkpointed loop runs steps a second time (from a
snapshot, to reach the step it reverses), and so may a cost measurement before
the forward sweep.  A statement of the step that only observes (``print``, a
logging call) ran when the step first ran; generated steps run it only when
:func:`replaying` is false, so the user's output is printed once, as the
function itself prints it.
"""

import contextlib
import threading

_STATE = threading.local()


def replaying():
    """True while the steps that run are runs again of steps already run."""
    return getattr(_STATE, "depth", 0) > 0


@contextlib.contextmanager
def replayed_steps():
    """The steps run inside this block run again (nested blocks count)."""
    _STATE.depth = getattr(_STATE, "depth", 0) + 1
    try:
        yield
    finally:
        _STATE.depth -= 1
