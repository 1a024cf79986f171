"""desugar/enumerate_starts.py: ``enumerate(xs, start=k)`` is ``enumerate(xs, k)``;
a loop over it unrolled or indexed reads the start Python gives (it crashed
the lowering with an AttributeError and no file or line)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared

X = np.array([0.3, -0.2, 0.5])
MODES = [{}, {"checkpoint": True, "snapshots": 2}]


def weighted_by_a_start(x):
    out = x * 0.0
    for j, w in enumerate((0.5, 0.25), start=1):
        out = out + w * x / j
    return np.sum(out ** 2)


def _weighted(x):
    out = x * 0.0
    for j, w in enumerate([0.5, 0.25, 0.125], start=2):
        out = np.tanh(out + w * x * j)
    return out


def helper_weighted_by_a_start(x, n):
    for t in range(n):
        x = x + 0.1 * _weighted(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("options", MODES, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f, args", [
    (weighted_by_a_start, (X,)),
    (helper_weighted_by_a_start, (X, 3)),
], ids=["display", "helper_display"])
def test_a_start_given_by_keyword_is_the_start(f, args, options):
    check_grad(f, args, df=tc.grad(f, **options))
    value, _ = tc.value_and_grad(f, **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)


def _counted(items, start=0):
    return zip(range(start, start + len(items)), items)


def enumerate_of_the_users(x):
    enumerate = _counted  # noqa: A001 - the function's own enumerate, which is left
    out = x * 0.0
    for j, w in enumerate((0.5, 0.25), start=1):
        out = out + w * x / j
    return np.sum(out)


def test_a_users_own_enumerate_is_left_as_written():
    assert "start=1" in desugared(enumerate_of_the_users)
