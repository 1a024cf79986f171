"""desugar/named_constructions.py: an object made and used at once
(``Model(W).loss(x)``) is bound to a name first, where it runs first in its
statement."""

import numpy as np
import pytest

from construct_check import check_construct
from gradcheck import check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared as desugared_with_helpers

RNG = np.random.default_rng(30)
W = RNG.standard_normal((3, 3)) * 0.5
X = RNG.standard_normal(3)


def desugared(fn):
    """The printed desugared function alone (not the helpers listed after it)."""
    return desugared_with_helpers(fn).split("\n\n\n")[0]


class Model:
    def __init__(self, W):
        self.W = W * 1.0
        self.scale = 0.5

    def loss(self, x):
        return np.sum(np.tanh(self.W @ x) ** 2) * self.scale


class Noisy:
    def __init__(self, x, draws):
        self.w = x * draws.normal()


def returned_at_once(W, x):
    return Model(W).loss(x)


def read_inside_a_call(W, x):
    y = np.sum(Model(W).W @ x) * 2.0
    return y


def drawn_first(x):
    draws = np.random.default_rng(0)
    return np.sum(Noisy(x, draws).w * draws.normal())


@pytest.mark.parametrize("f, args, wrt", [
    (returned_at_once, (W, X), (0, 1)),
    (read_inside_a_call, (W, X), (0, 1)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_object_used_at_once_is_names(f, args, wrt):
    text = desugared(f)
    assert "Model" not in text and ".loss" not in text, text
    check_construct(f, args, wrt, autograd=False)


def test_the_object_is_made_where_python_makes_it():
    assert "noisy_w = " in desugared(drawn_first)
    check_value_and_grad(drawn_first, (X,))


def drawn_after(x):
    draws = np.random.default_rng(0)
    return np.sum(draws.normal() * Noisy(x, draws).w)


def read_after_an_item(x):
    return x[0] + np.sum(Model(np.outer(x, x)).W)


def made_in_a_branch(W, x, flag):
    return np.sum(x) if flag else Model(W).loss(x)


def made_after_a_call(W, x):
    return np.sum(Model(W).W @ x) + Model(W.T).loss(x)   # np.sum runs before the second


@pytest.mark.parametrize("f", [drawn_after, read_after_an_item, made_in_a_branch],
                         ids=lambda f: f.__name__)
def test_an_object_made_after_something_runs_or_in_a_branch_stays_where_it_is(f):
    """A draw or an item read comes first, or the object is made in one branch of
    ``if ... else``: the construction stays in its statement."""
    text = desugared(f)
    assert "Noisy(x, draws).w" in text or "Model(" in text, text


def test_only_the_construction_that_runs_first_is_named():
    text = desugared(made_after_a_call)
    assert "model_W = W * 1.0" in text and "Model(W.T).loss(x)" in text, text


def test_an_object_made_after_another_call_stays_the_lowerings_and_is_exact():
    check_construct(made_after_a_call, (W, X), (0, 1), autograd=False)
