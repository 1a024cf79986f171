"""compiler/desugar/raising_branches.py with lower/observers.py's ``raise``: an
input check that raises is kept in the forward sweep, where the user wrote it,
and the rest of the function is the path it does not take.  Gradients taped and
checkpointed against central finite differences where the check passes; where
it fails, the gradient raises the user's exception with the user's message, at
the same step of a loop; a computed message is built only when raising; a bare
``raise`` stays refused."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

RUNS = [dict(), dict(checkpoint=True), dict(checkpoint=True, snapshots=2)]
RUN_IDS = ["taped", "checkpoint", "snapshots2"]
X = np.array([0.3, -0.2, 0.5])


def guarded(x):
    if x.ndim != 1:
        raise ValueError("need a vector")
    return np.sum(np.roll(x, 1) * x)


def elif_chain(x, mode):
    if mode == 0:
        y = np.sin(x)
    elif mode == 1:
        y = np.cos(x)
    else:
        raise ValueError(f"unknown mode {mode}")
    return np.sum(y * y)


def return_or_raise(x):
    if np.all(x > -5.0):
        return np.sum(x ** 3)
    raise ValueError("too small: " + str(np.min(x)))


def check_in_the_else(x):
    if np.all(np.isfinite(x)):
        y = x * 2.0
    else:
        raise FloatingPointError("not finite")
    return np.sum(y ** 2)


def diverges(x, n):
    h = x * 1.0
    for t in range(n):
        if np.any(np.abs(h) > 3.0):
            raise FloatingPointError(f"diverged at step {t}")
        h = h * 1.5 + x
    return np.sum(h)


def lazy_message(x):
    if x.shape[0] > 5:
        raise IndexError(f"too long: {x[7]}")   # x[7] exists only when raising
    return np.sum(x ** 2)


def _check_vector(A):
    if len(A.shape) != 1:
        raise Exception("dimensions: [" + str(len(A.shape)) + "]")
    return A


def check_in_a_helper(x):
    return np.sum(np.sin(_check_vector(x)))


@pytest.mark.parametrize("options", RUNS, ids=RUN_IDS)
@pytest.mark.parametrize("fn, args", [
    (guarded, (X,)),
    (elif_chain, (X, 1)),
    (return_or_raise, (X,)),
    (check_in_the_else, (X,)),
    (diverges, (X * 0.1, 3)),
    (lazy_message, (X,)),
    (check_in_a_helper, (X,)),
])
def test_a_check_that_passes_leaves_the_gradient_exact(fn, args, options):
    df = tc.grad(fn, **options)
    check_grad(fn, args, df=df)


def test_checkpointed_gradient_equals_taped():
    taped = tc.grad(diverges)(X * 0.1, 3)
    checkpointed = tc.grad(diverges, checkpoint=True, snapshots=2)(X * 0.1, 3)
    np.testing.assert_allclose(checkpointed, taped, rtol=1e-12, atol=0)


@pytest.mark.parametrize("options", RUNS, ids=RUN_IDS)
@pytest.mark.parametrize("fn, args", [
    (guarded, (np.ones((2, 2)),)),
    (elif_chain, (X, 3)),
    (return_or_raise, (X - 10.0,)),
    (check_in_the_else, (X * np.nan,)),
    (diverges, (X, 6)),                         # at step 3
    (lazy_message, (np.arange(9.0),)),
    (check_in_a_helper, (np.ones((2, 2)),)),
])
def test_a_check_that_fails_raises_what_the_function_raises(fn, args, options):
    with pytest.raises(Exception) as by_the_function:
        fn(*args)
    with pytest.raises(type(by_the_function.value)) as by_the_gradient:
        tc.grad(fn, **options)(*args)
    assert str(by_the_gradient.value) == str(by_the_function.value)
    assert not isinstance(by_the_gradient.value, TangentCkptError)


def test_a_check_fails_in_forward_mode_too():
    with pytest.raises(ValueError, match="need a vector"):
        tc.jvp(guarded)(np.ones((2, 2)), np.ones((2, 2)))
    value, tangent = tc.jvp(guarded)(X, np.ones(3))
    assert value == pytest.approx(guarded(X))


def test_desugar_makes_the_other_path_follow_the_check():
    text = desugared(elif_chain)
    assert "if mode != 1:\n            raise ValueError(f'unknown mode {mode}')\n" \
        "        y = np.cos(x)" in text
    text = desugared(return_or_raise)
    assert "if not np.all(x > -5.0):\n        raise ValueError" in text
    assert text.rstrip().endswith("return np.sum(x ** 3)")


def test_the_gradient_reads_as_the_check():
    df = tc.grad(guarded)
    df(X)
    assert "rt.raise_error(ValueError('need a vector'))" in df.source


def bare_raise(x):
    if x.ndim != 1:
        raise                               # RAISE: nothing to re-raise
    return np.sum(x)


def test_a_bare_raise_stays_refused():
    with pytest.raises(TangentCkptError, match="bare raise") as raised:
        tc.grad(bare_raise)(X)
    assert f":{line_of(bare_raise, '# RAISE')}:" in str(raised.value)
