"""desugar/named_constructions.py: an object made and used at once
(``Model(W).loss(x)``) is bound to a name first, where it runs first in its
statement."""

import numpy as np
import pytest

import tangent_ckpt as tc
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


def made_by_a_method_call(W, x):
    model = Model(W)
    return model.loss(Model(W.T).loss(x) * x)   # model.loss is read before Model(W.T)


def made_beside_a_lambda(W, x):
    return np.sum(_apply(lambda v: v * 2.0, Model(W).W @ x))


def _apply(f, v):
    return f(v)


@pytest.mark.parametrize("f", [made_in_a_branch, made_by_a_method_call, made_beside_a_lambda],
                         ids=lambda f: f.__name__)
def test_an_object_made_in_a_branch_or_after_a_method_or_a_lambda_stays_where_it_is(f):
    """The object is made in one branch of ``if ... else``, or after the method
    it is handed to is read (``model.loss``), or after a ``lambda`` (no value to
    name first): the construction stays in its statement."""
    text = desugared_with_helpers(f).split("\n\n\n")[0]
    assert "Model(W" in text, text


@pytest.mark.parametrize("f, args, wrt", [(drawn_after, (X,), (0,)),
                                          (read_after_an_item, (X,), (0,)),
                                          (made_after_a_call, (W, X), (0, 1))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_what_runs_before_the_object_is_made_is_named_first_in_its_order(f, args, wrt):
    """A draw, an item read or a call comes first: each operand Python evaluates
    before the construction is bound to a name first, in its order, then the
    object (once the lowering's object, made where the statement ran)."""
    text = desugared(f)
    assert "operand = " in text and "Noisy(" not in text and "Model(" not in text, text
    made = {drawn_after: "noisy_w = ", read_after_an_item: "model_W = "}.get(f, "model_2_W = ")
    assert text.index("operand = ") < text.index(made), text
    value, _ = tc.value_and_grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_construct(f, args, wrt, autograd=False)
