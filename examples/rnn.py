"""Differentiate a vanilla RNN through a long loop, taped and checkpointed.

    python examples/rnn.py                  # T = 1000 steps, 10 snapshots
    python examples/rnn.py --steps 5000 --snapshots 20
    python examples/rnn.py --source         # also print the generated gradient code

What it does, for ``h = tanh(h @ W + b)`` repeated T times and loss = sum(h):

1. the gradient w.r.t. W and b with ``tc.grad`` (every step taped) and with
   ``tc.grad_with_checkpointing(wrt=(1, 2), snapshots=S)`` (Revolve schedule);
2. checks that the two agree (max relative difference) and spot-checks a few
   entries against central finite differences of the plain NumPy loss;
3. measures the peak memory of each gradient call with tracemalloc (NumPy
   reports its array buffers to tracemalloc, so this is measured, not estimated);
4. prints the profiler's counts for the checkpointed loop next to the Revolve
   optimum ``revolve_cost(T, S)`` (Griewank & Walther, Algorithm 799).

Exit status 0 only if every check passes; the line starting with ``check:``
says OK or FAILED.

The checks live in ``tangent_ckpt/demo.py`` (so that the installed
``tangent-ckpt demo`` runs the same thing); this file holds the model, and
``tangent-ckpt dump examples/rnn.py:loss --wrt 1,2 --snapshots 10`` prints its
gradient as a module.
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
