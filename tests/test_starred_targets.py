"""desugar/starred_targets.py: starred unpacking ``a, *rest, z = xs`` of a list or
tuple whose length is known when compiling, written as the plain unpacking Python
does (the starred target a new list of its share), exact taped and checkpointed;
any other starred target refused, naming its line."""

import os

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TransformError

HERE = os.path.basename(__file__)
X = np.array([0.3, -0.7, 1.1])
CHECKPOINTED = [{}, {"checkpoint": True, "snapshots": 2}]


def display_split(x):
    a, *m, z = [x[0] * 2.0, x[1], x[2], x[0]]
    return a * z + m[0] * m[1] + len(m)


def name_bound_just_before(x):
    xs = (x[0], x[1] * 2.0, x[2])
    x0, *xs = xs  # the name itself rebound: its items read first
    return x0 * xs[1] + len(xs)


def name_bound_before_a_branch_and_a_loop(x, n):
    xs = [x[0], x[1] * 2.0, x[2]]
    s = 0.0
    if x[0] > 0:
        a, *m = xs
        s = a * m[1]
    for k in range(n):
        b, *r = xs
        s = s + b * r[0] * k
    return s


def nested_stars_in_a_loop_target(x):
    s = 0.0
    for (p, *q), r in [((x[0], x[1], x[2]), 1.0), ((x[2], x[0]), 2.0)]:
        s = s + p * r + len(q) * x[1] + np.sum(q[0])
    return s


def helper_with_a_star(x):
    def h(v):
        a, *b = v[0], v[1], v[2]
        return a * b[1]
    return h(x) + x[0]


@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f, args", [
    (display_split, (X,)), (name_bound_just_before, (X,)),
    (name_bound_before_a_branch_and_a_loop, (X, 3)), (nested_stars_in_a_loop_target, (X,)),
    (helper_with_a_star, (X,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_starred_unpacking_of_a_known_length_is_exact(f, args, options):
    df = tc.grad(f, **options)
    check_grad(f, args, df=df)
    np.testing.assert_allclose(tc.value_and_grad(f, **options)(*args)[0], f(*args))


def test_the_starred_target_is_its_share_as_a_new_list():
    text = desugared(display_split)
    assert "m = [x[1], x[2]]" in text and "*m" not in text, text
    text = desugared(name_bound_just_before)
    assert "x0, xs = (xs[0], [xs[1], xs[2]])" in text, text
    text = desugared(nested_stars_in_a_loop_target)
    assert "for (p, q), r in [((x[0], [x[1], x[2]]), 1.0), ((x[2], [x[0]]), 2.0)]:" in text, text


def rebound_in_the_loop(x, n):
    xs = (x[0], x[1] * 2.0, x[2])
    s = 0.0
    for k in range(n):
        a, *m = xs  # UNPACK
        s = s + a * m[1] * k
        xs = (xs[1], xs[2], s)
    return s


def test_a_name_the_loop_rebinds_is_refused_with_its_line():
    """The unpacking reads ``xs`` as the loop's previous trip left it: no display
    known where it is unpacked (this compiled before, through the lowering's
    tuples; no test, fuzz family or real program reaches it)."""
    with pytest.raises(TransformError) as info:
        tc.grad(rebound_in_the_loop)(X, 3)
    message = str(info.value)
    assert f"{HERE}:{line_of(rebound_in_the_loop, '# UNPACK')}:" in message, message
    assert "starred assignment" in message, message
