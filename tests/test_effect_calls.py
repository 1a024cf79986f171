"""NumPy calls made for their effect (compiler/lower/effect_calls.py):
``np.fill_diagonal``, ``np.copyto``, ``np.add.at``, ``np.subtract.at``,
``np.multiply.at`` and ``np.divide.at`` differentiated as the subscript writes
they are, inside loops, taped and checkpointed; ``np.put``, ``np.putmask``,
``np.place`` and the other ``ufunc.at`` refused with what to write instead."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from gradcheck import check_grad


def lennard_jones_steps(pos, eps, steps):
    """N-body style: the self-interaction dropped with np.fill_diagonal(r2, inf)."""
    energy = 0.0
    for _ in range(steps):
        d = pos[:, None, :] - pos[None, :, :]
        r2 = np.sum(d ** 2, axis=-1)
        np.fill_diagonal(r2, np.inf)
        inv = 1.0 / r2
        energy = energy + eps * np.sum(inv ** 6 - inv ** 3)
        pos = pos * 1.01
    return energy


def test_fill_diagonal_is_a_diagonal_write_taped_and_checkpointed():
    pos = np.random.default_rng(0).normal(size=(4, 2)) * 2.0
    check_construct(lennard_jones_steps, (pos, 0.7, 3), wrt=(0, 1), autograd=False)


def fill_with_values(x, v):
    y = np.zeros((3, 4))
    for k in range(2):
        y = y + x
        np.fill_diagonal(y, v * k)      # a wide array: min(3, 4) entries
    return np.sum(y ** 2)


def test_fill_diagonal_of_a_wide_array_writes_min_shape_entries():
    rng = np.random.default_rng(1)
    x, v = rng.normal(size=(3, 4)), rng.normal(size=3)
    check_construct(fill_with_values, (x, v), wrt=(0, 1), autograd=False)


def fill_wrapped(x):
    y = x * 1.0
    np.fill_diagonal(y, 0.0, wrap=True)
    return np.sum(y)


def test_fill_diagonal_with_wrap_is_refused_with_file_line():
    with pytest.raises(tc.UnsupportedSyntaxError, match=r"test_effect_calls.py:\d+: .*wrap=True"):
        tc.grad(fill_wrapped)(np.ones((5, 2)))


def copy_into(x, w):
    y = np.zeros_like(x)
    for _ in range(3):
        np.copyto(y, np.tanh(y * w + x))
    return np.sum(y ** 2)


def fill_diagonal_of_rows(A, v):
    B = A * 1.0
    np.fill_diagonal(B[1:], v)
    return np.sum(B * A)


def fill_diagonal_of_a_list_item(A, v):
    mats = [A * 1.0, A * 2.0]
    np.fill_diagonal(mats[0], v)
    return np.sum(mats[0] * A)


class _Box:
    def __init__(self, W):
        self.W = W


def fill_diagonal_of_a_given_objects_array(A, v, box):
    np.fill_diagonal(box.W.T, v)
    return np.sum(box.W * A)


@pytest.mark.parametrize("f, args, message", [
    (fill_diagonal_of_rows, (), r"`np.fill_diagonal\(B\[1:\], v\)` fills the diagonal of B\[1:\]"),
    (fill_diagonal_of_a_list_item, (), r".* fills the diagonal of mats\[0\]"),
    (fill_diagonal_of_a_given_objects_array, (_Box(np.ones((4, 3))),),
     r"assignment into a nested subscript")])
def test_fill_diagonal_through_a_subscript_or_view_is_refused_with_file_line(f, args, message):
    """Once an AttributeError inside the compiler (the refusal's own message
    could not spell the diagonal's index); the hint's copy, fill and write back
    is exact."""
    A = np.arange(12.0).reshape(4, 3) / 7
    with pytest.raises(tc.UnsupportedSyntaxError, match=r"test_effect_calls.py:\d+: " + message):
        tc.grad(f)(A, 2.0, *args)


def test_copyto_is_a_whole_array_write_taped_and_checkpointed():
    rng = np.random.default_rng(2)
    check_construct(copy_into, (rng.normal(size=4), rng.normal(size=4)), wrt=(0, 1),
                    autograd=False)


def maximum_at(x):
    y = x.copy()
    np.maximum.at(y, [0, 0, 2], x[1])
    return np.sum(y ** 2)


def test_another_ufunc_at_is_refused_saying_what_to_write():
    with pytest.raises(tc.UnsupportedSyntaxError,
                       match=r"test_effect_calls.py:\d+: .*np.maximum into an array in place, "
                             r"unbuffered.*a\[idx\[k\]\] = np.maximum\(a\[idx\[k\]\], v\[k\]\)"):
        tc.grad(maximum_at)(np.ones(3))


def products_at_repeated_indices(x, v, steps):
    """np.multiply.at multiplies once per occurrence of an index (row 0 three times,
    a zero factor among them when v[1] is 0), np.divide.at divides once per occurrence."""
    a = x * 1.0
    for _ in range(steps):
        np.multiply.at(a, [0, 0, 2, 0], v[:, None])
        np.divide.at(a[:, 1], np.array([1, 1, 0]), v[:3] ** 2 + 1.0)
        np.multiply.at(a, (np.array([1, 1]), np.array([0, 0])), v[2:] * a[0, 1])
        a = np.tanh(a)
    return np.sum(a * x)


@pytest.mark.parametrize("v1", [0.7, 0.0])
def test_multiply_and_divide_at_with_repeated_indices_taped_and_checkpointed(v1):
    rng = np.random.default_rng(9)
    x, v = rng.normal(size=(3, 2)), rng.uniform(0.5, 1.5, size=4)
    v[1] = v1
    check_construct(products_at_repeated_indices, (x, v, 3), wrt=(0, 1), autograd=False)


def product_energy(x, v):
    a = np.ones(4) + x * 0.5
    np.multiply.at(a, [0, 3, 0, 1, 0], x[[0, 1, 2, 3, 0]] * v)
    np.divide.at(a, [2, 2], x[:2] ** 2 + 1.0)
    return np.sum(a ** 2)


def test_forward_mode_and_hessian_vector_products_of_multiply_and_divide_at():
    rng = np.random.default_rng(10)
    x, v, d = rng.normal(size=4), rng.normal(size=5), rng.normal(size=4)
    value, tangent = tc.jvp(product_energy, wrt=0)(x, v, d)
    eps = 1e-6
    numeric = (product_energy(x + eps * d, v) - product_energy(x - eps * d, v)) / (2 * eps)
    assert value == pytest.approx(product_energy(x, v), rel=1e-12)
    assert tangent == pytest.approx(numeric, rel=1e-6)
    grad = tc.grad(product_energy, wrt=0)
    numeric_hv = (grad(x + eps * d, v) - grad(x - eps * d, v)) / (2 * eps)
    np.testing.assert_allclose(tc.hvp(product_energy, wrt=0)(x, v, d), numeric_hv,
                               rtol=1e-5, atol=1e-8)


def put(x):
    y = x.copy()
    np.put(y, [0, 2], x[1])
    return np.sum(y ** 2)


def test_put_is_refused_saying_what_to_write():
    with pytest.raises(tc.UnsupportedSyntaxError, match=r"test_effect_calls.py:\d+: .*a\[ind\] = v"):
        tc.grad(put)(np.ones(3))


def putmask(x):
    y = x.copy()
    np.putmask(y, y > 1.5, 0.0)
    return np.sum(y * x)


def place(x):
    y = x.copy()
    np.place(y, y > 1.5, [0.0])
    return np.sum(y * x)


def putmask_as_advised(x):
    y = x.copy()
    y[...] = np.where(y > 1.5, 0.0, y)
    return np.sum(y * x)


def place_as_advised(x):
    y = x.copy()
    y[y > 1.5] = 0.0
    return np.sum(y * x)


@pytest.mark.parametrize("fn, advice", [(putmask, "a[...] = np.where(mask, values, a)"),
                                        (place, "a[mask] = v (v one number)")])
def test_putmask_and_place_are_refused_saying_what_to_write(fn, advice):
    # (they said "called for its effect ... assign its value (y = f(x))": both return None)
    with pytest.raises(tc.UnsupportedSyntaxError) as info:
        tc.grad(fn)(np.array([1.0, 2.0, 3.0]))
    text = str(info.value)
    assert f"test_effect_calls.py:{fn.__code__.co_firstlineno + 2}: " in text, text
    assert "writes into its first argument in place" in text and advice in text, text


@pytest.mark.parametrize("fn, advised", [(putmask, putmask_as_advised),
                                         (place, place_as_advised)])
def test_what_the_putmask_and_place_refusals_advise_computes_the_same(fn, advised):
    x = np.array([1.0, 2.0, -0.5, 3.0])
    assert advised(x) == fn(x)
    check_construct(advised, (x,), wrt=(0,), autograd=False)


def clip_in_place(x, lo):
    y = x * 2.0
    for _ in range(3):
        y = y * x
        np.clip(y, lo, 1.5, out=y)          # the common in-place clipping
    z = np.empty_like(y)
    np.multiply(y, x, out=z)
    z = np.tanh(z, out=z)
    return z ** 2


def test_out_argument_is_a_whole_array_write_taped_and_checkpointed():
    x = np.array([0.3, 0.9, -1.2, 0.5, 1.1])
    check_construct(clip_in_place, (x, -0.5), wrt=(0, 1), autograd=False)


def add_into_integers(x):
    y = np.zeros(3, dtype=int)
    np.add(x, x, out=y)
    return np.sum(y * x)


def test_out_of_a_dtype_that_cannot_hold_the_result_is_refused_as_numpy_does():
    with pytest.raises(TypeError, match="Cannot cast"):   # NumPy's own refusal
        add_into_integers(np.ones(3))
    with pytest.raises(tc.TransformError, match=r"test_effect_calls.py:\d+: out= of dtype int"):
        tc.grad(add_into_integers)(np.ones(3))


def add_into_single(x):
    y = np.zeros(3, dtype=np.float32)
    np.add(x, x, out=y)                      # same kind: NumPy rounds, so does the write
    return np.sum(y * x)


def test_out_of_the_same_kind_rounds_like_numpy():
    x = np.array([0.1, 0.2, 0.3])
    y = (x + x).astype(np.float32)                  # d/dx sum(y * x) = y + 2 x
    np.testing.assert_allclose(tc.grad(add_into_single)(x), y + 2 * x, rtol=1e-12)


# --- np.add.at and np.subtract.at: unbuffered, a repeated index adds once per occurrence --

def spring_forces(pos, k, steps):
    """A spring network (particle codes accumulate forces this way): each spring
    adds into both of its ends, through views of the acceleration's columns."""
    ci = np.array([0, 0, 1, 2, 0])
    cj = np.array([1, 2, 2, 3, 3])
    vel = np.zeros_like(pos)
    for _ in range(steps):
        acc = np.zeros(pos.shape)
        sep = pos[ci, :] - pos[cj, :]
        dist = np.sqrt(np.sum(sep ** 2, axis=1))
        f = -k * (dist - 1.0) / dist
        np.add.at(acc[:, 0], ci, f * sep[:, 0])
        np.add.at(acc[:, 1], ci, f * sep[:, 1])
        np.subtract.at(acc[:, 0], cj, f * sep[:, 0])
        np.subtract.at(acc[:, 1], cj, f * sep[:, 1])
        vel = vel + 0.1 * acc
        pos = pos + 0.1 * vel
    return np.sum(pos ** 2)


def test_add_at_into_views_in_a_loop_taped_and_checkpointed():
    pos = np.array([[0.0, 0.0], [1.1, 0.1], [0.2, 0.9], [1.3, 1.2]])
    check_construct(spring_forces, (pos, 0.7, 4), wrt=(0, 1), autograd=False)


def scatter_every_form(x, v):
    a = x * 1.0
    np.add.at(a, [0, 0, 2], v[:, None])                    # repeats, broadcast along a row
    np.subtract.at(a, (np.array([1, 1, 3]), np.array([0, 0, 1])), v)   # one index per axis
    np.add.at(a, (slice(1, 3), 1), v[:2] * a[0, 0])        # a slice, reading a itself
    np.add.at(a, a > 0.5, 0.25 * v[2])                     # a mask, a scalar value
    np.subtract.at(a, 3, v[:2] ** 2)                       # one row
    return np.sum(np.tanh(a) * x)


def test_add_at_with_every_index_form_equals_numpy_and_finite_differences():
    rng = np.random.default_rng(3)
    x, v = rng.normal(size=(4, 2)), rng.normal(size=3)
    check_construct(scatter_every_form, (x, v), wrt=(0, 1), autograd=False)


def scatter_by_list(x, v):
    rows = [1, 1, 0]        # a list: one index array (rows 1, 1, 0), not one index per axis
    a = x * 2.0
    np.add.at(a, rows, v)
    pair = (1, 0)           # a tuple: the element a[1, 0]
    np.add.at(a, pair, v[0])
    return np.sum(a ** 3)


def test_a_list_held_in_a_name_is_one_index_array_and_a_tuple_one_index_per_axis():
    rng = np.random.default_rng(4)
    x, v = rng.normal(size=(3, 3)), rng.normal(size=3)
    check_construct(scatter_by_list, (x, v), wrt=(0, 1), autograd=False)


def named_column(x, v):
    acc = x * 1.0
    col = acc[:, 0]
    np.add.at(col, [0, 0, 2], v)
    same = acc
    np.subtract.at(same, ([1, 1], [1, 1]), v[:2])
    return np.sum(acc ** 2) + np.sum(col * v[0])


def test_add_at_through_a_named_view_and_an_alias_reaches_the_array():
    rng = np.random.default_rng(5)
    check_construct(named_column, (rng.normal(size=(3, 2)), rng.normal(size=3)),
                    wrt=(0, 1), autograd=False)


def scatter_into(F, j, f):
    np.subtract.at(F, j, f)            # a helper writing into its caller's array


def through_a_helper(x, v):
    F = x * 1.0
    for _ in range(3):
        scatter_into(F, [1, 1, 3], v[:, None] * F[0])
        F = np.sin(F)
    return np.sum(F)


def test_add_at_in_a_helper_writes_into_the_callers_array():
    rng = np.random.default_rng(6)
    check_construct(through_a_helper, (rng.normal(size=(4, 2)), rng.normal(size=3)),
                    wrt=(0, 1), autograd=False)


def into_the_argument(x, v):
    np.add.at(x, [0, 0], v)            # NumPy writes into the caller's x
    return np.sum(x ** 2)


def test_add_at_into_an_argument_leaves_the_users_array_unchanged():
    x, v = np.array([0.5, -1.0, 2.0]), np.array([0.3, 0.4])
    kept = x.copy()
    dx, dv = tc.grad(into_the_argument, wrt=(0, 1))(x, v)
    np.testing.assert_array_equal(x, kept)
    y = kept.copy()
    np.add.at(y, [0, 0], v)
    np.testing.assert_allclose(dx, 2 * y, rtol=1e-12)
    np.testing.assert_allclose(dv, [2 * y[0], 2 * y[0]], rtol=1e-12)


def in_single(x, v):
    a = x * 1.0
    np.add.at(a, [2, 0, 2], v)
    return a * x


def test_add_at_keeps_float32_and_its_gradient_is_float32():
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    v = np.array([0.25, 1.5, -0.5], dtype=np.float32)
    assert in_single(x, v).dtype == np.float32
    dx, dv = tc.grad(in_single, wrt=(0, 1))(x, v, np.ones(3, dtype=np.float32))
    assert dx.dtype == np.float32 and dv.dtype == np.float32
    expected = check_grad(in_single, (x.astype(float), v.astype(float)), wrt=(0, 1),
                          seed=np.ones(3))
    np.testing.assert_allclose(dx, expected[0], rtol=1e-5)
    np.testing.assert_allclose(dv, expected[1], rtol=1e-5)


def counted(v, w):
    counts = np.zeros(3, dtype=int)
    np.add.at(counts, [0, 2, 2], v * 2.5)   # NumPy casts to int: piecewise constant in v
    return np.sum(counts * w)


def test_add_at_into_an_integer_array_passes_no_derivative_to_the_values():
    v, w = np.array([0.3, 0.45, 0.7]), np.array([1.0, 2.0, 3.0])
    dv, dw = tc.grad(counted, wrt=(0, 1))(v, w)
    np.testing.assert_array_equal(dv, np.zeros(3))
    np.testing.assert_array_equal(dw, counted_counts(v))
    check_grad(counted, (v, w), wrt=(0, 1))


def counted_counts(v):
    counts = np.zeros(3, dtype=int)
    np.add.at(counts, [0, 2, 2], v * 2.5)
    return counts


def scattered_energy(x, v):
    a = np.zeros(4)
    np.add.at(a, [0, 3, 0, 1], x * v)
    np.subtract.at(a, slice(0, 2), x[:2] ** 2)
    return np.sum(a ** 2)


def test_forward_mode_and_hessian_vector_products_of_add_at():
    rng = np.random.default_rng(8)
    x, v, d = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
    value, tangent = tc.jvp(scattered_energy, wrt=0)(x, v, d)
    eps = 1e-6
    numeric = (scattered_energy(x + eps * d, v) - scattered_energy(x - eps * d, v)) / (2 * eps)
    assert value == pytest.approx(scattered_energy(x, v), rel=1e-12)
    assert tangent == pytest.approx(numeric, rel=1e-6)
    grad = tc.grad(scattered_energy, wrt=0)
    numeric_hv = (grad(x + eps * d, v) - grad(x - eps * d, v)) / (2 * eps)
    np.testing.assert_allclose(tc.hvp(scattered_energy, wrt=0)(x, v, d), numeric_hv,
                               rtol=1e-5, atol=1e-8)


def test_the_generated_gradient_reads_as_a_write_of_rt_add_at():
    source = tc.grad(spring_forces, wrt=(0, 1)).compile().source
    assert "# line" in source and "np.add.at(acc[:, 0], ci, f * sep[:, 0])" in source
    assert "acc[:, 0] = acc_value_add_at" in source
    assert "acc_item = acc[:, 0]" in source and "= rt.add_at(acc_item, ci, " in source
    assert "rt.gathered_at(" in source


def into_a_copy(x, v):
    a = x * 1.0
    np.add.at(a[[0, 1]], [0, 0], v)       # a[[0, 1]] is a copy: NumPy drops the update
    return np.sum(a)


def into_a_row(x, v, i):
    a = x * 1.0
    np.add.at(a[i], [0, 0], v)            # a view or a copy, as i is an int or an array
    return np.sum(a)


def value_of_add_at(x):
    y = x * 1.0
    z = np.add.at(y, [0], 1.0)
    return np.sum(y) + (z is None)


def add_at_by_keyword(x):
    y = x * 1.0
    np.add.at(y, [0], 1.0, out=y)
    return np.sum(y)


class Springs:
    def __init__(self):
        self.F = np.zeros(3)

    def add(self, idx, f):
        np.add.at(self.F, idx, f)
        return self.F


def into_an_attribute(x):
    springs = Springs()
    return np.sum(springs.add([0, 0], x))


@pytest.mark.parametrize("f, args, message", [
    (into_a_copy, (np.ones((2, 2)), 1.0), r"a\[\[0, 1\]\].*not surely a view.*col = x\[:, 0\]"),
    (into_a_row, (np.ones((2, 2)), 1.0, 1), r"a\[i\].*not surely a view"),
    (add_at_by_keyword, (np.ones(2),), r"three positional arguments"),
])
def test_add_at_forms_not_followed_are_refused_naming_the_line(f, args, message):
    with pytest.raises(tc.UnsupportedSyntaxError, match=r"test_effect_calls.py:\d+: .*" + message):
        tc.grad(f)(*args)


def test_add_at_into_an_attribute_of_an_object_made_here_is_followed():
    """``np.add.at(self.F, idx, f)`` in a method: refused while the object was the
    lowering's ("self.F ... not a local array"); desugar writes ``springs.F`` as
    the local array ``springs_F``, which np.add.at then writes."""
    check_grad(into_an_attribute, (1.0,))


def test_add_at_whose_value_is_used_is_refused():
    with pytest.raises(tc.UnsupportedSyntaxError,
                       match=r"test_effect_calls.py:\d+: .*in place, inside an expression"):
        tc.grad(value_of_add_at)(np.ones(2))


def by_dimension(pos, k):
    ci, cj = np.array([0, 0, 2]), np.array([1, 2, 1])
    acc = np.zeros(pos.shape)
    f = -k * (pos[ci] - pos[cj])
    for d in range(pos.shape[1]):         # acc[:, d]: a view, d a range counter
        np.add.at(acc[:, d], ci, f[:, d])
        np.subtract.at(acc[:, d], cj, f[:, d])
    return np.sum(np.tanh(pos + acc) ** 2)


def test_add_at_into_a_column_chosen_by_a_loop_counter():
    rng = np.random.default_rng(9)
    check_construct(by_dimension, (rng.normal(size=(3, 2)), 0.6), wrt=(0, 1), autograd=False)


def diagonal_shorter(x):
    A = np.ones((3, 3))
    np.fill_diagonal(A, x[:2])
    return np.sum(A @ A * x[:3])


def diagonal_longer(x):
    A = np.ones((3, 3))
    np.fill_diagonal(A, x)
    return np.sum(A @ A)


def diagonal_column(x):
    A = np.ones((3, 3))
    np.fill_diagonal(A, x[:3, None])
    return np.sum(A @ A * x[:3])


def diagonal_refilled_in_a_loop(x, n):
    A = np.outer(x[:3], x[:3])
    for t in range(n):
        np.fill_diagonal(A, np.diag(A)[:2] * 0.5)
        A = np.tanh(A)
    return np.sum(A)


@pytest.mark.parametrize("f, args", [(diagonal_shorter, ()), (diagonal_longer, ()),
                                     (diagonal_column, ()), (diagonal_refilled_in_a_loop, (3,))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_fill_diagonal_repeats_or_cuts_values_as_numpy_does(f, args):
    """NumPy writes ``val`` through ``a.flat``: repeated when shorter than the
    diagonal, cut when longer, flattened when 2-d; as ``A[i, i] = val`` each was
    NumPy's bare ValueError from the generated code."""
    x = np.array([0.3, -0.4, 0.7, 1.1, 0.2, 0.5])
    check_grad(f, (x, *args))
    check_grad(f, (x, *args), df=tc.grad(f, checkpoint=True, snapshots=2))
