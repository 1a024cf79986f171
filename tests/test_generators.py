"""lower/generators.py: a user generator as a loop source -- the generator is
inlined and the loop body runs at each ``yield``; taped and checkpointed."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from tangent_ckpt.errors import TangentCkptError

RNG = np.random.default_rng(9)
LAYER_SIZES = (3, 4, 2)
WEIGHTS = RNG.standard_normal(3 * 4 + 4 + 4 * 2 + 2) * 0.5
X = RNG.standard_normal(3)


def unpack_layers(weights):
    """autograd's neural-net example: layers cut out of one flat vector."""
    for m, n in zip(LAYER_SIZES[:-1], LAYER_SIZES[1:]):
        yield weights[:m * n].reshape((m, n)), weights[m * n:m * n + n]
        weights = weights[(m + 1) * n:]


def network(weights, x):
    h = x
    for W, b in unpack_layers(weights):
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def stacked_layers(Ws, bs):
    for k in range(Ws.shape[0]):
        yield Ws[k], bs[k]


def deep_network(Ws, bs, x):
    h = x
    for W, b in stacked_layers(Ws, bs):
        h = np.tanh(W @ h + b)
    return np.sum(h)


def test_a_generator_over_a_flat_weight_vector():
    check_construct(network, (WEIGHTS, X), (0, 1))


def test_a_generator_with_a_loop_is_checkpointed():
    Ws = RNG.standard_normal((4, 3, 3)) * 0.5
    bs = RNG.standard_normal((4, 3))
    check_construct(deep_network, (Ws, bs, X), (0, 1, 2))
    source = tc.grad(deep_network, wrt=0, checkpoint=True, snapshots=2).source
    assert "CheckpointedLoop" in source


def breaks_out(Ws, bs, x):
    for W, b in stacked_layers(Ws, bs):
        x = W @ x + b
        break
    return np.sum(x)


def test_break_out_of_a_generator_loop_ends_the_generator():
    """Refused while the lowering inlined generators; desugar writes the break as
    the end of the generator's body (flags out of its loops)."""
    Ws = RNG.standard_normal((3, 3, 3)) * 0.5
    bs = RNG.standard_normal((3, 3))
    check_construct(breaks_out, (Ws, bs, X), (0, 1, 2))


def continues_in_a_generator_loop(Ws, bs, x):
    for W, b in stacked_layers(Ws, bs):
        if np.sum(b) > 100.0:
            continue
        x = W @ x + b
    return np.sum(x)


def test_continue_in_a_generator_loop_skips_the_rest_of_the_body():
    """Left to the lowering (desugar does not write `continue` into a generator)."""
    Ws = RNG.standard_normal((3, 3, 3)) * 0.5
    bs = RNG.standard_normal((3, 3))
    check_construct(continues_in_a_generator_loop, (Ws, bs, X), (0, 1, 2))
