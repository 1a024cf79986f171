"""lower/scopes.py function_alias_candidates + Normalizer.function_alias: a
local bound once to a function (``sum = np.sum``, ``act = np.tanh``,
``step = helper``) resolves like a module-level name; a local that may name
several things is refused at the call, naming file and line."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.errors import TangentCkptError


def helper(z):
    return z * np.sin(z)


def builtin_name_shadowed_by_numpy(x):
    sum = np.sum
    return sum(x * x)


def activation_alias(x, W):
    act = np.tanh
    h = x
    for t in range(3):
        h = act(h @ W)
    return np.sum(h)


def user_function_alias(x):
    step = helper
    return np.sum(step(x) + step(x * 2.0))


def nested_def_alias(x):
    def square(v):
        return v * v
    sq = square
    return np.sum(sq(x))


def alias_of_an_alias(x):
    act = np.tanh
    f = act
    return np.sum(f(x) * act(x))


def alias_inside_a_helper(x):
    return np.sum(uses_alias(x))


def uses_alias(v):
    cos = np.cos
    return cos(v) * v


def rebound_alias(x, c):
    act = np.tanh
    if c > 0:
        act = np.sin
    return np.sum(act(x))


def alias_bound_in_a_branch(x, c):
    if c > 0:
        act = np.sin
    return np.sum(act(x))


X = np.array([0.3, -0.8, 1.1])
W = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.6], [0.1, 0.2, 0.3]])


@pytest.mark.parametrize("fn", [builtin_name_shadowed_by_numpy, user_function_alias,
                                nested_def_alias, alias_of_an_alias,
                                alias_inside_a_helper])
def test_a_local_bound_once_to_a_function_resolves_like_a_global(fn):
    check_grad(fn, (X,))


@pytest.mark.parametrize("checkpoint", [False, True])
def test_an_aliased_activation_in_a_checkpointed_loop(checkpoint):
    check_grad(activation_alias, (X, W), wrt=(0, 1),
               df=tc.grad(activation_alias, wrt=(0, 1), checkpoint=checkpoint))


def test_the_alias_leaves_no_assignment_in_the_generated_code():
    # value_and_grad: tc.grad leaves out the sum, whose value the gradient never reads
    source = tc.value_and_grad(builtin_name_shadowed_by_numpy).source
    assert "np.sum(" in source and "sum = " not in source


@pytest.mark.parametrize("fn", [rebound_alias, alias_bound_in_a_branch])
def test_a_local_that_may_name_several_functions_is_refused_with_its_line(fn):
    with pytest.raises(TangentCkptError) as info:
        tc.grad(fn)(X, 1.0)
    assert "cannot resolve the function act" in str(info.value)
    assert "test_local_function_aliases.py:" in str(info.value)
