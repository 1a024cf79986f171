"""desugar/evaluate_once.py: ``a = b = e`` and ``v[index] op= x`` evaluate the value,
and the index, once, as Python does, also where they draw random numbers."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, numeric_grad
from tangent_ckpt.compiler.pipeline import desugared

OPTIONS = {"taped": {}, "checkpointed": {"snapshots": 2}}


def _gradient(f, options):
    if options:
        return tc.grad_with_checkpointing(f, **options)
    return tc.grad(f)


def two_names_one_draw(x):
    rng = np.random.default_rng(4)
    a = b = x * rng.normal(size=3)
    return np.sum(a * b)


def three_names_in_a_loop(x):
    rng = np.random.default_rng(5)
    s = x
    for t in range(4):
        a = b = c = np.tanh(s * rng.normal(size=2))
        s = s + np.sum(a * b * c)
    return s


def write_into_one_of_two_names(x):
    a = b = np.zeros(3)
    a[0] = x
    return np.sum(b) * x


def write_into_two_places(x):
    u = np.zeros(3)
    w = np.ones(2)
    u[1] = w[0] = x * x
    return np.sum(u) + np.sum(w) * x


def drawn_index(x):
    rng = np.random.default_rng(6)
    v = np.arange(5.0) * x
    v[rng.integers(5)] += x * 2.0
    return np.sum(v * v)


def drawn_index_in_a_loop(x):
    rng = np.random.default_rng(7)
    v = np.arange(5.0) * x
    for t in range(4):
        v[rng.integers(5)] *= x
    return np.sum(v * v)


def drawn_slice_start_and_column(x):
    rng = np.random.default_rng(8)
    v = np.arange(6.0).reshape(2, 3) * x
    v[:, rng.integers(3)] -= x * x
    u = np.arange(4.0) * x
    u[rng.integers(4):] *= x
    return np.sum(v * v) + np.sum(u * u)


def value_before_place(x):
    # Python draws the value's index first, then the index stored into
    rng = np.random.default_rng(3)
    u = np.arange(4.0) * x
    for t in range(3):
        u[rng.integers(4)] = u[rng.integers(4)] * x
    return np.sum(u * u)


@pytest.mark.parametrize("mode", sorted(OPTIONS))
@pytest.mark.parametrize("f", [two_names_one_draw, three_names_in_a_loop,
                               write_into_one_of_two_names, write_into_two_places,
                               drawn_index, drawn_index_in_a_loop,
                               drawn_slice_start_and_column, value_before_place])
def test_gradient_evaluates_each_part_once(f, mode):
    check_grad(f, (1.3,), df=_gradient(f, OPTIONS[mode]))
    value, _ = tc.value_and_grad(f)(1.3)
    assert value == pytest.approx(f(1.3), rel=1e-12)


def test_one_draw_gives_what_python_gives_not_two():
    # two draws (a = x * n1, b = x * n2) would give 2x * sum(n1 * n2) instead
    (expected,) = numeric_grad(two_names_one_draw, (0.8,))
    rng = np.random.default_rng(4)
    n = rng.normal(size=3)
    assert expected == pytest.approx(2 * 0.8 * np.sum(n * n), rel=1e-6)
    assert tc.grad(two_names_one_draw)(0.8) == pytest.approx(expected, rel=1e-6)


def test_desugar_binds_the_later_names_to_the_first():
    text = desugared(two_names_one_draw)
    assert "a = x * rng.normal(size=3)" in text
    assert "b = a" in text
    assert "a = b =" not in text


def test_desugar_takes_a_drawn_index_out_first():
    text = desugared(drawn_slice_start_and_column)
    assert "v_index = rng.integers(3)" in text
    assert "v[:, v_index] -= x * x" in text
    assert "u_start = rng.integers(4)" in text
    assert "u[u_start:] *= x" in text


def test_the_value_is_taken_before_the_place_it_goes():
    text = desugared(value_before_place)
    lines = [line.strip() for line in text.splitlines()]
    value = lines.index("u_value = u[rng.integers(4)] * x")
    assert lines[value + 1] == "u_index = rng.integers(4)"
    assert lines[value + 2] == "u[u_index] = u_value"


def test_an_index_that_calls_nothing_stays_where_it_is():
    def plain(x):
        v = np.arange(4.0) * x
        i = 1
        v[i + 1] += x
        a = b = 2.0 * x
        return np.sum(v) + a * b
    text = desugared(plain)
    assert "v[i + 1] += x" in text
    check_grad(plain, (0.7,))


def test_the_new_name_does_not_take_a_users_name():
    def taken(x):
        rng = np.random.default_rng(1)
        v_index = 2.0
        v = np.arange(4.0) * x
        v[rng.integers(4)] += x * v_index
        return np.sum(v * v)
    assert "v_index_2 = rng.integers(4)" in desugared(taken)
    check_grad(taken, (0.9,))


def test_a_helper_and_a_method_evaluate_once_too():
    def bump(v, x, rng):
        v[rng.integers(4)] += x
        a = b = v * x
        return a + b

    class Stepper:
        def __init__(self, w, rng):
            self.w = w
            self.rng = rng

        def step(self, v):
            v[self.rng.integers(4):] *= self.w
            p = q = np.tanh(v)
            return p * q

    def f(x):
        rng = np.random.default_rng(2)
        m = Stepper(x, rng)
        v = np.arange(4.0) * x
        for t in range(3):
            v = bump(v, x, rng) * 0.5
            v = m.step(v) * 0.7
        return np.sum(v * v)

    for options in OPTIONS.values():
        check_grad(f, (1.1,), df=_gradient(f, options))


# a tuple of places stored from a tuple of values that read them: NumPy builds the
# tuple of values first (views of the rows, not copies), then stores left to right,
# so ``a[0], a[1] = a[1], a[0]`` copies row 1 into both rows, a true swap needs
# .copy(); the gradient must be that of what NumPy computes (q37, q38w)
W = np.arange(6.0).reshape(2, 3) + 1.0


def row_swap_through_views(x):
    a = np.arange(6.0).reshape(2, 3) * x
    a[0], a[1] = a[1], a[0]
    return np.sum(a * W)


def column_swap_through_views(x):
    a = np.arange(6.0).reshape(2, 3) * x
    a[:, 0], a[:, 2] = a[:, 2], a[:, 0]
    return np.sum(a * W)


def halves_rotated(x):
    y = np.arange(4.0) * x
    y[:2], y[2:] = y[2:], y[:2]
    return np.sum(y * np.arange(4.0))


def ring_buffer_in_a_loop(x):
    b = np.arange(6.0).reshape(3, 2) * x
    for t in range(3):
        b[1:], b[0] = b[:-1], b[-1] * x
    return np.sum(b * W.reshape(3, 2))


def one_row_copied(x):
    a = np.arange(6.0).reshape(2, 3) * x
    a[0], a[1] = a[1].copy(), a[0]
    return np.sum(a * W)


def true_swap(x):
    a = np.arange(6.0).reshape(2, 3) * x
    a[0], a[1] = a[1].copy(), a[0].copy()
    return np.sum(a * W)


def pivoting_elimination(A0):
    A = np.array(A0, dtype=float)
    for i in range(A.shape[0]):
        p = i + int(np.argmax(np.abs(A[i:, i])))
        A[i], A[p] = A[p], A[i]
        A[i + 1:] = A[i + 1:] - np.outer(A[i + 1:, i] / A[i, i], A[i])
    return np.sum(A * A)


@pytest.mark.parametrize("mode", sorted(OPTIONS))
@pytest.mark.parametrize("f", [row_swap_through_views, column_swap_through_views,
                               halves_rotated, ring_buffer_in_a_loop, true_swap])
def test_tuple_store_sees_the_rows_it_already_wrote(f, mode):
    check_grad(f, (1.3,), df=_gradient(f, OPTIONS[mode]))


def test_row_swap_through_views_copies_one_row_into_both_as_numpy_does():
    a = np.arange(6.0).reshape(2, 3)
    a[0], a[1] = a[1], a[0]
    assert np.array_equal(a[0], a[1])  # NumPy's own result, which the gradient follows
    # d/dx sum(a * W) with both rows x * [3, 4, 5]: [3, 4, 5] . (W[0] + W[1])
    expected = np.dot([3.0, 4.0, 5.0], W[0] + W[1])
    assert tc.grad(row_swap_through_views)(1.3) == pytest.approx(expected, rel=1e-12)


def pivoting_on_a_rebound_parameter(A):
    A = A.copy()   # a list's copy is a list: whether A[i] is a view is not known here
    for i in range(A.shape[0]):
        p = i + int(np.argmax(np.abs(A[i:, i])))
        A[i], A[p] = A[p], A[i]
    return np.sum(A * A)


def test_a_row_copied_beside_a_view_of_the_other_is_refused_not_taken_for_a_swap():
    # a[1].copy() is taken to keep a (the view pass does not follow a group whose
    # root escapes); following it made the fence follow groups of generated tangent
    # code too, which tc.hvp then refused on Dask arrays (tests/test_backends.py)
    with pytest.raises(tc.TangentCkptError, match="may also change 'a_item_2'"):
        tc.grad(one_row_copied)(1.3)


def test_a_row_swap_on_what_may_be_a_list_is_refused_not_taken_for_a_swap():
    with pytest.raises(tc.TangentCkptError, match="may also change 'A_item_2'"):
        tc.grad(pivoting_on_a_rebound_parameter)(np.eye(3) + 1.0)


@pytest.mark.parametrize("mode", sorted(OPTIONS))
def test_partial_pivoting_swap_rows_by_a_computed_index(mode):
    A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5], [7.0, 8.2, 10.0]])
    check_grad(pivoting_elimination, (A,), df=_gradient(pivoting_elimination, OPTIONS[mode]))


def test_desugar_takes_the_items_before_the_stores():
    text = desugared(row_swap_through_views)
    lines = [line.strip() for line in text.splitlines()]
    order = [lines.index(line) for line in ("a_item = a[1]", "a_item_2 = a[0]",
                                            "a[0] = a_item", "a[1] = a_item_2")]
    assert order == sorted(order)
    # the second item, a view of row 0, is taken again after row 0 is written
    assert "a_item_2 = a[0]" in lines[order[2]:order[3]]


def test_a_swap_of_names_is_left_to_the_lowering():
    def names(x):
        u = np.arange(3.0) * x
        v = np.ones(3) * x * x
        u, v = v, u
        return np.sum(u * np.arange(3.0)) + np.sum(v)
    assert "u, v = (v, u)" in desugared(names)
    check_grad(names, (0.8,))
