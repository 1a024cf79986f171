"""An LSTM over a sequence: checkpointing a loop whose state is the tuple ``(h, c)``.

    python examples/lstm.py                   # T = 400 steps, batch 16, hidden 64
    python examples/lstm.py --steps 50 --hidden 8 --snapshots 4

The loop runs over the sequence itself (``for x in xs``, one step per row of
``xs``), carries the tuple ``state = (h, c)`` and calls a helper ``sigmoid``.
The gradient w.r.t. the weights is computed taped (``tc.grad``) and
checkpointed (``tc.grad_with_checkpointing``, Revolve); the script prints the
difference between the two, a few central finite differences and the peak
memory of both gradient calls (tracemalloc), then ``check: OK``.
"""

import argparse
import sys

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.demo import check_example


def sigmoid(z):
    return 0.5 * (np.tanh(0.5 * z) + 1.0)


def loss(xs, Wx, Wh, b, h0, c0):
    """xs (T, batch, n_in); Wx (n_in, 4H); Wh (H, 4H); b (4H,); h0, c0 (batch, H)."""
    H = h0.shape[1]
    state = (h0, c0)
    for x in xs:
        h, c = state
        z = x @ Wx + h @ Wh + b
        i = sigmoid(z[:, :H])
        f = sigmoid(z[:, H:2 * H])
        o = sigmoid(z[:, 2 * H:3 * H])
        g = np.tanh(z[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        state = (h, c)
    h, c = state
    return np.mean(h ** 2)


def make_inputs(steps, batch, n_in, hidden, seed=0):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((steps, batch, n_in))
    Wx = rng.standard_normal((n_in, 4 * hidden)) / np.sqrt(n_in)
    Wh = 0.5 * rng.standard_normal((hidden, 4 * hidden)) / np.sqrt(hidden)
    b = 0.1 * rng.standard_normal(4 * hidden)
    h0 = np.zeros((batch, hidden))
    c0 = np.zeros((batch, hidden))
    return xs, Wx, Wh, b, h0, c0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--inputs", type=int, default=32)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--snapshots", type=int, default=8)
    p.add_argument("--fd-checks", type=int, default=4)
    p.add_argument("--source", action="store_true", help="print the generated gradient")
    args = p.parse_args(argv)
    inputs = make_inputs(args.steps, args.batch, args.inputs, args.hidden)
    print(f"LSTM: T = {args.steps} steps, batch {args.batch}, hidden {args.hidden}, "
          f"state (h, c) = 2 x {inputs[4].nbytes / 1e3:.1f} kB, "
          f"{args.snapshots} snapshots; gradient w.r.t. Wx, Wh, b")
    wrt = (1, 2, 3)
    taped = tc.grad(loss, wrt=wrt)
    ckpt = tc.grad_with_checkpointing(loss, wrt=wrt, snapshots=args.snapshots)
    if args.source:
        print(ckpt.source)
    return check_example(loss, inputs, wrt, ("Wx", "Wh", "b"), taped, ckpt,
                         fd_checks=args.fd_checks, snapshots=args.snapshots)


if __name__ == "__main__":
    sys.exit(main())
