"""desugar/partial_calls.py: ``p = functools.partial(f, a, k=v)`` bound once, each
call ``p(x)`` written ``f(a, x, k=v)``, what the partial binds evaluated where it
ran; any other partial is left for the lowering."""

import functools
from functools import partial

import numpy as np

from construct_check import check_construct
from gradcheck import check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared

RNG = np.random.default_rng(30)
X = RNG.standard_normal(3)
W = RNG.standard_normal((3, 3)) * 0.5


def scaled(x, W, scale=1.0):
    return scale * np.tanh(W @ x)


def scale_by(k, v):
    return k * v


def bound_parameters(x, W):
    layer = functools.partial(scaled, W=W, scale=2.0)
    return np.sum(layer(x) * x)


def test_a_partial_of_parameters_is_a_call_of_its_function():
    text = desugared(bound_parameters)
    assert "partial" not in text and "layer" not in text, text
    assert "2.0 * np.tanh(W @ x)" in text, text
    check_construct(bound_parameters, (X, W), (0, 1))


def rebound_after(x):
    s = 2.0 * x
    h = functools.partial(scale_by, s)
    s = 5.0 * x
    return np.sum(h(x)) + np.sum(s)


def test_an_argument_rebound_after_is_the_object_bound():
    text = desugared(rebound_after)
    assert "s_2 = s\n" in text and "s_2 * x" in text, text
    check_value_and_grad(rebound_after, (np.array([0.3, 0.4]),))
    check_construct(rebound_after, (X,))


def bound_expression(x, W):
    p = partial(scaled, W=W * 0.5)   # evaluated once, where partial runs
    h = x
    for _ in range(3):
        h = p(h)
    return np.sum(h ** 2)


def test_an_expression_is_evaluated_once_and_the_loop_checkpointed():
    text = desugared(bound_expression)
    assert "W_2 = W * 0.5" in text and "partial" not in text, text
    assert text.count("W * 0.5") == 1, text
    check_construct(bound_expression, (X, W), (0, 1))


def keyword_replaced(x, W):
    p = functools.partial(scaled, W=W, scale=2.0)
    return np.sum(p(x, scale=3.0)) + np.sum(p(x))


def test_a_keyword_the_call_passes_replaces_the_bound_one():
    text = desugared(keyword_replaced)
    assert "3.0 * np.tanh" in text and "2.0 * np.tanh" in text, text
    check_value_and_grad(keyword_replaced, (X, W), wrt=(0, 1))


def fixed_point(f, x0, n=3):
    x = x0
    for _ in range(n):
        x = f(x)
    return x


def handed_on(x, W):
    p = functools.partial(scaled, W=W)
    return np.sum(fixed_point(p, x))


def test_a_partial_handed_to_an_inlined_helper_is_written_too():
    """Inlined, ``fixed_point``'s ``f(x)`` is ``p(x)``: the next round writes it."""
    text = desugared(handed_on)
    assert "partial" not in text and "np.tanh(W @ x_2)" in text, text
    check_construct(handed_on, (X, W), (0, 1))


def in_a_branch(x, c):
    if c:
        p = functools.partial(scale_by, 2.0)
    else:
        p = functools.partial(scale_by, 3.0)
    return np.sum(p(x))


def test_a_partial_bound_twice_is_left():
    assert desugared(in_a_branch).count("functools.partial") == 2


def makes_a_partial(x, s):
    q = functools.partial(scale_by, s * 2.0)
    return q(x)


def through_a_helper(x):
    return np.sum(makes_a_partial(x, np.sum(x)) ** 2)


def test_a_partial_of_an_inlined_helper_is_written_too():
    text = desugared(through_a_helper)
    assert "functools" not in text and "q_2 = s * 2.0" in text, text
    check_construct(through_a_helper, (X,))


def of_a_lambda(x):
    p = functools.partial(lambda a, b: a * np.sin(b), 2.0)
    return np.sum(p(x))


class Scale:
    def __init__(self, c):
        self.c = c

    def apply(self, k, v):
        return self.c * k * np.sin(v)


def of_a_method(x):
    s = Scale(3.0)
    p = functools.partial(s.apply, 0.5)
    return np.sum(p(x) * x)


def test_a_partial_of_a_lambda_or_a_method_names_it_where_partial_ran():
    """The lowering held these as a PartialValue; desugar names the function where
    ``partial`` ran (``p_fn = lambda ...``) and the inliner writes the call out."""
    for f in (of_a_lambda, of_a_method):
        text = desugared(f)
        assert "partial" not in text, text
        check_value_and_grad(f, (X,))
        check_construct(f, (X,), (0,))
