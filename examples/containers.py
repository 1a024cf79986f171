"""Parameters in containers: a two-layer network over a list of (W, b) pairs,
differentiated with respect to the list itself, and an RNN that keeps its
states in a dict keyed by the step (as min-char-rnn does), checkpointed.

    python examples/containers.py [--steps 25] [--snapshots 4] [--show]

Prints the gradients' structure, checks them against central finite
differences in a random direction, and prints one `check:` line.
"""

import argparse

import numpy as np

import tangent_ckpt as tc


def two_layer_net(params, x, y):
    """Squared error of a tanh network; ``params`` is a list of (W, b)."""
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum((h - y) ** 2)


def rnn_loss(h0, weights, inputs, targets):
    """An RNN whose states, outputs and inputs live in dicts keyed by the step."""
    xs, hs, ys = {}, {}, {}
    hs[-1] = h0
    loss = 0.0
    for t in range(len(inputs)):
        xs[t] = inputs[t]
        hs[t] = np.tanh(weights['Wxh'] @ xs[t] + weights['Whh'] @ hs[t - 1] + weights['bh'])
        ys[t] = weights['Why'] @ hs[t]
        loss = loss + np.sum((ys[t] - targets[t]) ** 2)
    return loss


def directional_error(f, args, k, grad, rng, eps=1e-6):
    """|finite difference - <grad, v>| / scale, for a random direction v of
    argument k (a container: v has its structure)."""
    flat, unravel = tc.ravel(args[k])
    v = rng.standard_normal(flat.shape)
    plus, minus = list(args), list(args)
    plus[k], minus[k] = unravel(flat + eps * v), unravel(flat - eps * v)
    numeric = (f(*plus) - f(*minus)) / (2 * eps)
    exact = float(tc.ravel(grad)[0] @ v)
    return abs(numeric - exact) / max(1.0, abs(exact))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--snapshots", type=int, default=4)
    parser.add_argument("--show", action="store_true", help="print the generated code")
    opts = parser.parse_args()
    rng = np.random.default_rng(0)

    params = [(rng.normal(size=(3, 8)) * 0.5, np.zeros(8)),
              (rng.normal(size=(8, 2)) * 0.5, np.zeros(2))]
    x, y = rng.normal(size=(16, 3)), rng.normal(size=(16, 2))
    dnet = tc.grad(two_layer_net)
    dparams = dnet(params, x, y)
    print("network gradient:", [tuple(g.shape for g in pair) for pair in dparams])
    errors = [directional_error(two_layer_net, (params, x, y), 0, dparams, rng)]

    weights = {'Wxh': rng.normal(size=(6, 4)) * 0.4, 'Whh': rng.normal(size=(6, 6)) * 0.4,
               'bh': np.zeros(6), 'Why': rng.normal(size=(2, 6)) * 0.4}
    inputs = rng.normal(size=(opts.steps, 4))
    targets = rng.normal(size=(opts.steps, 2))
    drnn = tc.grad(rnn_loss, wrt=(0, 1), checkpoint=True, snapshots=opts.snapshots)
    dh0, dweights = drnn(np.zeros(6), weights, inputs, targets)
    print("rnn gradient:", {k: g.shape for k, g in dweights.items()})
    errors.append(directional_error(rnn_loss, (np.zeros(6), weights, inputs, targets), 1,
                                    dweights, rng))
    if opts.show:
        print(dnet.source)
        print(drnn.source)
    worst = max(errors)
    print(f"check: {'OK' if worst < 1e-6 else 'FAILED'} (largest directional error {worst:.1e})")


if __name__ == "__main__":
    main()
