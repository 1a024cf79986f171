"""``verify=True`` of a checkpointed loop: a recomputed step must reproduce, byte
for byte, the state stored the first time (see ``CheckpointedLoop._verify_at``)."""

import hashlib

import numpy as np

from tangent_ckpt.runtime.backends import is_array, to_host
from tangent_ckpt.errors import NondeterministicStepError
from tangent_ckpt.runtime.stores.snapshots import tree_flatten

__all__ = ["state_digest", "not_reproduced", "ReplayCheck"]


def state_digest(tree):
    """A digest of a state's structure, dtypes, shapes and bytes."""
    h = hashlib.blake2b(digest_size=20)
    leaves, treedef = tree_flatten(tree)
    h.update(repr(treedef).encode())
    for x in leaves:
        if is_array(x):   # another library's array: its host copy
            h.update(f"{x.dtype.str}{x.shape}".encode())
            h.update(np.ascontiguousarray(to_host(x)).tobytes())
        else:
            h.update(repr((type(x).__name__, x)).encode())
    return h.digest()


def not_reproduced(name, index, position):
    """The error for recomputing step `index` that did not give the state stored
    at `position`."""
    return NondeterministicStepError(
        f"{name}: recomputing step {index!r} did not reproduce the state "
        f"stored at position {position}; the loop body is not deterministic (random numbers, "
        "global state, in-place mutation of its input?) so checkpointing would give a wrong "
        "gradient")


class ReplayCheck:
    """The digests ``verify=True`` compares: each snapshot's state is digested when
    stored; once the snapshot is freed, the state at its position must be
    reproduced by recomputing the step before it (:meth:`expected_after`)."""

    def __init__(self):
        self._stored = {}   # slot -> (position, digest)
        self._freed = {}    # position -> digest of a freed snapshot

    def stored(self, slot, pos, state):
        self._stored[slot] = (pos, state_digest(state))

    def freed(self, slot):
        info = self._stored.pop(slot, None)
        if info is not None:
            self._freed[info[0]] = info[1]

    def expected_after(self, q):
        """The digest step q must reproduce (once), or None if nothing to check."""
        return self._freed.pop(q + 1, None)
