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
