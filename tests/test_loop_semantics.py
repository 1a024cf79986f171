"""Python's semantics at a loop's boundary, taped and checkpointed (#28):

- a ``for`` loop's variable read after the loop holds its last value, or the
  value it had when the loop ran no step (unbound: the error Python raises);
- a ``while`` test that reads values the body computes (``while err > tol``);
- ``and``/``or`` in ``if``/``while`` tests, whose truth alone is used, with
  Python's short circuit;
- random draws in a loop's tests replay in a checkpointed loop's recomputed steps.

Every program runs taped, checkpointed, with ``snapshots=2``, with a memory
budget and on the online schedule: its value equals the program's, its gradient
central finite differences, and the checkpointed gradient the taped one.
"""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt import api
from gradcheck import assert_unchanged, check_grad, numeric_grad

OPTIONS = {
    "taped": dict(checkpoint=False),
    "checkpointed": dict(checkpoint=True),
    "snapshots=2": dict(checkpoint=True, snapshots=2),
    "memory_budget": dict(checkpoint=True, memory_budget="1MB"),
    "online": dict(checkpoint=True, schedule="online"),
    "nested": dict(checkpoint=True, nested=True, snapshots=2),
}


# --- the loop variable after the loop -----------------------------------------
def range_variable_bound_before(x, n):
    t = 0
    for t in range(n):
        x = x * 0.9
    return np.sum(x) * t


def range_variable_unbound_before(x, n):
    for t in range(n):
        x = x * 0.9
    return np.sum(x) * t


def strided_range_variable(x, n):
    t = 0
    for t in range(1, n + 3, 2):
        x = x * 0.9 + 0.1 * t * x
    return np.sum(x) * t


def descending_range_variable(x, n):
    t = -1
    for t in range(n, 0, -1):
        x = np.sin(x) * 0.5 + 0.1 * t
    return np.sum(x) * t


def enumerate_index_and_row(x, n):
    M = np.outer(np.arange(1.0, n + 1), x)
    s = 0.0
    i, row = 0, x
    for i, row in enumerate(M):
        s = s + np.sum(row * x)
    return s * i + np.sum(row)


def row_variable(x, n):
    xs = np.outer(np.arange(1.0, n + 1), x)
    acc = x
    r = x * 0.0
    for r in xs:
        acc = acc * 0.5 + r
    return np.sum(acc * r)


def variable_left_by_break(x, n):
    t = 0
    for t in range(n):
        x = x * 1.5
        if np.sum(x) > 10.0:
            break
    return np.sum(x) * t


def variable_read_before_and_after(x, n):
    t = 0.5
    y = x * t
    for t in range(n):
        x = x * 0.9
    return np.sum(x) * t + np.sum(y * t)


def differentiated_value_then_loop_variable(x, n):
    t = np.sum(x) * 0.5          # t is differentiated here ...
    y = x * t
    for t in range(n):           # ... and an integer from here on
        x = x * 0.9 + 0.1 * t
    return np.sum(x * t) + np.sum(y)


def body_rebinds_the_variable(x, n):
    t = 0
    for t in range(n):
        t = t * 2 + np.sum(x) * 0.1
        x = x * 0.9
    return np.sum(x) * t


def inner_and_outer_variables(x, n):
    s = 0.0
    i = j = 0
    for i in range(n):
        for j in range(3):
            x = x * 0.9 + 0.01 * j
        s = s + np.sum(x) * j
    return s * i


def while_counter(x, n):
    k = 0
    while k < n:
        x = x * 0.9
        k = k + 1
    return np.sum(x) * k


LOOP_VARIABLES = [range_variable_bound_before, range_variable_unbound_before,
                  strided_range_variable, descending_range_variable, enumerate_index_and_row,
                  row_variable, variable_left_by_break, variable_read_before_and_after,
                  differentiated_value_then_loop_variable, body_rebinds_the_variable,
                  inner_and_outer_variables, while_counter]


def _check(f, args, wrt, options):
    """Value == f's, gradient == FD, and checkpointed == taped; returns the gradient."""
    args = list(args)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    value, grad = tc.value_and_grad(f, wrt=wrt, **options)(*args)
    assert_unchanged(before, args)
    assert np.isclose(value, f(*args), rtol=1e-12, atol=1e-14)
    for g, e in zip(grad, numeric_grad(f, args, wrt)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
    if options.get("checkpoint"):
        taped = tc.grad(f, wrt=wrt)(*args)
        for g, e in zip(grad, taped):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
    return grad


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", LOOP_VARIABLES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [1, 2, 5])
def test_loop_variable_read_after_the_loop_is_its_last_value(f, n, options):
    _check(f, (np.array([1.2, 0.7, -0.4]), n), (0,), OPTIONS[options])


# --- the body rebinds the array the loop goes over ------------------------------
def enumerate_over_a_rebound_array(X, Y):
    s = 0.0
    for i, x in enumerate(X):
        X = X * 2.0
        s = s + np.sum(np.tanh(x)) * (i + 1)
    return s + np.sum(X)


def zip_over_a_rebound_array(X, Y):
    s = 0.0
    for x, y in zip(X, Y):
        Y = Y * 2.0 + np.sum(x)
        s = s + np.sum(x * y)
    return s


def zip_over_swapped_arrays(X, Y):
    s = 0.0
    for x, y in zip(X, Y):
        X, Y = Y, X
        s = s + np.sum(x * np.sin(y))
    return s


def enumerate_zip_over_a_rebound_array(X, Y):
    s = 0.0
    for i, (x, y) in enumerate(zip(X, Y)):
        X = X + 1.0
        s = s + np.sum(x * y) * (i + 1)
    return s


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", [enumerate_over_a_rebound_array, zip_over_a_rebound_array,
                               zip_over_swapped_arrays, enumerate_zip_over_a_rebound_array],
                         ids=lambda f: f.__name__)
def test_enumerate_and_zip_go_over_the_arrays_bound_when_the_loop_began(f, options):
    """Python's ``enumerate(X)`` and ``zip(X, Y)`` hold the arrays they were given:
    rebinding ``X`` in the body changes nothing they yield (the rows were read
    from the rebound name: 17.0 for Python's 6.0, taped and checkpointed)."""
    X = np.array([[0.5, -0.2], [0.3, 0.8], [-0.7, 0.1]])
    _check(f, (X, X[::-1] * 0.5), (0, 1), OPTIONS[options])


def zip_with_a_list_display(X, Y):
    s = 0.0
    for x, c in zip(X, [0.1, -0.4, 0.2]):
        s = s + np.sum(np.tanh(x * Y + c))
    return s


def enumerate_zip_with_a_tuple_display(X, Y):
    s = 0.0
    for i, (x, c) in enumerate(zip(X, (0.1, -0.4, 0.2))):
        s = s + np.sum(np.tanh(x * Y * c)) * (i + 1)
    return s


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", [zip_with_a_list_display, enumerate_zip_with_a_tuple_display],
                         ids=lambda f: f.__name__)
def test_zip_over_an_array_and_a_display_goes_over_both(f, options):
    """``zip(X, [0.1, -0.4, 0.2])``: the display's items are the second rows
    (the loop was refused as "a tuple or list used where an array is expected")."""
    X = np.array([[0.5, -0.2], [0.3, 0.8], [-0.7, 0.1]])
    _check(f, (X, np.array([0.4, -1.1])), (0, 1), OPTIONS[options])


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", [range_variable_bound_before, descending_range_variable,
                               variable_read_before_and_after, body_rebinds_the_variable,
                               while_counter], ids=lambda f: f.__name__)
def test_a_loop_that_runs_no_step_leaves_the_variable_as_it_was(f, options):
    _check(f, (np.array([1.2, 0.7, -0.4]), 0), (0,), OPTIONS[options])


@pytest.mark.parametrize("options", sorted(OPTIONS))
def test_an_unbound_loop_variable_after_no_step_raises_as_python_does(options):
    x = np.array([1.2, 0.7])
    with pytest.raises(NameError) as python:  # UnboundLocalError is a NameError
        range_variable_unbound_before(x, 0)
    with pytest.raises(type(python.value)):
        tc.value_and_grad(range_variable_unbound_before, **OPTIONS[options])(x, 0)


def test_the_checkpointed_loop_rebinds_its_variable_from_the_driver():
    """The generated code says what it does: the variable is the last index, if a
    step ran (the loop's own steps run in functions of their own)."""
    source = tc.grad(range_variable_unbound_before, checkpoint=True).source
    assert "    if loop" in source and ".n:\n" in source
    assert "t = loop" in source and ".last_index  # `t` after the loop" in source


# --- a variable the body rebinds, whose value before the loop has another shape --
# The taped reverse loop writes the adjoint of such a variable as a zero at the
# loop's head, shaped like the variable's value before the iteration: after the
# last reversed iteration the value from before the loop, not the iteration's
# (compiler/transform/taped_loops.py `_zeroed_at_head`); after a loop that ran no
# step the adjoint is the one that came in.
def rows_after_a_scalar(x, n):
    t = np.sum(x) * 0.5                # a scalar ...
    y = x * (1.0 + t)
    rows = np.outer(np.arange(1.0, n + 1), x) * 0.1
    for t in rows:                     # ... then each row, (3,)
        y = 0.9 * y + 0.1 * np.tanh(y * t)
    return np.sum(y) * (1.0 + np.sum(t))


def body_value_after_a_scalar(x, n):
    t = np.sum(x) * 0.5
    y = x * (1.0 + t)
    for i in range(n):
        t = np.sin(y) * 0.5 + 0.1 * i
        y = y * t
    return np.sum(y) * (1.0 + np.sum(t))


def while_body_value_after_a_scalar(x, n):
    t = np.sum(x) * 0.5
    y = x * (1.0 + t)
    k = 0
    while k < n:
        t = np.sin(y) * 0.5 + 0.1 * k
        y = y * t
        k = k + 1
    return np.sum(y) * (1.0 + np.sum(t))


def break_after_a_scalar(x, n):
    t = np.sum(x) * 0.5
    y = x * (1.0 + t)
    for i in range(n):
        t = np.sin(y) * 0.5 + 0.1 * i
        y = y * t
        if np.sum(np.abs(y)) < 1e-3:
            break
    return np.sum(y) * (1.0 + np.sum(t))


def matrix_before_a_scalar_in_the_body(x, n):
    t = np.swapaxes(np.outer(x, x), 0, 1)   # (3, 3): its adjoint must stay (3, 3)
    y = x
    for i in range(n):
        t = np.sum(y) * 0.5
        y = np.sin(y) * t
    return np.sum(y) + np.sum(t)


def bound_in_a_branch_before(x, n):
    y = np.tanh(x)
    if np.sum(x) > -10.0:              # always, but not known when compiling
        t = np.sum(x) * 0.5
        y = y * (1.0 + t)
    rows = np.outer(np.arange(1.0, n + 1), x) * 0.1
    for t in rows:
        y = 0.9 * y + 0.1 * np.tanh(y * t)
    return np.sum(y) * np.sum(t)


def inner_loop_rebinds_after_a_scalar(x, n):
    y = x
    for j in range(2):
        t = np.sum(y) * 0.5
        y = y * (1.0 + t)
        for i in range(n):
            t = np.sin(y) * 0.5 + 0.1 * i
            y = y * t
        y = y * (1.0 + 0.1 * np.sum(t))
    return np.sum(y)


REBOUND_WITH_ANOTHER_SHAPE = [
    rows_after_a_scalar, body_value_after_a_scalar, while_body_value_after_a_scalar,
    break_after_a_scalar, matrix_before_a_scalar_in_the_body, bound_in_a_branch_before,
    inner_loop_rebinds_after_a_scalar]


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", REBOUND_WITH_ANOTHER_SHAPE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [0, 1, 3])
def test_adjoint_of_a_variable_rebound_with_another_shape_is_zeroed_like_its_value_before(
        f, n, options):
    _check(f, (np.array([1.2, 0.7, -0.4]), n), (0,), OPTIONS[options])


def growing_body_value(x, n):
    rows = np.ones((n, 3))
    for i in range(n):
        t = rows[:i + 1] * x           # (1, 3), then (2, 3)
        x = x + np.sum(t, axis=0)
    return np.sum(x) + np.sum(t)


def shrinking_body_value(x, n):
    rows = np.ones((n, 3))
    for i in range(n):
        t = rows[i:] * x               # (n, 3), then (n - 1, 3)
        x = x * 0.5 + np.sum(np.sin(t), axis=0)
    return np.sum(x) + np.sum(t * t)


def body_value_in_one_branch(x, n):
    rows = np.ones((n, 3))
    for i in range(n):
        if i % 2 == 0:                 # every other step: (1, 3), (3, 3)
            t = rows[:i + 1] * x
            x = x + 0.3 * np.sum(t, axis=0)
        x = np.tanh(x)
    return np.sum(x) + np.sum(t)


def body_value_in_the_return_expression(x, n):
    rows = np.arange(1.0, 3 * n + 1).reshape(n, 3)
    for i in range(n):
        t = np.tanh(rows[:i + 1] * x)
        x = x * 0.9 + np.sum(t, axis=0) * 0.1
    return np.sum(x * np.sum(t, axis=0)) + np.sum(t ** 2)


def while_body_value_that_grows(x, n):
    rows = np.ones((n, 3))
    i = 0
    while i < n:
        t = rows[:i + 1] * x
        x = x + np.sum(t, axis=0)
        i = i + 1
    return np.sum(x) + np.sum(t)


def two_body_values_that_grow(x, n):
    rows = np.ones((n, 3))
    for i in range(n):
        t = rows[:i + 1] * x           # (i + 1, 3)
        u = t.T                        # (3, i + 1): read after the loop too
        x = x + np.sum(u, axis=1)
    return np.sum(x) + np.sum(u @ t)


def body_value_rebound_with_another_shape(x, n):
    rows = np.ones((n, 3))
    for i in range(n):
        t = np.outer(x, x) * 0.1       # (3, 3), then (i + 1, 3): the step's first
        x = x + t @ x * 0.1            # value is not the one the next step sees
        t = rows[:i + 1] * x
        x = x + 0.2 * np.sum(t, axis=0)
    return np.sum(x) + np.sum(t)


def one_shape_at_the_end_of_every_step(x, n):
    for i in range(n):
        t = x[:, None] * x * 0.1       # (3, 3): the shapes are known for the call,
        x = x + t @ x * 0.1            # but the step's first value of t is not
        t = x * 2.0                    # the (3,) the next step sees
        x = x + 0.2 * t
    return np.sum(x) + np.sum(t)


CHANGES_SHAPE_EVERY_STEP = [
    growing_body_value, shrinking_body_value, body_value_in_one_branch,
    body_value_in_the_return_expression, while_body_value_that_grows,
    two_body_values_that_grow, body_value_rebound_with_another_shape,
    one_shape_at_the_end_of_every_step]


# Not bound before the loop, `t` has another shape at each step: the taped reverse
# loop zeroed `bt` at the end of reversed step 1 like that step's (2, 3) value, step
# 0 added its (1, 3) contribution to it, broadcast to two rows, and
# `rt.unbroadcast(..., x)` summed both (15 where finite differences give 10).  Such
# a value is now saved before each step overwrites it and put back (t = t_old),
# as one bound before the loop is.
@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", CHANGES_SHAPE_EVERY_STEP, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_a_body_value_that_changes_shape_every_step(f, n, options):
    _check(f, (np.array([1.2, 0.7, -0.4]), n), (0,), OPTIONS[options])


@pytest.mark.parametrize("f", CHANGES_SHAPE_EVERY_STEP, ids=lambda f: f.__name__)
def test_forward_mode_follows_a_body_value_that_changes_shape_every_step(f):
    x = np.array([1.2, 0.7, -0.4])
    expected = numeric_grad(f, (x, 3), (0,))[0]
    jvp = tc.jvp(f, wrt=0)
    got = [jvp(x, 3, v)[1] for v in np.eye(3)]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [growing_body_value, shrinking_body_value,
                               while_body_value_that_grows, one_shape_at_the_end_of_every_step],
                         ids=lambda f: f.__name__)
def test_a_body_value_unbound_after_a_loop_that_ran_no_step_raises_as_python_does(f):
    x = np.array([1.2, 0.7, -0.4])
    with pytest.raises(NameError) as python:  # UnboundLocalError is a NameError
        f(x, 0)
    for gradient in (tc.grad(f), tc.value_and_grad(f)):
        with pytest.raises(type(python.value)):
            gradient(x, 0)


# A checkpointed loop starts the values its steps first bind as rt.UNBOUND, which
# the reads after it check (it started them as None: after no step the gradient
# read None where Python raises, a TypeError from the value, none without one).
def test_a_checkpointed_body_value_unbound_after_no_step_raises_as_python_does():
    x = np.array([1.2, 0.7, -0.4])
    with pytest.raises(NameError):
        tc.grad(growing_body_value, checkpoint=True)(x, 0)


# Where the body first binds the value in a branch, the taped loop saves it before
# that write, and binds the name to rt.UNBOUND on entry for the first save, which
# the reads after the loop check (with None the gradient read None).
def test_a_body_value_first_bound_in_a_branch_unbound_after_no_step_raises():
    x = np.array([1.2, 0.7, -0.4])
    with pytest.raises(NameError):
        tc.grad(body_value_in_one_branch)(x, 0)


def rnn_output_after_the_loop(x, W, n):
    for i in range(n):
        y = np.tanh(W @ x)             # the same shape every step
        x = x * 0.5 + y
    return np.sum(x) + np.sum(y * y)


def test_a_body_value_of_one_shape_is_kept_once_per_step_when_the_shapes_are_known(
        monkeypatch):
    """For the call's shapes every step's ``y`` is (3,): the reverse zeroes ``by``
    like the step's own value, with no ``y_old`` per step.  Without them (before a
    call, or once a gradient has met too many shapes) it puts back the previous
    step's value; both are right."""
    rng = np.random.default_rng(3)
    args = (rng.normal(size=3), rng.normal(size=(3, 3)), 4)
    expected = numeric_grad(rnn_output_after_the_loop, args, (0,))[0]
    df = tc.grad(rnn_output_after_the_loop)
    assert "    y_old = None\n    for i in range(n):\n" in df.source   # y itself stays unbound
    assert "x_old))\n        y_old = y\n" in df.source and "        y = y_old\n" in df.source
    np.testing.assert_allclose(df(*args), expected, rtol=1e-6, atol=1e-8)
    assert "y_old" not in df.source and "y = None" not in df.source, df.source
    monkeypatch.setattr(api, "_SHAPES_PER_GRADIENT", 0)
    general = tc.grad(rnn_output_after_the_loop)
    np.testing.assert_allclose(general(*args), expected, rtol=1e-6, atol=1e-8)
    assert "y_old = y" in general.source


def test_the_taped_reverse_loop_puts_back_the_value_before_the_iteration():
    """Read as written: the body saves the scalar ``t`` it overwrites with a row
    and the reverse puts it back before zeroing ``bt`` like it."""
    source = tc.grad(rows_after_a_scalar).source
    assert "t_old = t\n" in source and "t = t_old\n        bt = rt.zeros_like(t)" in source


# --- while tests that read what the body computes ------------------------------
def convergence_loop(x, a):
    err = 1.0
    while err > 1e-9:
        x_new = 0.5 * (x + a / x)
        err = np.max(np.abs(x_new - x))
        x = x_new
    return np.sum(x)


def err_read_after_the_loop(x, a):
    err = 1.0
    while err > 1e-3:
        x_new = 0.5 * (x + a / x)
        err = np.max(np.abs(x_new - x))
        x = x_new
    return np.sum(x) * err


def two_body_values_in_the_test(x, a):
    err = 1.0
    it = 0
    while err > 1e-6 and it < 50:
        x_new = 0.5 * x + 0.25 * np.tanh(x * a + 0.3)
        err = np.max(np.abs(x_new - x))
        x = x_new
        it = it + 1
    return np.sum(x) * it


def converged_flag(x, a):
    converged = False
    k = 0
    while not converged:
        x_new = 0.5 * x + 0.25 * np.tanh(x * a + 0.3)
        converged = np.max(np.abs(x_new - x)) < 1e-4 or k >= 40
        x = x_new
        k = k + 1
    return np.sum(x) * k


def while_true_with_break(x, a):
    while True:
        x_new = 0.5 * x + 0.25 * np.tanh(x * a + 0.3)
        err = np.sqrt(np.sum((x_new - x) ** 2))
        x = x_new
        if err < 1e-3:
            break
    return np.sum(x) + err


def value_read_first_in_the_body(x, a):
    d = np.sum(x)
    while d > 0.5:
        x = x * 0.5
        d = np.sum(x) - np.sum(a) * 0.01
    return np.sum(x * a) * d


def inner_convergence_loop(x, a):
    for i in range(3):
        err = 1.0
        while err > 1e-6:
            x_new = 0.5 * (x + a / x)
            err = np.max(np.abs(x_new - x))
            x = x_new
        x = x * 1.1 + a * err
    return np.sum(x)


WHILE_TESTS = [convergence_loop, err_read_after_the_loop, two_body_values_in_the_test,
               converged_flag, while_true_with_break, value_read_first_in_the_body,
               inner_convergence_loop]


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", WHILE_TESTS, ids=lambda f: f.__name__)
def test_while_test_reads_values_the_body_computes(f, options):
    _check(f, (np.array([1.2, 0.7, 3.0]), np.array([2.0, 3.0, 0.5])), (0, 1), OPTIONS[options])


def test_the_while_test_variable_is_carried_state():
    source = tc.grad(convergence_loop, checkpoint=True).source
    assert "carried: err, x" in source or "carried: x, err" in source


# --- and / or in tests ------------------------------------------------------------
def or_in_a_loop_test(x, n):
    flag = n > 100
    for t in range(n):
        if flag or t >= 2:
            x = x * 0.9
        else:
            x = x + 0.1 * x * x
    return np.sum(x)


def short_circuit_guards_an_index(x, n):
    for t in range(n):
        if t >= 3 or x[t] > 0.0:   # x[t] would index past the end when t >= 3
            x = x * 0.9
    return np.sum(x)


def and_of_numbers(x, n):
    k = 0
    for t in range(n):
        if k and t % 2:            # an int, not a bool: its truth
            x = np.sin(x)
        k = k + 1
    return np.sum(x)


def conditional_expression_with_or(x, n):
    flag = np.sum(x) > 100.0
    for t in range(n):
        x = x * 0.9 if (flag or t > 1) else x * x
    return np.sum(x)


def while_test_with_or(x, n):
    k = 0
    flag = np.sum(x) > 10.0
    while k < n and (flag or k < 3):
        x = x * 0.9 + 0.1 * np.tanh(x)
        k = k + 1
    return np.sum(x) * k


def not_of_and(x, n):
    y = x
    if not (n > 3 and np.sum(x) < 0):
        y = x * 3.0
    return np.sum(y)


BOOLEAN_TESTS = [or_in_a_loop_test, short_circuit_guards_an_index, and_of_numbers,
                 conditional_expression_with_or, while_test_with_or, not_of_and]


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", BOOLEAN_TESTS, ids=lambda f: f.__name__)
def test_and_or_in_a_test_is_its_truth(f, options):
    _check(f, (np.array([1.2, 0.7, -0.4]), 5), (0,), OPTIONS[options])


def test_and_or_as_a_value_inside_an_expression_stays_refused():
    """(``y = (n > 2) or x`` alone is the ``if`` it means: desugar/boolean_values.py.)"""
    def f(x, n):
        y = ((n > 2) or x) * 2.0
        return np.sum(y)
    with pytest.raises(tc.UnsupportedSyntaxError, match="used as a value"):
        tc.grad(f)(np.ones(2), 3)


@pytest.mark.parametrize("checkpoint", [False, True])
@pytest.mark.parametrize("f", LOOP_VARIABLES + BOOLEAN_TESTS + REBOUND_WITH_ANOTHER_SHAPE,
                         ids=lambda f: f.__name__)
def test_hessian_vector_products_across_the_loop_boundary(f, checkpoint):
    """tc.hvp differentiates the tangent program, made from these programs: its
    loop variables and tests keep their meaning (a test ``flag or t >= 2`` became
    ``cond = flag or t >= 2`` there, refused as a value until it read ``bool(...)``)."""
    x, v, eps = np.array([1.2, 0.7, -0.4]), np.array([0.3, -0.2, 0.5]), 1e-5
    g = tc.grad(f)
    want = (g(x + eps * v, 4) - g(x - eps * v, 4)) / (2 * eps)
    got = tc.hvp(f, checkpoint=checkpoint, snapshots=2 if checkpoint else None)(x, 4, v)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# --- random draws in tests ------------------------------------------------------
def draw_in_an_if_test(x, n):
    for t in range(n):
        if np.random.rand() < 0.5:
            x = x * 0.9
        else:
            x = x * 1.1
    return np.sum(x)


def draws_in_the_while_test_and_the_body(x, n):
    k = 0
    while np.random.rand() < 0.95 and k < n:
        x = x * (0.9 + 0.2 * np.random.rand())
        k = k + 1
    return np.sum(x)


@pytest.mark.parametrize("f", [draw_in_an_if_test, draws_in_the_while_test_and_the_body],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("snapshots", [1, 2, 5])
def test_draws_in_tests_replay_in_recomputed_steps(f, snapshots):
    x = np.array([1.0, 0.5, -0.3])
    np.random.seed(3)
    want = tc.value_and_grad(f)(x, 40)
    np.random.seed(3)
    got = tc.value_and_grad(f, checkpoint=True, snapshots=snapshots)(x, 40)
    assert np.isclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


# --- the Numba backend ------------------------------------------------------------
@pytest.mark.parametrize("f", [range_variable_bound_before, enumerate_index_and_row,
                               variable_left_by_break, inner_and_outer_variables],
                         ids=lambda f: f.__name__)
def test_numba_backend_rebinds_the_loop_variable_too(f):
    pytest.importorskip("numba")
    import warnings
    x = np.array([1.2, 0.7, -0.4])
    want = tc.value_and_grad(f)(x, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a function Numba cannot compile runs with NumPy
        got = tc.value_and_grad(f, checkpoint=True, backend="numba")(x, 4)
    assert np.isclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def rows_updated_in_place(x):
    y = x * 1.0
    for v in y:
        y += v
    return np.sum(y ** 2)


def rows_scaled_in_place(x, n):
    Y = np.outer(x, x[:2])
    for t in range(n):
        for r in Y:
            Y *= 0.5 + 0.1 * np.sum(r)
    return np.sum(Y)


def rows_of_a_slice_written_elsewhere(x):
    y = x * 1.0
    for v in y[1:]:
        y[0] += v
    return np.sum(y ** 2)


def forward_difference_in_place(x):
    y = x * 1.0
    for i, v in enumerate(y[1:]):
        y[i] = v - y[i]
    return np.sum(y ** 2)


def columns_written_while_visited(x):
    Y = np.outer(x, x)
    for c in Y.T:
        Y[0] = Y[0] * 0.5 + c
    return np.sum(Y ** 2)


def pairs_of_neighbours_written(x):
    y = x * 1.0
    for a, b in zip(y, y[1:]):
        y[1] = y[1] + a * b
    return np.sum(y)


@pytest.mark.parametrize("f, args", [(rows_updated_in_place, ()), (rows_scaled_in_place, (2,)),
                                     (rows_of_a_slice_written_elsewhere, ()),
                                     (forward_difference_in_place, ()),
                                     (columns_written_while_visited, ()),
                                     (pairs_of_neighbours_written, ())],
                         ids=["+=", "*=", "slice", "forward difference", ".T", "zip"])
def test_a_loop_over_an_array_its_body_updates_in_place_sees_the_updates(f, args):
    """``for v in y: y += v`` writes into y's memory, which the rows still to come
    show; the loop read the rows of the array from before it (24 for 39)."""
    x = np.array([1.0, 2.0, 3.0])
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        value, grad = tc.value_and_grad(f, **options)(x, *args)
        assert value == pytest.approx(f(x, *args), rel=1e-12)
        np.testing.assert_allclose(grad, numeric_grad(f, [x, *args], (0,))[0], rtol=1e-6)


# --- a read of a name no path bound: Python's UnboundLocalError -----------------
# Where a path may leave a name unbound, the gradient binds it on entry (a save, a
# zero adjoint, a checkpointed loop's state need a value) to rt.UNBOUND -- it was
# None, and a read after a loop that ran no step, or a branch not taken, gave the
# value None and a zero gradient, or a TypeError.  Each such read checks it.
def bound_in_a_branch_of_the_body(x, n):
    for t in range(n):
        x = np.tanh(x * 1.6)
        if np.sum(x) > 1.0:
            best = x * t
    return np.sum(best)


def bound_in_the_body(x, n):
    for t in range(n):
        y = np.sin(x) * t
        x = x + y
    return np.sum(y)


def bound_in_the_body_then_added(x, n):
    for t in range(n):
        y = np.sin(x) * t
        x = x + y
    return np.sum(y) + np.sum(x)


def row_variable_after_no_row(x, A):
    for row in A:
        x = x + np.sin(row)
    return np.sum(x * row)


def break_before_the_first_binding(x, n):
    for t in range(n):
        x = np.tanh(x)
        if t == 0:
            break
        y = x * 2.0
    return np.sum(y)


def _loop_variable_of_an_empty_loop(x, n):
    for t in range(n):
        x = x * 1.1
    return x * t


def helper_reads_its_empty_loops_variable(x, m):
    for k in range(m):
        x = _loop_variable_of_an_empty_loop(x, 0) + x
    return np.sum(x)


def bound_in_a_branch_not_taken(x, c):
    if c > 0:
        z = x * 2.0
    return np.sum(z)


_X3 = np.array([0.3, 0.7, 0.2])
READS_OF_UNBOUND_NAMES = [
    (bound_in_a_branch_of_the_body, (_X3 * 0.01, 5)), (bound_in_the_body, (_X3, 0)),
    (bound_in_the_body_then_added, (_X3, 0)), (row_variable_after_no_row, (_X3, np.zeros((0, 3)))),
    (break_before_the_first_binding, (_X3, 3)), (helper_reads_its_empty_loops_variable, (_X3, 2)),
    (bound_in_a_branch_not_taken, (_X3, -1.0))]


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f, args", READS_OF_UNBOUND_NAMES,
                         ids=lambda a: a.__name__ if callable(a) else "")
def test_a_read_of_a_name_no_path_bound_raises_as_python_does(f, args, options):
    with pytest.raises(NameError) as python:  # UnboundLocalError is a NameError
        f(*args)
    for gradient in (tc.grad, tc.value_and_grad):
        with pytest.raises(type(python.value), match=str(python.value).split("'")[1]):
            gradient(f, **OPTIONS[options])(*args)


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f, args", [(bound_in_a_branch_of_the_body, (_X3, 5)),
                                     (bound_in_the_body, (_X3, 3)),
                                     (row_variable_after_no_row, (_X3, np.ones((2, 3)))),
                                     (bound_in_a_branch_not_taken, (_X3, 1.0))],
                         ids=lambda a: a.__name__ if callable(a) else "")
def test_a_checked_read_of_a_bound_name_gives_the_gradient(f, args, options):
    _check(f, args, (0,), OPTIONS[options])


def test_only_reads_of_names_bound_in_advance_are_checked():
    """A name surely bound where it is read, or that nothing binds in advance
    (a taped loop keeps a body value read after it in a slot of its own), needs
    no check: its read raises by itself; the code is as before."""
    for f, options in [(range_variable_bound_before, {}),
                       (range_variable_bound_before, dict(checkpoint=True)),
                       (rnn_output_after_the_loop, {})]:
        source = tc.grad(f, **options).source
        assert "check_bound" not in source and "UNBOUND" not in source, source
    source = tc.grad(bound_in_a_branch_of_the_body).source
    assert "    best = rt.UNBOUND\n" in source, source
    assert "rt.check_bound(best, 'best')" in source, source
    # a checkpointed loop's state starts rt.UNBOUND: the read after it checks
    source = tc.grad(rnn_output_after_the_loop, checkpoint=True).source
    assert "(rt.UNBOUND, x)" in source and "rt.check_bound(y, 'y')" in source, source


def two_loop_recursion(x):
    s_list, y_list = [], []
    for k in range(3):
        x = np.sin(x) + 0.1 * k
        s_list.append(x)
        y_list.append(x * x)
    q = x
    alphas = []
    for s, y in zip(reversed(s_list), reversed(y_list)):
        a = np.dot(s, q) / np.dot(y, s)
        alphas.append(a)
        q = q - a * y
    for s, y, a in zip(s_list, y_list, reversed(alphas)):
        q = q + s * (a - np.dot(y, q) / np.dot(y, s))
    return np.sum(q ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
def test_zip_of_reversed_lists_goes_over_them_backwards(options):
    """L-BFGS's two-loop recursion ``zip(reversed(s_list), reversed(y_list))``:
    each ``reversed(xs)`` given to zip is ``xs[::-1]``, as in a loop over it
    alone (it was refused: no adjoint rule for builtins.reversed)."""
    x = np.array([0.4, -1.1, 0.7])
    check_grad(two_loop_recursion, (x,), wrt=(0,),
               df=tc.grad(two_loop_recursion, wrt=(0,), **options))
