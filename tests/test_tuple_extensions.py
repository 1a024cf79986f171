"""desugar/tuple_extensions.py: ``t += (x,)`` on a local surely holding a tuple is
``t = t + (x,)``, a new tuple an alias of the old one does not see (it was
refused with a wrong reason: "a different length ... on the two paths of this
if"), taped and checkpointed against finite differences and Python's value."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared

X = np.array([0.3, -0.5, 0.8])
MODES = [{}, {"checkpoint": True, "snapshots": 2}]


def alias_of_the_empty_tuple(x):
    states = ()
    before = states
    states += (x * 2.0,)
    states += (np.sin(x),)
    return np.sum(states[0] * states[1]) + len(before)


def extended_in_a_branch(x):
    t = ()
    u = t
    if np.sum(x) > 0:
        t += (x,)
    else:
        t += (2.0 * x,)
    return np.sum(t[0] ** 2) + len(u)


@pytest.mark.parametrize("options", MODES, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [alias_of_the_empty_tuple, extended_in_a_branch],
                         ids=lambda f: f.__name__)
def test_an_alias_keeps_the_tuple_of_before(f, options):
    check_grad(f, (X,), df=tc.grad(f, **options))
    value, _ = tc.value_and_grad(f, **options)(X)
    assert value == pytest.approx(f(X), rel=1e-12)


def list_alias(x):
    xs = [x]
    same = xs
    xs += [x * 3.0]     # a list: extended in place, the alias sees it
    return np.sum(same[1]) + len(same)


def test_a_list_is_left_as_written():
    assert "xs += [x * 3.0]" in desugared(list_alias) or "xs.append" in desugared(list_alias)
    value, _ = tc.value_and_grad(list_alias)(X)
    assert value == pytest.approx(list_alias(X), rel=1e-12)
