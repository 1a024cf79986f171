"""lower/inlining.py: the user's functions the lowering inlines (what desugar's
inliner leaves: a module-level ``functools.partial`` object, methods of objects
that stay objects, ...), their arguments evaluated in the order Python evaluates
them."""

import functools

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared


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


BIASED = functools.partial(_shifted, b=0.25, shift=0.5)  # keywords the call gives again


def a_partials_keyword_given_again(x):
    rng = np.random.default_rng(3)
    return np.sum(BIASED(x, b=rng.normal(), a=rng.normal()))


def a_partials_gathered_keyword_given_again(x):
    rng = np.random.default_rng(4)
    u = x
    for _ in range(3):
        u = np.tanh(BIASED(u, shift=rng.normal(), a=rng.normal(), b=rng.normal()))
    return np.sum(u)


def test_a_partials_keyword_the_call_gives_again_is_the_calls():
    """``partial(f, b=0.25)(x, b=...)`` calls ``f`` with the call's ``b`` (a
    ``**kw`` item too): the partial's keyword, left among the call's, crashed the
    order of evaluation with a KeyError (session 23 to 24)."""
    x = np.array([1.0, 2.0])
    for f in (a_partials_keyword_given_again, a_partials_gathered_keyword_given_again):
        value, _ = tc.value_and_grad(f)(x)
        assert value == f(x), f.__name__
        check_grad(f, [x])
        check_grad(f, [x], df=tc.grad(f, checkpoint=True, snapshots=2))


# what the lowering's inliner writes back to the caller (Inlining.write_back): a
# helper desugar leaves (its nested def reads its own names and it is called in a
# loop; a dict default) that writes into its parameter, called as a statement

def _nudged_through_a_closure(u, c):
    def g(v):
        return v * c
    u += g(np.sin(u))


def nudges_through_a_closure_in_a_loop(x, n):
    U = x * 1.0
    for t in range(n):
        _nudged_through_a_closure(U, 0.3)
    return np.sum(U ** 2)


def _scaled_by_options(u, opts={"rate": 0.5}):
    u *= opts["rate"]
    u += np.sin(u)


def scales_by_a_dict_default(x, n):
    U = x * 1.0
    for t in range(n):
        _scaled_by_options(U)
    return np.sum(U ** 2)


@pytest.mark.parametrize("f", [nudges_through_a_closure_in_a_loop, scales_by_a_dict_default])
@pytest.mark.parametrize("run", [dict(), dict(checkpoint=True, snapshots=2)],
                         ids=["taped", "snapshots2"])
def test_a_write_into_a_parameter_of_a_helper_the_lowering_inlines_is_written_back(f, run):
    """``u += ...`` in the helper is written back to the caller's ``U`` after the
    inlined body (the view pass marked the call), where ``U`` is an array (the
    ``isinstance`` test the lowering writes): Python's value and gradient.  No
    other test reaches the write-back since desugar inlines array defaults."""
    x = np.array([0.3, -0.2, 0.5])
    assert "as the lowering inlines it" in desugared(f)
    np.testing.assert_allclose(tc.value_and_grad(f, **run)(x, 3)[0], f(x, 3), rtol=1e-12)
    check_grad(f, [x, 3], df=tc.grad(f, **run))
    assert "_is_array = isinstance(" in tc.grad(f, **run).source
