"""Differentiate a vanilla RNN through a long loop, taped and checkpointed.

    python examples/rnn.py                  # T = 1000 steps, 10 snapshots
    python examples/rnn.py --steps 5000 --snapshots 20
    python examples/rnn.py --source         # also print the generated gradient code

The checks (taped vs checkpointed, finite differences, peak memory, the
recomputation count against the Revolve optimum) live in ``tangent_ckpt/demo.py``,
so that the installed ``tangent-ckpt demo`` runs the same thing.  This file holds
the model; ``tangent-ckpt dump examples/rnn.py:loss --wrt 1,2 --snapshots 10``
prints its gradient as a module.
"""

import sys

import numpy as np

from tangent_ckpt import demo


def loss(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


make_inputs = demo.make_inputs


def main(argv=None):
    return demo.main(argv, loss_fn=loss, prog="rnn.py")


if __name__ == "__main__":
    sys.exit(main())
