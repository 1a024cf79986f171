"""lower/inlining.py: the user's functions the lowering inlines (what desugar's
inliner leaves: a module-level ``functools.partial`` object, methods of objects
that stay objects, ...), their arguments evaluated in the order Python evaluates
them."""

import functools

import numpy as np

import tangent_ckpt as tc
from gradcheck import check_grad


def _shifted(x, a, b=0.0, **kw):
    return x * a - 3.0 * b + kw.get("shift", 0.0)


SHIFTED = functools.partial(_shifted)  # made at module level: the lowering inlines it


def keywords_drawn_out_of_parameter_order(x):
    rng = np.random.default_rng(1)
    return np.sum(SHIFTED(x, b=rng.normal(), a=rng.normal()))


def keywords_gathered_around_a_named_one(x):
    rng = np.random.default_rng(2)
    return np.sum(SHIFTED(x, shift=rng.normal(), a=rng.normal(), b=rng.normal()))


def test_keywords_are_evaluated_in_the_calls_order_not_the_parameters():
    """``b=rng.normal(), a=rng.normal()``: the parameters were bound in their own
    order, ``a`` first, so ``a`` took the first draw (a value and a gradient of
    another program); the ``**kw`` items were evaluated after every named one."""
    x = np.array([1.0, 2.0])
    for f in (keywords_drawn_out_of_parameter_order, keywords_gathered_around_a_named_one):
        value, _ = tc.value_and_grad(f)(x)
        assert value == f(x), f.__name__
        check_grad(f, [x])
        check_grad(f, [x], df=tc.grad(f, checkpoint=True, snapshots=2))
