"""Assignment forms (lower/statements.py): tuple targets with subscripts, nested
subscripts, chained assignment, shapes kept in tuple variables, ``x.shape[0]``
-driven loops -- each against central finite differences, taped and
checkpointed where there is a loop."""

import os

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.errors import TransformError

HERE = os.path.basename(__file__)
rng = np.random.default_rng(8)
CHECKPOINTED = [{}, {"checkpoint": True, "snapshots": 2}]


def vec(*shape):
    return rng.standard_normal(shape)


def sir(beta, gamma, y0, n):
    S, I, R = np.zeros(n + 1), np.zeros(n + 1), np.zeros(n + 1)
    S[0], I[0], R[0] = y0[0], y0[1], y0[2]
    for t in range(n):
        infections = beta * S[t] * I[t]
        S[t + 1], I[t + 1], R[t + 1] = (S[t] - 0.1 * infections, I[t] + 0.1 * infections
                                        - 0.1 * gamma * I[t], R[t] + 0.1 * gamma * I[t])
    return I[n] + 0.5 * R[n]


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_tuple_targets_with_subscripts(options):
    check_grad(sir, (1.3, 0.4, np.array([0.9, 0.1, 0.0]), 8), wrt=(0, 1, 2),
               df=tc.grad(sir, wrt=(0, 1, 2), **options))


def nested_subscripts(x, n):
    xs = np.zeros((n, 3))
    for t in range(n):
        for i in range(3):
            xs[t][i] = np.sin(x[i]) * (t + 1)
    xs[0][1] = 1.0
    return np.sum(xs ** 2)


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_nested_subscript_writes(options):
    check_grad(nested_subscripts, (vec(3), 4), df=tc.grad(nested_subscripts, **options))


def chained(x):
    a = b = x * 2.0
    c = d = e = np.sin(a) + b
    return np.sum(a * b + c * d * e)


def test_chained_assignment():
    check_grad(chained, (vec(3),))


def shape_in_a_tuple(x, n):
    sz = (n,)
    grid = (n, 2)
    z = np.zeros(sz) + np.sum(x)
    w = np.ones(grid) * x[0]
    return np.sum(z ** 2) + np.sum(np.reshape(w, grid[::-1]) ** 3)


def test_shape_kept_in_a_tuple_variable():
    check_grad(shape_in_a_tuple, (vec(3), 4))


def shape_driven(x, W):
    h = np.zeros(W.shape[0])
    for i in range(x.shape[0]):
        h = np.tanh(W @ h + x[i])
    return np.sum(h)


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_shape_driven_loop(options):
    check_grad(shape_driven, (vec(5), vec(3, 3) * 0.5), wrt=(0, 1),
               df=tc.grad(shape_driven, wrt=(0, 1), **options))


def nested_write_through_a_slice(x):
    xs = np.zeros((3, 3))
    xs[1:][0] = x
    return np.sum(xs)


def row_stored_from_a_row_vector(v, W, n):
    """theta_history[it, :] = theta.T (a (1, k) value into a (k,) row: NumPy drops
    the leading axis of length 1), an RNN's H[t] = h with h of shape (1, k)."""
    H = np.zeros((n, 2))
    h = v
    for t in range(n):
        h = np.tanh(h @ W)
        H[t] = h
        H[t, :] = h * 0.5 + H[t]
    return np.sum(H * np.array([1.0, 2.0]))


def column_stored_into_a_row(theta):
    history = np.zeros((3, 2))
    history[0, :] = theta.T
    history[1] = theta.reshape(1, 2) * 3.0
    return np.sum(history * np.array([1.0, 2.0]))


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_a_value_with_leading_axes_of_length_one_stored_into_a_row(options):
    """The adjoint of such a value summed along its axis of length 1 ([3, 3] for
    [1, 2]: a wrong gradient), or the adjoint of its reshape raised."""
    check_grad(row_stored_from_a_row_vector, (vec(1, 2), vec(2, 2), 3), wrt=(0, 1),
               df=tc.grad(row_stored_from_a_row_vector, wrt=(0, 1), **options))
    check_grad(column_stored_into_a_row, (vec(2, 1),),
               df=tc.grad(column_stored_into_a_row, **options))


def tuple_items_of_a_tuple_target(x):
    S = np.zeros((3, 2))
    cache = [0.0, 0.0]
    S[0], S[1] = (x[1], x[0] * 2.0), x * 3.0
    cache[0], cache[1] = (x[1], x[0]), x[0]
    return np.sum(S ** 2) + np.sum(np.asarray(cache[0]) ** 2) * cache[1]


def caches_in_dicts_at_run_time_keys(x, n):
    hs, ps = {}, {}
    for i in range(n):
        hs[i], ps[i] = np.tanh(x), (x, x * 3.0)  # STORE
        x = hs[i]
    return np.sum(x)


def test_a_tuple_item_of_a_tuple_target_is_stored_as_a_plain_store_stores_it():
    """S[0], S[1] = (a, b), v: the row gets np.asarray((a, b)), as S[0] = (a, b)
    does, and a list's item the tuple (refused as 'a tuple stored into an array
    element', also where the base was a list or a dict)."""
    check_grad(tuple_items_of_a_tuple_target, (vec(2),))
    with pytest.raises(TransformError) as info:
        tc.grad(caches_in_dicts_at_run_time_keys)(vec(2), 3)
    message = str(info.value)
    assert f"{HERE}:{line_of(caches_in_dicts_at_run_time_keys, '# STORE')}:" in message
    assert "a list, tuple or dict stored in a dict at a run-time key" in message, message


def test_nested_write_through_a_slice_is_refused():
    with pytest.raises(TransformError) as info:
        tc.grad(nested_write_through_a_slice).compile()
    assert f"{HERE}:{line_of(nested_write_through_a_slice, 'xs[1:][0] = x')}:" in \
        str(info.value)
    assert "xs[1:][0]" in str(info.value) or "xs[1:][0]" in info.value.construct


# --- a op= b on an array keeps the array's dtype and shape, or raises (rt.in_place_result)
def float32_state_scaled(x, n):
    y = np.ones(3, dtype=np.float32)
    for t in range(n):
        y *= x
        y += 0.5
    return np.sum(y)


def test_an_in_place_operator_keeps_a_float32_array_float32():
    """``y *= x`` on a float32 array stays float32 in Python; read as ``y = y * x``
    the value came back in float64, with other numbers."""
    x = np.array([1.1, 0.7, 1.3])
    for options in CHECKPOINTED:
        value, grad = tc.value_and_grad(float32_state_scaled, **options)(x, 3)
        expected = float32_state_scaled(x, 3)
        assert type(value) is type(expected) and value == expected
        assert grad.dtype == np.float64  # the argument's dtype
        # the derivative of the float64 program, to float32's precision
        np.testing.assert_allclose(grad, tc.grad(float64_state_scaled)(x, 3), rtol=1e-6)
    check_grad(float64_state_scaled, (x, 3))


def float64_state_scaled(x, n):
    y = np.ones(3)
    for t in range(n):
        y *= x
        y += 0.5
    return np.sum(y)


def int_array_plus_half(x):
    a = np.arange(3)
    a += 0.5 * x
    return np.sum(a)


def int_slice_plus_half(x):
    a = np.zeros(3, dtype=int)
    a[0:2] += 1.5
    return np.sum(a) * np.sum(x)


def widened_by_broadcasting(x):
    a = np.zeros(3)
    a += np.ones((2, 3)) * x
    return np.sum(a)


def widened_in_a_loop(x, n):
    h = x * 1.0
    for t in range(n):
        h += np.outer(x, x)[:, :1]
    return np.sum(h)


@pytest.mark.parametrize("f, args, error", [
    (int_array_plus_half, (np.array([0.1, 0.2, 0.3]),), TypeError),
    (int_slice_plus_half, (np.array([0.1, 0.2, 0.3]),), TypeError),
    (widened_by_broadcasting, (np.array([0.1, 0.2, 0.3]),), ValueError),
    (widened_in_a_loop, (np.array([0.1, 0.2, 0.3]), 3), ValueError),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
def test_an_in_place_operator_raises_where_numpy_raises(f, args, error, options):
    """NumPy raises for an int array ``+= 0.5`` (same_kind casting) and for a
    result of another shape than the target; the gradient returned a number."""
    with pytest.raises(error):
        f(*args)
    with pytest.raises(error, match="in-place operator"):
        tc.grad(f, **options)(*args)


def numbers_and_arrays_updated(x, n):
    s = 0.0
    h = np.zeros_like(x)
    for t in range(n):
        s += np.sum(x * t)
        h -= 0.1 * np.tanh(h + x)
        h[0] *= 1.01
    return s + np.sum(h ** 2)


@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
def test_in_place_operators_on_numbers_and_arrays_differentiate(options):
    check_grad(numbers_and_arrays_updated, (np.array([0.3, -0.2, 0.5]), 4),
               df=tc.grad(numbers_and_arrays_updated, **options))


def spectral_steps(u0, n):
    u = np.fft.fft(u0)
    k = np.arange(u0.size)
    for t in range(n):
        u *= np.exp(-0.1 * k ** 2)
        u += 0.01 * u0
    return np.sum(np.abs(np.fft.ifft(u)) ** 2)


@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
def test_an_in_place_operator_on_a_complex_array_differentiates(options):
    """``u *= np.exp(...)`` on an FFT: rt.in_place_result passes a complex
    adjoint through (it was refused as a rule written for real input)."""
    check_grad(spectral_steps, (np.array([0.3, -0.2, 0.5, 0.1]), 3),
               df=tc.grad(spectral_steps, **options))


# a, *rest = xs: starred unpacking of a list or tuple whose items are known when
# compiling (refused before: "starred assignment"); the starred name is a new list.

def _pair(x):
    return x[0], x[1] * 2.0, x[2] * 3.0


def head_and_rest(x):
    h, *rest = _pair(x)
    return h * rest[1] + len(rest)


def rest_and_last_of_a_list(x):
    *rest, last = [x[0] * 2.0, x[1], x[2]]
    return last * rest[0] + rest[1] ** 2


def star_takes_nothing(x):
    h, *rest, z = (x[0], x[2])
    return h * z + len(rest)


def nested_and_swapping_stars(x):
    p, q = x[0], x[1]
    p, *q = q, p, 2.0     # q on the right is read before p is rebound
    (u, *v), w = (x[0], x[1], x[2]), x[2]
    return p * 10.0 + q[0] * q[1] + u * v[1] * w


def star_in_a_loop_target_and_a_loop(x, n):
    s = x[0]
    for k in range(n):
        first, *rest = (s, x[1] * k, x[2])
        s = first * 0.5 + rest[0] * rest[1]
    for p, *q in [(x[0], x[1], x[2]), (x[1], x[2], x[0])]:
        s = s + p * q[1]
    return s


STARRED = [head_and_rest, rest_and_last_of_a_list, star_takes_nothing, nested_and_swapping_stars]


@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", STARRED, ids=lambda f: f.__name__)
def test_starred_unpacking_of_items_known_when_compiling_is_exact(f, options):
    check_grad(f, (vec(3),), df=tc.grad(f, **options))


@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
def test_starred_unpacking_in_loops_is_exact(options):
    f = star_in_a_loop_target_and_a_loop
    check_grad(f, (vec(3), 3), df=tc.grad(f, **options))


def too_few_for_the_star(x):
    a, b, *c = [x[0]]  # UNPACK
    return a


def star_of_an_array(x):
    first, *rest = x  # UNPACK
    return first


@pytest.mark.parametrize("f, words", [
    (too_few_for_the_star, "not enough values to unpack"),
    (star_of_an_array, "length is known only when the code runs"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_starred_unpacking_refused_with_its_line(f, words):
    with pytest.raises(TransformError) as info:
        tc.grad(f)(vec(3))
    message = str(info.value)
    assert f"{HERE}:{line_of(f, '# UNPACK')}:" in message, message
    assert words in message, message


def swap_into_a_list(x):
    p, q = x[0], x[1]
    p, q = q, [p, 2.0]  # the list reads p before p is rebound
    return p * 10.0 + q[0] * q[1]


def swap_into_a_dict(x):
    p, q = x[0], x[1]
    p, q = q, {"a": p, "b": 2.0}
    return p * 10.0 + q["a"] * q["b"]


@pytest.mark.parametrize("options", CHECKPOINTED, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [swap_into_a_list, swap_into_a_dict], ids=lambda f: f.__name__)
def test_a_display_on_the_right_reads_a_name_before_the_targets_rebind_it(f, options):
    """``p, q = q, [p, 2.0]``: the list holds the ``p`` of before the statement
    (it read the new one: 8.4 for Python's 7.6)."""
    x = np.array([0.3, 0.7, 1.1])
    np.testing.assert_allclose(tc.value_and_grad(f, **options)(x)[0], f(x))
    check_grad(f, (x,), df=tc.grad(f, **options))
