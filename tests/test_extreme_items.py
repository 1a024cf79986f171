"""desugar/extreme_items.py: ``max(xs)``, ``min(xs)`` and ``ys = sorted(xs)`` of a
list or tuple whose items are known when compiling (desugar/known_items.py),
written with its items -- the pairs ``max(max(xs[0], xs[1]), xs[2])``, the
positions of Python's own sort -- exact taped and checkpointed against central
differences and Python's value; anything else left as written."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

X = np.array([0.3, -0.7, 1.1])
CHECKPOINTED = [{}, {"checkpoint": True, "snapshots": 2}]


def rebound_in_a_branch(x):
    xs = (x[0], x[1] * 2.0)
    if x[2] > 0:
        xs = (x[1], x[0])
    return max(xs) * 3.0 + min(xs)


def grown_by_appends(x):
    xs = [x[0]]
    xs.append(x[1] * 2.0)
    xs.append(x[2] - 1.0)
    ys = sorted(xs, reverse=True)
    return ys[0] * 2.0 + ys[1] * ys[2] + max(xs)


def sorted_inside_an_expression(x):
    xs = [x[0], x[1] * 2.0, x[2]]
    return sorted(xs)[0] * 2.0 + sorted(xs)[2]


def sorted_in_a_loop_of_a_list_it_grows(x, n):
    s = 0.0
    for t in range(n):
        xs = [x[0] * t, s]
        xs.append(x[1])
        ys = sorted(xs)
        s = s + ys[0] * ys[2] - ys[1]
    return s


def item_stores_keep_the_length(x):
    xs = [x[0], x[1], x[2]]
    xs[1] = xs[1] * 4.0
    return max(xs) - min(xs)


def tuple_of_a_helper(x):
    def pair(v):
        return v[0] * 2.0, v[1]
    p = pair(x)
    return max(p) + min(p)


def max_of_an_array_in_a_branch_and_of_a_product(x):
    y = x * 2.0
    s = min(y) if x[0] > 0 else max(y)      # a name: read where it stands
    return s + max(x * y) * min(abs(x))    # bound first: x_mul = x * y ...


def max_of_a_computed_value_in_a_branch(x):
    return max(abs(x)) if x[0] > 0 else 0.0  # computed twice: the same numbers


@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f, args", [
    (rebound_in_a_branch, (X,)), (rebound_in_a_branch, (-X,)), (grown_by_appends, (X,)),
    (sorted_inside_an_expression, (X,)), (sorted_in_a_loop_of_a_list_it_grows, (X, 3)),
    (item_stores_keep_the_length, (X,)), (tuple_of_a_helper, (X,)),
    (max_of_an_array_in_a_branch_and_of_a_product, (X,)),
    (max_of_a_computed_value_in_a_branch, (X,)), (max_of_a_computed_value_in_a_branch, (-X,)),
], ids=lambda v: getattr(v, "__name__", "x"))
def test_extremes_and_sorts_of_known_items_are_exact(f, args, options):
    np.testing.assert_allclose(tc.value_and_grad(f, **options)(*args)[0], f(*args))
    check_grad(f, args, df=tc.grad(f, **options))


def test_the_items_are_written_out():
    assert "max(max(xs[0], xs[1]), xs[2])" in desugared(grown_by_appends)
    text = desugared(max_of_an_array_in_a_branch_and_of_a_product)
    assert "y[min_position(y)] if x[0] > 0 else y[max_position(y)]" in text, text
    text = desugared(sorted_inside_an_expression)
    assert "xs_sorted = [item_at(xs_sorted_order, 0, xs[0], xs[1], xs[2])" in text, text
    assert "sorted(" not in text.replace("xs_sorted", ""), text


def sorted_display_of_names(a, b, c):
    ys = sorted([a, b, c])
    return ys[0] * ys[2]


def sorted_display_of_expressions(a, b, c):
    ys = sorted([a * 2.0, b, c], reverse=True)
    return ys[0] * ys[2] - ys[1]


@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [sorted_display_of_names, sorted_display_of_expressions])
def test_a_display_of_names_is_sorted_as_written_one_of_expressions_bound_first(f, options):
    args = (0.3, -0.7, 1.1)
    check_grad(f, args, wrt=(0, 1, 2), df=tc.grad(f, wrt=(0, 1, 2), **options))
    text = desugared(f)
    if f is sorted_display_of_names:  # (no ys = [a, b, c] copied item by item)
        assert "sorted_order([a, b, c])" in text and "ys = [a, b, c]" not in text, text
    else:
        assert "ys = [a * 2.0, b, c]" in text, text


def max_of_a_list_a_loop_changes(x):
    xs = [x[0], x[1]]
    s = 0.0
    while max(xs) < 3.0:  # the body grows xs: left as written
        xs.append(xs[-1] + 1.0)
        s = s + x[2]
    return s


def test_a_list_the_statement_may_change_is_read_at_its_position_when_it_runs():
    """Its items are not known where the test runs: the item at the position
    Python's max returns, found each time (``rt.max_position``)."""
    assert "while xs[max_position(xs)] < 3.0:" in desugared(max_of_a_list_a_loop_changes)
    f = max_of_a_list_a_loop_changes
    np.testing.assert_allclose(tc.value_and_grad(f)(X)[0], f(X))
    check_grad(f, (X,))


def max_of_a_name_bound_to_nothing(x):
    xs = []
    if x[0] > 0:
        xs = []
    return max(xs) + x[0]


def test_max_of_an_empty_list_is_refused():
    with pytest.raises(TangentCkptError, match=r"max\(\) of an empty list"):
        tc.grad(max_of_a_name_bound_to_nothing)(X)


def max_of_a_draw_in_a_branch(x):
    return max(np.random.rand(3) * x) if x[0] > 0 else 0.0


def max_with_a_key(x):
    return max(x, key=abs)


@pytest.mark.parametrize("f, words", [
    (max_of_a_draw_in_a_branch, "bind the value to a name first"),
    (max_with_a_key, r"max\(\) with key="),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_desugar_does_not_write_is_refused_with_its_line(f, words):
    """``max(draw)`` where Python may not evaluate it: binding the draw first would
    draw always, drawing twice would not be the same numbers (compiled before,
    by the lowering; no test, fuzz family or real program reaches it)."""
    with pytest.raises(TangentCkptError, match=words):
        tc.grad(f)(X)
