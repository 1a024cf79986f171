"""desugar/function_loops.py: a ``for`` loop over a tuple or list of functions,
unrolled into its body once per function (each call of the loop variable then
names its function), taped and checkpointed against finite differences."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared

X = np.array([0.3, -0.4, 0.5])


def _squash(v):
    return v / (1.0 + v * v)


def chain_of_activations(x):
    for act in (np.tanh, np.sin, _squash):
        x = act(x) + 0.1 * x
    return np.sum(x ** 2)


def activations_in_a_range_loop(x, n):
    for t in range(n):
        for act in [np.cos, _squash]:
            x = x * 0.9 + 0.1 * act(x)
    return np.sum(x)


def activation_read_after_the_loop(x):
    total = 0.0
    for act in (np.exp, np.tanh):
        total = total + np.sum(act(x))
    return total + np.sum(act(2.0 * x))   # the last one: np.tanh


@pytest.mark.parametrize("f, args", [(chain_of_activations, (X,)),
                                     (activations_in_a_range_loop, (X, 3)),
                                     (activation_read_after_the_loop, (X,))])
def test_a_loop_over_functions_is_the_body_once_per_function(f, args):
    check_grad(f, args, wrt=(0,))
    check_grad(f, args, wrt=(0,), df=tc.grad(f, checkpoint=True, snapshots=2))
    assert "for act in" not in desugared(f)


def lambda_keeping_the_loop_variable(x):
    fs = []
    for act in (np.tanh, np.sin):
        fs.append(lambda v: act(v))   # each lambda reads act when called: np.sin
    return np.sum(fs[0](x))


def test_a_loop_whose_body_makes_a_closure_stays_a_loop():
    """A ``lambda`` in the body reads ``act`` when it runs (the last function);
    written out, it would read its own trip's."""
    assert "for act in (np.tanh, np.sin)" in desugared(lambda_keeping_the_loop_variable)
