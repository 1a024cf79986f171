"""Every Python construct the transformer handles, checked against finite differences.

The functions under test live at module level so that their source is available.
"""

import numpy as onp  # NumPy under another alias: names are resolved to objects
import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad

rng = np.random.default_rng(0)


def vec(*shape):
    return rng.standard_normal(shape)


SCALE = 0.5
OFFSETS = np.array([0.1, -0.2, 0.3])


# --- assignment and arithmetic --------------------------------------------------
def f_assign(x, y):
    a = x * y
    b = a
    c = b + x
    return np.sum(c)


def f_tuple_unpack(x, y):
    a, b = x * 2.0, y - 1.0
    a, b = b, a
    (c, d) = (a * b, a + b)
    return np.sum(c * d)


def f_augassign(x, y):
    z = x * 1.0
    z += y
    z -= 0.5 * x
    z *= y
    z /= (1.5 + x * x)
    return np.sum(z)


def f_setitem_aug(x, v):
    y = x * 1.0
    y[1] += v
    y[0] -= v * 2.0
    y[2] *= v
    return np.sum(y * y)


def f_operators(x, y):
    a = x + y - x * y / (1.0 + y * y)
    b = -a ** 2 + x ** 3
    m = np.outer(x, y) @ y
    return np.sum(b) + np.sum(m) - np.sum(-x)


def f_scalar_args(a, b):
    return a * b + a ** 2 / b - np.sin(a)


def test_assign():
    check_grad(f_assign, (vec(3), vec(3)), wrt=(0, 1))


def test_tuple_unpacking_and_swap():
    check_grad(f_tuple_unpack, (vec(3), vec(3)), wrt=(0, 1))


def test_augmented_assignment():
    check_grad(f_augassign, (vec(4), vec(4)), wrt=(0, 1))


def test_augmented_assignment_into_subscript():
    check_grad(f_setitem_aug, (vec(4), 0.7), wrt=(0, 1))


def test_operators_and_unary_minus():
    check_grad(f_operators, (vec(3), vec(3)), wrt=(0, 1))


def test_python_float_arguments():
    check_grad(f_scalar_args, (0.7, 1.3), wrt=(0, 1))


# --- conditions -------------------------------------------------------------------
def f_if_elif_else(x, mode):
    s = np.sum(x)
    if mode == 0 and s > -100.0:
        y = x * x
    elif mode == 1 or not s < -100.0:
        y = np.sin(x)
        if mode > 5:
            y = y * 3.0
    else:
        y = x ** 3
    return np.sum(y)


def f_ifexp(x, c):
    y = x * 2.0 if c > 0 else x * x
    z = np.exp(y) if np.sum(x) > 100.0 else y + 1.0
    return np.sum(z * y)


def f_early_return(x, mode):
    if mode == 0:
        return np.sum(x)
    elif mode == 1:
        y = x * x
        if np.sum(y) > 1e6:
            return 0.0
        return np.sum(y * x)
    y = np.tanh(x)
    return np.sum(y)


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_if_elif_else(mode):
    check_grad(f_if_elif_else, (vec(3), mode))


@pytest.mark.parametrize("c", [-1.0, 1.0])
def test_conditional_expression(c):
    check_grad(f_ifexp, (vec(3), c))


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_early_return(mode):
    check_grad(f_early_return, (vec(3), mode))


# --- loops ------------------------------------------------------------------------
def f_range(x, start, stop, step):
    s = 0.0
    for t in range(start, stop, step):
        s = s + np.sum(x * (t + 1.0)) * np.sum(x)
    return s


def f_range_recurrence(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


def f_over_rows(xs, w):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.sin(x * w))
    return s


def f_enumerate(xs, w):
    s = 0.0
    for i, x in enumerate(xs):
        s = s + (i + 1.0) * np.sum(x * w)
    return s


def f_zip(xs, ys):
    s = 0.0
    for x, y in zip(xs, ys):
        s = s + np.sum(x * y)
    return s


def f_while(x, n):
    i = 0
    while i < n:
        x = np.sin(x) + 0.5 * x
        i += 1
    return np.sum(x)


def f_break_continue_for(x, n):
    s = 0.0
    for t in range(n):
        if t == 1:
            continue
        s = s + np.sum(x ** 2) * t
        if t >= 3:
            if s > -1e9:
                break
        x = x * 1.1
    return s + np.sum(x)


def f_break_continue_while(x):
    i = 0
    y = x
    while True:
        i += 1
        if i % 2 == 0:
            continue
        y = y * np.cos(y)
        if i > 4:
            break
    return np.sum(y)


def f_nested_loops(x, n, m):
    s = 0.0
    for i in range(n):
        for j in range(m):
            x = np.sin(x) * (1.0 + 0.1 * j)
            s = s + np.sum(x) * i
    return s + np.sum(x)


def f_zero_trip(x, n):
    y = x * 2.0
    for t in range(n):
        y = y * y
    k = 0
    while k < n:
        y = y + 1.0
        k += 1
    return np.sum(y)


def f_loop_setitem(x, W, n):
    hs = np.zeros((n, x.shape[0]))
    h = x
    for t in range(n):
        h = np.tanh(W @ h)
        hs[t] = h
    return np.sum(hs * hs)


def f_slice_setitem(u, n):
    u = u * 1.0
    for t in range(n):
        u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


@pytest.mark.parametrize("bounds", [(0, 5, 1), (1, 7, 2), (6, 0, -2), (5, -1, -1), (3, 3, 1)])
def test_range_runtime_bounds(bounds):
    check_grad(f_range, (vec(3),) + bounds)


def test_range_recurrence():
    check_grad(f_range_recurrence, (vec(3), 0.5 * vec(3, 3), 4), wrt=(0, 1))


def test_loop_over_array_rows():
    check_grad(f_over_rows, (vec(4, 3), vec(3)), wrt=(0, 1))


def test_enumerate():
    check_grad(f_enumerate, (vec(4, 3), vec(3)), wrt=(0, 1))


def test_zip():
    check_grad(f_zip, (vec(4, 3), vec(5, 3)), wrt=(0, 1))


def test_while():
    check_grad(f_while, (vec(3), 4))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_break_continue_in_for(n):
    check_grad(f_break_continue_for, (vec(3), n))


def test_break_continue_in_while():
    check_grad(f_break_continue_while, (vec(3),))


def test_nested_loops():
    check_grad(f_nested_loops, (vec(3), 3, 2))


@pytest.mark.parametrize("n", [0, 2])
def test_zero_trip_loops(n):
    check_grad(f_zero_trip, (0.3 * vec(3), n))


def test_setitem_in_loop():
    check_grad(f_loop_setitem, (vec(3), 0.5 * vec(3, 3), 4), wrt=(0, 1))


def test_slice_setitem():
    check_grad(f_slice_setitem, (vec(6), 3))


# --- user functions, closures, globals -----------------------------------------------
def helper_affine(x, w, b=0.5):
    y = x * w
    return y + b


def helper_pair(x, y):
    return x * y, x - y


def helper_setitem(x, v):
    x = x.copy()
    x[0] = v
    x = x * 2.0
    return x


def f_calls(x, w):
    a = helper_affine(x, w)
    b = helper_affine(a, w, 2.0)
    c = helper_affine(b, w, b=-1.0)
    p, q = helper_pair(c, x)
    r = helper_setitem(x, 3.0)
    return np.sum(p * q) + np.sum(r * w)


def f_closure(x, w):
    k = 2.0

    def inner(z):
        return np.sin(z * w) * k

    def twice(z):
        return inner(inner(z))

    return np.sum(twice(x) + inner(x))


def make_closure(scale):
    def g(x):
        return np.sum(np.tanh(x * scale) + OFFSETS)
    return g


def f_globals(x):
    y = x * SCALE + OFFSETS
    return onp.sum(onp.exp(y))


def f_alias(x):
    return onp.sum(onp.tanh(onp.dot(x, x)) + onp.mean(x))


def test_user_function_calls():
    check_grad(f_calls, (vec(3), vec(3)), wrt=(0, 1))


def test_nested_def_and_closure():
    check_grad(f_closure, (vec(3), vec(3)), wrt=(0, 1))


def test_closure_from_factory():
    check_grad(make_closure(1.5), (vec(3),))


def test_module_globals_and_constants():
    check_grad(f_globals, (vec(3),))


def test_numpy_alias():
    check_grad(f_alias, (vec(3),))


# --- methods and attributes -------------------------------------------------------
def f_methods(x, y):
    n = x.shape[0] + len(y)
    a = x.T.dot(y)
    b = x.sum(axis=0) * y.mean()
    c = x.reshape(-1).sum() + x.reshape(2, 3).T.sum(axis=1).sum()
    return np.sum(a * b) + c * n + x.mean(axis=1).sum()


def test_methods_and_attributes():
    check_grad(f_methods, (vec(2, 3), vec(2)), wrt=(0, 1))


# --- wrt, seeds, API ----------------------------------------------------------------
def f_vector_out(x, W):
    return np.tanh(W @ x)


def test_nonscalar_output_with_seed():
    x, W, seed = vec(3), vec(4, 3), vec(4)
    check_grad(f_vector_out, (x, W), wrt=(0, 1), seed=seed)
    check_grad(f_vector_out, (x, W), wrt=(1,))  # default seed: ones


def test_float32_inputs():
    x = vec(3).astype(np.float32)
    W = vec(4, 3).astype(np.float32)
    dx, dW = tc.grad(f_vector_out, wrt=(0, 1))(x, W)
    ex, eW = tc.grad(f_vector_out, wrt=(0, 1))(x.astype(float), W.astype(float))
    assert dx.shape == x.shape and dW.shape == W.shape
    np.testing.assert_allclose(dx, ex, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dW, eW, rtol=1e-4, atol=1e-5)


# --- tuples carried through loops and branches; zero adjoints in loops -------------
def f_tuple_state(x, w, n):
    state = (x, x * 0.5)
    for t in range(n):
        a, b = state
        state = (np.tanh(a * w + b), a)
    state = (state[1], state[0])  # a swap reads elements it overwrites
    a, b = state
    return np.sum(a * b)


def f_tuple_branch(x, c):
    if c > 0:
        pair = (x * 2.0, x)
    else:
        pair = (x, np.sin(x))
    p, q = pair
    return np.sum(p * q)


def f_zero_on_some_iterations(x, n):
    s = 0.0
    for t in range(n):
        y = x * 1.0
        y = np.swapaxes(y, 0, 1)  # y changes shape between its assignments
        v = np.flip(np.moveaxis(y, 0, 1), 0)
        v = np.reshape(np.roll(v, 1, 0), (-1,))
        m = np.mean(x, axis=1)
        if t == n - 1:
            s = s + np.sum(v * v) + np.sum(m)
    return s


def test_tuple_carried_through_loop():
    check_grad(f_tuple_state, (vec(3), vec(3), 3), wrt=(0, 1))


@pytest.mark.parametrize("c", [-1.0, 1.0])
def test_tuple_assigned_in_branches(c):
    check_grad(f_tuple_branch, (vec(3), c))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_adjoint_zero_on_some_iterations(n):
    check_grad(f_zero_on_some_iterations, (vec(2, 3), n))


# --- reversed(range(...)) and enumerate(zip(...)) loops --------------------------
def f_reversed_range(x, a, b, s):
    y = x.copy()
    acc = 0.0
    for t in reversed(range(a, b, s)):
        acc = acc * 0.9 + np.sum(y[t] ** 2) * (t + 1)
        y[t] = np.tanh(y[t] + acc)
    return acc + np.sum(y)


@pytest.mark.parametrize("bounds", [(0, 10, 1), (2, 10, 3), (9, -1, -2), (5, 5, 1), (0, 1, 1)])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_reversed_range_loop_runs_the_indices_backwards(bounds, options):
    check_grad(f_reversed_range, (np.linspace(-1, 1, 10), *bounds),
               df=tc.grad(f_reversed_range, **options))


def f_enumerate_zip(w, X, y):
    total = 0.0
    for i, (x, t) in enumerate(zip(X, y)):
        total += (i + 1) * (w @ x - t) ** 2
    return total


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_enumerate_of_zip_over_rows(options):
    check_grad(f_enumerate_zip, (vec(3), vec(4, 3), vec(4)), wrt=(0, 1, 2),
               df=tc.grad(f_enumerate_zip, wrt=(0, 1, 2), **options))


def f_reversed_rows(xs, a):
    s = np.zeros(xs.shape[1])
    total = 0.0
    for x in reversed(xs):
        s = a * s + np.tanh(x)
        total = total + np.sum(s * x)
    return total


def f_enumerate_reversed_list(x, n):
    hs = []
    h = x
    for i in range(n):
        h = np.tanh(h * 1.1)
        hs.append(h)
    total = 0.0
    for k, h in enumerate(reversed(hs)):
        total = total + (k + 1) * np.sum(h)
    return total


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_reversed_rows_of_an_array_and_of_a_built_list(options):
    check_grad(f_reversed_rows, (vec(5, 3), 0.7), wrt=(0, 1),
               df=tc.grad(f_reversed_rows, wrt=(0, 1), **options))
    check_grad(f_enumerate_reversed_list, (vec(3), 4), df=tc.grad(f_enumerate_reversed_list, **options))


# --- isinstance on differentiated values and container arguments (#28) ------------------
def isinstance_of_an_array(x, n):
    for t in range(n):
        if isinstance(x, np.ndarray) and x.ndim == 1:
            x = np.sin(x) + 0.5 * x
        else:
            x = x * 2.0
    return np.sum(x ** 2)


def isinstance_of_a_container(p):
    if isinstance(p, (list, tuple)):
        return sum(np.sum(q ** 2) for q in p)
    return np.sum(p ** 2)


def isinstance_in_a_helper(x):
    def as_array(v):
        if not isinstance(v, np.ndarray):
            v = np.full(3, v)
        return v * 2.0
    return np.sum(as_array(x) ** 2)


def isinstance_of_a_reduction(x):
    s = np.sum(x)
    return s * 2.0 if isinstance(s, float) else s * 3.0


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2},
                                     {"checkpoint": True, "memory_budget": "100KB"}])
def test_isinstance_of_a_differentiated_array_in_a_loop(options):
    x = np.random.default_rng(9).normal(size=3)
    check_grad(isinstance_of_an_array, (x, 4), df=tc.grad(isinstance_of_an_array, **options))


def test_isinstance_of_a_container_argument_is_decided_when_compiling():
    from gradcheck import check_structured_leaves
    rng = np.random.default_rng(10)
    for p in ([rng.normal(size=2), rng.normal(size=3)], (rng.normal(size=2),)):
        check_structured_leaves(isinstance_of_a_container, (p,), (0,),
                                (tc.grad(isinstance_of_a_container)(p),))
    check_grad(isinstance_of_a_container, (rng.normal(size=4),))


@pytest.mark.parametrize("fn, x", [(isinstance_in_a_helper, np.arange(3.0)),
                                   (isinstance_in_a_helper, 1.5),
                                   (isinstance_of_a_reduction, np.arange(3.0))])
def test_isinstance_where_the_type_decides_the_path(fn, x):
    check_grad(fn, (x,))
