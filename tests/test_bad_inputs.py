"""Bad inputs: each gets a clear error or a documented, tested behaviour.

Extends tests/test_errors.py (which covers try, with, yield, global, lambda,
list comprehensions, .sort(), out=, unsupported NumPy functions and bad wrt
values) without repeating it.  docs/reliability.md lists the behaviours.
"""

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt.errors import (CheckpointError, NondeterministicStepError,  # noqa: E402
                                 SourceUnavailableError, UnsupportedFunctionError,
                                 UnsupportedSyntaxError, WrtError)
from gradcheck import check_grad, numeric_grad  # noqa: E402
from source_lines import line_of  # noqa: E402

HERE = os.path.basename(__file__)



def expect(fn, marker, words, cls, **options):
    """Compiling ``fn`` raises ``cls`` naming this file, the marker's line and ``words``."""
    with pytest.raises(cls) as info:
        tc.grad(fn, **options).compile()
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, marker)}:" in message, message
    assert words in message, message
    assert info.value.hint, message
    return info.value


# ---------------------------------------------------------------- unsupported constructs

def f_kwargs(x, **kw):
    return np.sum(x)


def f_varargs(x, *rest):
    return np.sum(x)


def f_genexp(x):
    return sum(v for v in (x, x * 2.0) if np.sum(v) > 0)


def f_fill(x):
    y = x * 1.0
    y.fill(0.0)
    return np.sum(y)


def f_list_append(x):
    ys = x * 1.0  # an array: arrays have no append (lists do: tests/test_containers.py)
    ys.append(x)
    return np.sum(ys)


def f_ufunc_out(x):
    y = x * 1.0
    np.exp(y, out=(y,))   # a tuple of outputs (out=y itself is a write: test_effect_calls.py)
    return np.sum(y)


def f_del(x):
    y = x * 2.0
    del y
    return np.sum(x)


def f_raise(x):
    if np.sum(x) > 100:
        raise  # a bare raise: no exception to re-raise (raise ValueError(...) is kept)
    return np.sum(x)


def f_import(x):
    import math
    return np.sum(x) * math.pi


def f_class(x):
    class A:
        pass
    return np.sum(x)


def f_starred(x):
    a, *rest = x
    return a


def f_walrus(x):
    if np.sum(x) > 1.0 or (y := np.sum(x * x)) > 0:  # `:=` after another part: refused
        return np.sum(x)
    return y * 2.0


def f_walrus_first(x):
    if (y := np.sum(x)) > 0:
        return y
    return y * 2.0


def f_match(x):
    match 1:
        case 1:
            y = x
    return np.sum(y)


def f_setattr(x):
    y = x * 1.0
    y.shape = (3, 1)
    return np.sum(y)


def f_inner_generator(x):
    def g():
        yield x
    return np.sum(next(g()))


def f_with_lock(x):
    import threading  # noqa: F401  (never reached: the with is refused first)
    with open(__file__):
        y = x
    return np.sum(y)


@pytest.mark.parametrize("fn, marker, words", [
    (f_kwargs, "def f_kwargs", "**kwargs"),
    (f_varargs, "def f_varargs", "*args"),
    (f_genexp, "if np.sum(v) > 0", "condition known only at run time"),
    (f_fill, "y.fill", ".fill()"),
    (f_list_append, "ys.append", ".append()"),
    (f_ufunc_out, "out=(y,)", "out="),
    (f_del, "del y", "del"),
    (f_raise, "raise  #", "bare raise"),
    (f_import, "import math", "import"),
    (f_class, "class A", "class"),
    (f_starred, "a, *rest", "starred"),
    (f_walrus, "(y := ", "assignment expression"),
    (f_match, "match 1", "Match"),
    (f_setattr, "y.shape =", "attribute"),
    (f_inner_generator, "yield x", "yield"),
])
def test_unsupported_construct_is_a_clear_error(fn, marker, words):
    expect(fn, marker, words, UnsupportedSyntaxError)


def test_walrus_was_a_silent_wrong_gradient():
    # regression: `if (y := ...)` kept the condition as written, so the gradient
    # through y was silently zero; then it was refused; since session 19 the `:=`
    # Python evaluates first is the assignment before the if
    # (desugar/named_expressions.py), with y's gradient
    x = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(tc.grad(f_walrus_first)(x), np.ones(3), rtol=1e-12)
    np.testing.assert_allclose(tc.grad(f_walrus_first)(-x), 2.0 * np.ones(3), rtol=1e-12)


def test_lambda_without_source_through_checkpointing():
    fn = eval("lambda x, n: x * n")
    with pytest.raises(SourceUnavailableError):
        tc.grad_with_checkpointing(fn, snapshots=2).compile()


# ---------------------------------------------------------------- unsupported functions

def f_nanstd(x):
    return np.sum(np.nanstd(x))


def f_random_active(x):
    return np.sum(np.random.gamma(x, 1.0))   # a shape parameter: no pathwise rule


def f_unique(x):
    return np.sum(np.unique(x))


@pytest.mark.parametrize("fn, marker, name", [
    (f_nanstd, "np.nanstd", "np.nanstd"),
    (f_random_active, "np.random.gamma", "gamma"),
    (f_unique, "np.unique", "unique"),
])
def test_unsupported_function_names_it(fn, marker, name):
    err = expect(fn, marker, name, UnsupportedFunctionError)
    assert "register_adjoint" in str(err)


# ---------------------------------------------------------------- wrt values

def f_plain(x, y):
    return np.sum(x * y)


@pytest.mark.parametrize("value, words", [
    (np.array([1, 2, 3], dtype=object), "object"),
    (np.array([1.0, 2.0, 3.0], dtype=complex), "complex"),
    (np.array([1, 0, 1], dtype=bool), "bool"),
    (np.array([1, 2, 3], dtype=np.uint8), "uint8"),
    (1.0 + 2.0j, "complex"),
    (None, "NoneType"),
])
def test_wrt_value_that_is_not_float(value, words):
    with pytest.raises(WrtError, match=words):
        tc.grad(f_plain, wrt=0)(value, np.ones(3))


def test_integer_array_not_in_wrt_is_fine():
    x = np.array([1, 2, 3])
    g = tc.grad(f_plain, wrt=1)(x, np.ones(3))
    np.testing.assert_array_equal(g, [1.0, 2.0, 3.0])


def test_float16_and_float32_wrt_keep_their_dtype():
    for dtype in (np.float16, np.float32):
        g = tc.grad(f_plain, wrt=0)(np.ones(3, dtype=dtype), np.full(3, 2.0, dtype=dtype))
        assert g.dtype == dtype
        np.testing.assert_allclose(g, 2.0)


# ---------------------------------------------------------------- NaN / inf

def rnn(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


def elementwise(x, n):
    for t in range(n):
        x = np.sin(x) * 0.9 + x * 0.1
    return np.sum(x)


@pytest.mark.parametrize("options", [{}, dict(checkpoint=True, snapshots=2),
                                     dict(checkpoint=True, snapshots=2, verify=True),
                                     dict(checkpoint=True, schedule="online", disk_snapshots=1)])
def test_nan_and_inf_propagate_like_numpy(options):
    """NaN/inf inputs are not checked: they propagate through the gradient exactly as
    NumPy propagates them (no exception; verify=True does not mistake NaN for
    non-determinism), and the checkpointed gradient equals the taped one."""
    x = np.array([np.nan, 0.5, np.inf, -np.inf])
    with np.errstate(all="ignore"):
        want = tc.grad(elementwise)(x, 4)
        got = tc.grad(elementwise, **options)(x, 4)
    np.testing.assert_array_equal(got, want)  # NaN == NaN here
    assert np.isnan(got[0]) and np.isfinite(got[1])
    assert np.isnan(got[2]) and np.isnan(got[3])  # sin(inf) is NaN
    W = np.eye(4) * 0.5
    with np.errstate(all="ignore"):
        g = tc.grad(rnn, wrt=(0, 1), **options)(x, W, 3)
    assert all(np.isnan(gk).any() for gk in g)


# ---------------------------------------------------------------- loops: trip counts

@pytest.mark.parametrize("schedule", ["revolve", "uniform", "online"])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_zero_one_and_two_step_loops(schedule, n):
    h, W = np.array([0.1, -0.2, 0.3]), np.eye(3) * 0.5 + 0.1
    taped = tc.grad(rnn, wrt=(0, 1))(h, W, n)
    for snapshots in (None, 1, 3):
        got = tc.grad(rnn, wrt=(0, 1), checkpoint=True, schedule=schedule,
                      snapshots=snapshots)(h, W, n)
        for a, b in zip(got, taped):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    if n == 0:  # zero trips: the identity, and zero for W (an array, not a scalar)
        np.testing.assert_array_equal(taped[0], np.ones(3))
        assert taped[1].shape == (3, 3) and not taped[1].any()


def rnn_range(h, W, start, stop, step):
    for t in range(start, stop, step):
        h = np.tanh(h @ W)
    return np.sum(h)


@pytest.mark.parametrize("bounds", [(5, 2, 1), (0, 0, 1), (3, -3, -2), (0, 1, 5)])
def test_empty_and_one_step_ranges(bounds):
    h, W = np.array([0.1, -0.2, 0.3]), np.eye(3) * 0.5
    taped = tc.grad(rnn_range, wrt=(0, 1))(h, W, *bounds)
    got = tc.grad(rnn_range, wrt=(0, 1), checkpoint=True, snapshots=2)(h, W, *bounds)
    for a, b in zip(got, taped):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ---------------------------------------------------------------- checkpoint options

@pytest.mark.parametrize("kwargs, words", [
    (dict(snapshots=0), "at least 1"),
    (dict(snapshots=-3), "at least 1"),
    (dict(snapshots=2.5), "positive integer"),
    (dict(snapshots=True), "positive integer"),
    (dict(snapshots=2, memory_budget="1MB"), "not both"),
    (dict(memory_budget=0), "positive"),
    (dict(memory_budget=-1), "positive"),
    (dict(memory_budget="lots"), "cannot read"),
    (dict(memory_budget=float("nan")), "positive"),
    (dict(memory_budget=-float("inf")), "positive"),
    (dict(snapshots=float("nan")), "positive integer"),
    (dict(snapshots=float("inf")), "positive integer"),
    (dict(schedule="binomial"), "schedule must be"),
    (dict(disk_snapshots=-1), "disk_snapshots"),
    (dict(min_steps=-1), "min_steps"),
])
def test_bad_checkpoint_options_fail_at_grad_time(kwargs, words):
    with pytest.raises(CheckpointError, match=words):
        tc.grad_with_checkpointing(rnn, **kwargs)


@pytest.mark.parametrize("budget", [1, 100, "0.1kB"])
def test_memory_budget_below_one_state(budget):
    df = tc.grad_with_checkpointing(rnn, memory_budget=budget)
    with pytest.raises(CheckpointError, match="cannot hold one snapshot") as info:
        df(np.zeros(100), np.eye(100) * 0.1, 5)
    assert "raise the budget" in str(info.value)
    assert "800 bytes" in str(info.value)  # the measured state size


def rnn_until(h, W, n):
    k = 0
    while k < n:
        h = np.tanh(h @ W)
        k = k + 1
    return np.sum(h)


@pytest.mark.parametrize("fn", [rnn, rnn_until], ids=lambda f: f.__name__)
@pytest.mark.parametrize("options", [
    dict(snapshots=10**9), dict(snapshots=10**30), dict(snapshots=10**9, schedule="online"),
    dict(snapshots=10**9, schedule="uniform"), dict(snapshots=10**9, disk_snapshots=10**9),
    dict(memory_budget=float("inf")), dict(memory_budget=10**40),
    dict(memory_budget="1e400GB"), dict(memory_budget=float("inf"), disk_snapshots=2),
], ids=repr)
def test_huge_and_unbounded_sizes_are_capped_by_the_trip_count(fn, options):
    """More snapshots than steps, or a budget without bound, keep every state of the
    loop and allocate nothing for the rest (snapshots=10**9 on a 4-step loop built a
    free list of 10**9 slots; memory_budget=float('inf') raised an OverflowError)."""
    import tracemalloc
    h, W = np.linspace(-0.5, 0.5, 3), np.eye(3) * 0.7
    want = tc.grad(fn, wrt=(0, 1))(h, W, 4)
    df = tc.grad(fn, wrt=(0, 1), checkpoint=True, **options)
    df.compile()
    tracemalloc.start()
    try:
        got = df(h, W, 4)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 10**6
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)


def test_uniform_schedule_with_too_few_snapshots_says_so():
    df = tc.grad_with_checkpointing(rnn, snapshots=1, schedule="uniform")
    with pytest.raises(CheckpointError, match="use schedule='revolve'"):
        df(np.ones(3), np.eye(3), 50)


# ---------------------------------------------------------------- state changing shape / dtype

def shrinking(x, n):
    for t in range(n):
        x = np.tanh(x[1:] * 2.0 + 0.1)   # one element shorter every step
    return np.sum(x)


def growing(x, n):
    for t in range(n):
        x = np.tanh(np.concatenate([x, x[:1] * 0.5]))
    return np.sum(x)


def int_then_float(x, n):
    h = 0                     # an int, then a float array after the first step
    for t in range(n):
        h = np.tanh(h + x)
    return np.sum(h)


def scalar_then_array(x, n):
    h = 1.0
    for t in range(n):
        h = np.tanh(h * x + 0.1)
    return np.sum(h)


@pytest.mark.parametrize("fn, n", [(shrinking, 3), (growing, 4), (int_then_float, 4),
                                   (scalar_then_array, 3), (int_then_float, 0)])
@pytest.mark.parametrize("options", [dict(snapshots=1), dict(snapshots=2, verify=True),
                                     dict(schedule="online", snapshots=2),
                                     dict(schedule="uniform", snapshots=3),
                                     dict(memory_budget="64kB"),
                                     dict(snapshots=1, disk_snapshots=1)])
def test_state_changing_shape_or_dtype_mid_loop_is_correct(fn, n, options):
    """Decision: a loop state whose shape or dtype changes from step to step is
    supported — snapshots store whatever the state is — and the gradient is
    correct.  (A memory budget is checked against the state at loop entry.)"""
    x = np.array([0.3, -0.2, 0.5, 0.1])
    taped = tc.grad(fn)(x, n)
    got = tc.grad(fn, checkpoint=True, **options)(x, n)
    assert got.shape == x.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, taped, rtol=1e-12)
    np.testing.assert_allclose(got, numeric_grad(fn, (x, n))[0], rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- non-deterministic steps

def random_in_loop(x, n):
    for t in range(n):
        x = np.tanh(x * np.random.rand(3) + 0.1)
    return np.sum(x)


def noisy(x):
    """A black box that returns random numbers: its adjoint is registered below."""
    return x + 0.1 * np.random.rand(*np.shape(x))


tc.register_adjoint(noisy, lambda g, ans, x: (g,))


def black_box_in_loop(x, n):
    for t in range(n):
        x = np.tanh(noisy(x) * 0.9)
    return np.sum(x)


@pytest.mark.parametrize("options", [dict(snapshots=2), dict(schedule="online", snapshots=2),
                                     dict(snapshots=1, disk_snapshots=1)])
def test_random_numbers_in_a_black_box_are_caught_by_verify(options):
    """A black box with a registered adjoint is trusted: the compiler cannot see
    that it draws from the global random state, so recomputation draws new
    numbers.  verify=True re-runs the steps whose stored state it can compare
    and raises.  (np.random.* called in the loop itself is replayed: see
    tests/test_random_state.py.)"""
    x = np.array([0.1, 0.2, 0.3])
    with pytest.raises(NondeterministicStepError, match="not deterministic"):
        tc.grad(black_box_in_loop, checkpoint=True, verify=True, **options)(x, 8)


@pytest.mark.parametrize("options", [dict(snapshots=2), dict(schedule="online", snapshots=2),
                                     dict(snapshots=1, disk_snapshots=1)])
def test_random_numbers_in_the_loop_pass_verify(options):
    x = np.array([0.1, 0.2, 0.3])
    np.random.seed(4)
    taped = tc.grad(random_in_loop)(x, 8)
    np.random.seed(4)
    checkpointed = tc.grad(random_in_loop, checkpoint=True, verify=True, **options)(x, 8)
    np.testing.assert_allclose(checkpointed, taped, rtol=1e-12)


def test_random_numbers_with_a_fixed_seed_inside_are_deterministic():
    def seeded(x, n):
        return random_in_loop(x, n)
    x = np.array([0.1, 0.2, 0.3])
    np.random.seed(0)
    taped = tc.grad(random_in_loop)(x, 6)
    np.random.seed(0)
    value = random_in_loop(x, 6)
    assert np.isfinite(value) and taped.shape == (3,)


def test_verify_passes_deterministic_loops():
    h, W = np.array([0.1, -0.2, 0.3]), np.eye(3) * 0.5 + 0.1
    want = tc.grad(rnn, wrt=(0, 1))(h, W, 9)
    with tc.profile() as prof:
        got = tc.grad(rnn, wrt=(0, 1), checkpoint=True, snapshots=2, verify=True)(h, W, 9)
    assert prof.verify_steps > 0
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# ---------------------------------------------------------------- inputs are not mutated

def writes_into_parameter(x, n):
    for t in range(n):
        x[0] = np.tanh(x[1] * 2.0)
        x = x * 0.9
    return np.sum(x)


def iadd_parameter(x):
    x += 1.0
    return np.sum(x * x)


@pytest.mark.parametrize("options", [{}, dict(checkpoint=True, snapshots=1)])
def test_gradient_never_mutates_inputs_even_when_the_function_would(options):
    """Python would change the caller's array; the gradient works on copies, so the
    caller's array is untouched, and the gradient is that of the function's value."""
    x = np.array([0.1, 0.2, 0.3])
    before = x.copy()
    g = tc.grad(writes_into_parameter, **options)(x, 3)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(g, numeric_grad(writes_into_parameter, (x, 3))[0],
                               rtol=1e-6, atol=1e-8)
    g = tc.grad(iadd_parameter, **options)(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(g, 2 * (before + 1.0))


def test_check_grad_helper_on_nan_free_inputs_still_works():
    check_grad(elementwise, (np.array([0.1, 0.2]), 3))


# ---------------------------------------------------------------- state outside the call
LOSSES = []


def f_logs_into_a_module_list(x, n):
    for t in range(n):
        x = np.tanh(x * 1.1 + 0.1)
        LOSSES.append(float(np.sum(x)))   # LOG
    return np.sum(x ** 2)


def f_returns_its_log(x, n):
    log = []
    for t in range(n):
        x = np.tanh(x * 1.1 + 0.1)
        log.append(float(np.sum(x)))
    return np.sum(x ** 2), np.array(log)


def test_a_module_list_grown_in_the_loop_is_refused_with_the_has_aux_way_out():
    """It read "in-place method .append() changes an array": LOSSES is no array."""
    err = expect(f_logs_into_a_module_list, "# LOG", "changes the list 'LOSSES'",
                 UnsupportedSyntaxError)
    assert "has_aux=True" in err.hint
    x = np.array([0.3, -0.2])
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        grad, log = tc.grad(f_returns_its_log, has_aux=True, **options)(x, 6)
        np.testing.assert_allclose(log, f_returns_its_log(x, 6)[1], rtol=0, atol=0)
    assert LOSSES == []


class _CountedCell:
    calls = 0

    def __init__(self, W):
        self.W = W

    def step(self, h):
        _CountedCell.calls += 1   # COUNT
        return np.tanh(self.W @ h)


def f_counts_on_its_class(W, h):
    cell = _CountedCell(W)
    for t in range(3):
        h = cell.step(h)
    return np.sum(h ** 2)


def test_a_class_attribute_rebound_is_refused_as_what_it_is():
    """It read "a write into an array the module-level object '_CountedCell' holds",
    with the hint to copy an array."""
    with pytest.raises(UnsupportedSyntaxError) as info:
        tc.grad(f_counts_on_its_class).compile()
    message, hint = str(info.value), info.value.hint
    assert f"{HERE}:{line_of(_CountedCell.step, '# COUNT')}:" in message, message
    assert "the attribute '_CountedCell.calls'" in message, message
    assert "local variable" in hint and "np.array" not in hint, hint
    assert _CountedCell.calls == 0
