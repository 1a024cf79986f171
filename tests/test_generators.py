"""A user generator as a loop source: desugar (``inline_functions.py``) inlines the
generator and runs the loop body at each ``yield``, taped and checkpointed; a loop
it cannot write so is refused by the lowering (``lower/generator_refusals.py``)
naming the construct."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from tangent_ckpt.compiler.pipeline import desugared
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
        if np.sum(b) > 0.0:
            continue
        x = W @ x + b
    return np.sum(x)


def continues_from_either_branch(Ws, bs, x):
    for W, b in stacked_layers(Ws, bs):
        if b[0] > 0.0:
            x = x * 1.5
            if b[1] > 0.0:
                continue
        else:
            x = np.sin(x)
            continue
        x = W @ x + b
    return np.sum(x)


def two_yields(Ws, bs):
    for k in range(Ws.shape[0]):
        yield Ws[k], bs[k]
        yield Ws[k].T, -bs[k]


def continues_at_each_yield_then_breaks(Ws, bs, x):
    for W, b in two_yields(Ws, bs):
        if np.sum(b) > 0.0:
            continue
        x = np.tanh(W @ x + b)
        if np.sum(x) > 2.0:
            break
    return np.sum(x)


def inner_loop_continues_its_own(Ws, bs, x):
    for W, b in stacked_layers(Ws, bs):
        for j in range(3):
            if b[j] > 0.0:
                continue
            x = x + W[j] * b[j]
        x = np.cos(x)
    return np.sum(x)


@pytest.mark.parametrize("f", [continues_in_a_generator_loop, continues_from_either_branch,
                               continues_at_each_yield_then_breaks,
                               inner_loop_continues_its_own])
def test_continue_in_a_generator_loop_skips_the_rest_of_the_body(f):
    """Desugar writes the body at each ``yield`` with a ``continue`` as the end of
    its path (the rest of the body in the other path of each ``if``); the data
    take the ``continue`` on some layers and not on others."""
    Ws = RNG.standard_normal((4, 3, 3)) * 0.5
    bs = np.array([[0.3, -0.2, 0.1], [-0.4, 0.5, -0.3], [0.2, 0.3, 0.4], [-0.3, -0.2, 0.6]])
    check_construct(f, (Ws, bs, X), (0, 1, 2))
    text = desugared(f)
    assert "for W, b in" not in text and "as the lowering inlines it" not in text


def continue_in_a_loops_else(Ws, bs, x):
    for W, b in stacked_layers(Ws, bs):
        for j in range(2):
            x = x * 0.5
        else:
            if np.sum(b) > 0.0:
                continue
        x = W @ x + b
    return np.sum(x)


def yields_as_a_value(x):
    y = yield x
    yield y


def loops_over_a_yield_value(x):
    for v in yields_as_a_value(x):
        x = x * 2.0
    return np.sum(x)


def returns_from_a_generator_loop(Ws, bs, x):
    for W, b in stacked_layers(Ws, bs):
        x = np.tanh(W @ x + b)
        if np.sum(x) > 0.5:
            return np.sum(x ** 2)
    return np.sum(x)


def returns_and_breaks_in_a_generator_loop(Ws, bs, x):
    for W, b in stacked_layers(Ws, bs):
        x = np.tanh(W @ x + b)
        if np.sum(x) > 0.5:
            return np.sum(x ** 2)
        if np.sum(x) < -2.0:
            break
    return np.sum(x)


def test_a_return_in_a_generator_loop_returns_from_the_function():
    """The body written at each ``yield`` keeps its ``return``: the caller's (the
    loop-exit pass writes it as a flag out of the generator's loop)."""
    Ws = RNG.standard_normal((4, 3, 3)) * 0.5
    bs = np.array([[0.9, 0.8, 0.7], [0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.2, 0.1, 0.3]])
    bs_late = bs.copy()
    bs_late[0] = -3.0
    bs_never = bs - 3.0

    def returning_layer(bs):
        x = X
        for k in range(4):
            x = np.tanh(Ws[k] @ x + bs[k])
            if np.sum(x) > 0.5:
                return k
        return None
    assert returning_layer(bs) == 0 and returning_layer(bs_late) in (1, 2, 3) and \
        returning_layer(bs_never) is None
    for biases in (bs, bs_late, bs_never):
        check_construct(returns_from_a_generator_loop, (Ws, biases, X), (0, 1, 2))
    assert "as the lowering inlines it" not in desugared(returns_from_a_generator_loop)


@pytest.mark.parametrize("f, args, said", [
    (continue_in_a_loops_else, (np.ones((2, 3, 3)), np.ones((2, 3)), X),
     "continue inside a `with` or a loop's `else`"),
    (loops_over_a_yield_value, (X,), "a yield used as a value"),
    (returns_and_breaks_in_a_generator_loop, (np.ones((2, 3, 3)), np.ones((2, 3)), X),
     "a return beside a break or continue"),
])
def test_a_generator_loop_desugar_cannot_write_is_refused_naming_the_construct(f, args, said):
    with pytest.raises(TangentCkptError, match=said) as caught:
        tc.grad(f)(*args)
    assert "test_generators.py:" in str(caught.value)
