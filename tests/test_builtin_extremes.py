"""desugar/extreme_items.py and runtime/primitive_adjoints/extreme_positions.py: Python's ``max(u)``
and ``min(u)`` of one iterable -- the item Python returns, read as ``u[k]`` --
taped, checkpointed and forward, against central differences; the position is
Python's own choice (first of ties, NaN items as Python compares them)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from tangent_ckpt.errors import TangentCkptError
from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import max_position, min_position

U = np.array([1.0, -3.0, 2.0, 0.5])


def cfl_steps(u, n):
    """An upwind step with the CFL time step dt = c / max(abs(u)), per step."""
    for _ in range(n):
        dt = 0.4 / max(abs(u))
        u = u - dt * u * (u - np.roll(u, 1))
    return np.sum(u ** 2)


def smallest_and_largest(u):
    return max(u) * np.sum(u) - min(u ** 2)


def extreme_of_an_integer_count(u):
    counts = np.arange(len(u))
    return np.sum(u) * max(counts)


@pytest.mark.parametrize("f, args", [
    (cfl_steps, (U, 3)),
    (smallest_and_largest, (U,)),
    (extreme_of_an_integer_count, (U,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_max_and_min_of_an_array_are_differentiated(f, args):
    """Refused before: "the call does not fit the adjoint rule of max: max()
    missing argument 'x2'" (the rule is max of two numbers)."""
    check_construct(f, args, (0,), autograd=False)


def test_max_of_an_array_in_forward_mode():
    t = np.array([0.3, -0.2, 0.7, 1.0])
    _, tangent = tc.jvp(smallest_and_largest)(U, t)
    eps = 1e-6
    fd = (smallest_and_largest(U + eps * t) - smallest_and_largest(U - eps * t)) / (2 * eps)
    np.testing.assert_allclose(tangent, fd, rtol=1e-6)


@pytest.mark.parametrize("values", [
    [1.0, 3.0, 3.0, 2.0],                 # ties: the first
    [np.nan, 1.0, 5.0],                    # a NaN first item is kept
    [1.0, np.nan, 5.0, np.nan],            # a later NaN never replaces
    [-np.inf, np.nan, -np.inf],
    [2, 7, 7, -1],
    [True, False, True],
    [0.5],
], ids=str)
def test_the_position_is_the_item_python_returns(values):
    """Python's own max and min over the positions, keyed by the items, compare
    the items as max(a) does: the oracle."""
    a = np.array(values)
    assert max_position(a) == max(range(len(a)), key=lambda i: a[i])
    assert min_position(a) == min(range(len(a)), key=lambda i: a[i])


def test_max_of_the_rows_of_a_matrix_fails_as_python_does():
    with pytest.raises(ValueError):
        max_position(np.ones((2, 3)))
    with pytest.raises(ValueError):
        max_position(np.array([]))


def max_with_a_key(u):
    return max(u, key=abs)


def max_of_a_named_list_of_values(u):
    values = [u[0], u[1] * 2.0, u[2]]
    return max(values)


def min_of_a_tuple_of_sums(u):
    sums = (np.sum(u[:2]), np.sum(u ** 2) * 0.1, u[3] * 3.0)
    return min(sums) * max(sums)


def extremes_of_a_comprehension_in_a_loop(u, n):
    s = 0.0
    for t in range(n):
        losses = [np.sum((u - k) ** 2) * (t + 1) for k in range(3)]
        s = s + max(losses) - min(losses)
    return s


def max_of_one_value(u):
    return max([u[1] * 2.0]) + min((u[0],))


@pytest.mark.parametrize("f, args", [
    (max_of_a_named_list_of_values, (U,)),
    (min_of_a_tuple_of_sums, (U,)),
    (extremes_of_a_comprehension_in_a_loop, (U, 3)),
    (max_of_one_value, (U,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_max_and_min_of_a_list_held_in_a_variable_are_differentiated(f, args):
    """``max(xs)`` of ``xs = [a, b, c]``: the pairs ``max(max(a, b), c)``, which keep
    the first largest as Python does (refused before: "max() of a list or tuple of
    values")."""
    check_construct(f, args, (0,), autograd=False)


def test_max_of_a_held_list_keeps_the_first_of_ties_and_nans_as_python():
    def first_largest(u):
        xs = [u[0], u[1], u[2]]
        return max(xs) * 10.0 + min(xs)
    for u in (np.array([2.0, 2.0, 1.0]), np.array([np.nan, 1.0, 5.0]),
              np.array([1.0, np.nan, 5.0])):
        df = tc.grad(first_largest)
        np.testing.assert_equal(tc.value_and_grad(first_largest)(u)[0], first_largest(u))
        assert np.all(np.isfinite(df(np.array([2.0, 2.0, 1.0]))))


def max_of_an_empty_list(u):
    xs = []
    return max(xs) + u[0]


def max_of_a_dict(u):
    d = {"a": u[0], "b": u[1]}
    return max(d)


@pytest.mark.parametrize("f, words", [
    (max_with_a_key, r"max\(\) with key="),
    (max_of_an_empty_list, r"max\(\) of an empty list"),
    (max_of_a_dict, r"max\(\) of a dict"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_is_not_followed_is_refused_with_what_it_is(f, words):
    with pytest.raises(TangentCkptError, match=words):
        tc.grad(f)(U)


def sorted_items(u):
    ys = sorted([u[2], u[0] * 1.5, u[1], u[3]])
    return ys[0] * 2.0 + ys[1] * ys[3] ** 2 - ys[2]


def sorted_items_reversed_in_a_loop(u, n):
    s = 0.0
    for t in range(n):
        ys = sorted((u[0] * t, u[1], s), reverse=True)
        s = s + ys[1] * ys[2] + ys[0]
    return s


@pytest.mark.parametrize("f, args", [(sorted_items, (U,)), (sorted_items_reversed_in_a_loop, (U, 3))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_sorted_of_values_known_when_compiling_is_differentiated(f, args):
    """``sorted([a, b, c])``: each item read at the position Python's sort leaves it
    (rt.sorted_order, found when the code runs); refused before ("no adjoint rule
    for builtins.sorted")."""
    check_construct(f, args, (0,), autograd=False)


@pytest.mark.parametrize("values, reverse", [
    ([2.0, 1.0, 2.0, 0.5], False), ([2.0, 1.0, 2.0, 0.5], True), ([np.nan, 1.0, 0.5], False),
    ([1.0, np.nan, 0.5, 3.0], True), ([3, 1, 2], False),
], ids=str)
def test_the_sorted_order_is_pythons(values, reverse):
    from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import item_at, sorted_order
    order = sorted_order(values, reverse)
    got = [item_at(order, k, *values) for k in range(len(values))]
    want = sorted(values, reverse=reverse)
    assert [id(v) for v in got] == [id(v) for v in want]


def test_sorted_of_constants_is_the_call_as_before():
    def scaled(x):
        return x * sorted((2.0, 1.0))[0]
    df = tc.grad(scaled)
    assert df(2.0) == 1.0 and "sorted_order" not in df.source
