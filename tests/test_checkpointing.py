"""Checkpointed loops (compiler/loops.py): every construct's checkpointed
gradient equals the taped gradient to 1e-12 and both agree with finite
differences; memory and recomputation counts come from the profiler."""

import copy
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tangent_ckpt as tc
from gradcheck import assert_unchanged, check_grad, numeric_grad
from tangent_ckpt.runtime.scheduling.schedules import revolve_cost

rng = np.random.default_rng(42)


# --- user programs, written as users write them ------------------------------
def rnn(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def lstm_cell(x, h, c, Wx, Wh):
    z = x @ Wx + h @ Wh
    i = 1.0 / (1.0 + np.exp(-z[:, :4]))
    f = 1.0 / (1.0 + np.exp(-z[:, 4:8]))
    g = np.tanh(z[:, 8:])
    c = f * c + i * g
    return np.tanh(c), c


def lstm(xs, Wx, Wh, h, c):
    state = (h, c)
    for x in xs:
        h, c = state
        state = lstm_cell(x, h, c, Wx, Wh)
    h, c = state
    return np.sum(h * h) + np.sum(c)


def running_cost(x, price, target, n):
    cost = 0.0
    for t in range(n):
        x = 0.9 * x + 0.1 * price[t]
        cost = cost + (x - target) ** 2 * price[t]
    return cost


def heat(u, alpha, steps):
    u = u.copy()
    for k in range(steps):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + alpha * lap
    return np.sum(u ** 2)


def strided(x, a, start, stop, step):
    for t in range(start, stop, step):
        x = x * a + np.sin(t * x)
    return np.sum(x)


def with_branch(x, w, n):
    for t in range(n):
        if t % 3 == 0:
            x = np.tanh(x * w)
        else:
            x = x + 0.1 * np.sin(x)
    return np.sum(x)


def rows(xs, w):
    acc = np.zeros(3)
    for row in xs:
        acc = np.tanh(acc * w + row)
    return np.sum(acc)


def nested(x, w, n, m):
    for t in range(n):
        for s in range(m):
            x = np.sin(x * w) + x
    return np.sum(x)


def while_loop(x, w):
    k = 0
    while k < 7:
        x = np.tanh(x * w) + 0.5 * x
        k = k + 1
    return np.sum(x)


def with_break(x, w, n):
    for t in range(n):
        x = x * w
        if np.sum(x) > 50.0:
            break
    return np.sum(x)


def rk4_rhs(x, F):
    return (np.roll(x, -1) - np.roll(x, 2)) * np.roll(x, 1) - x + F


def lorenz(x, F, dt, n):
    for t in range(n):
        k1 = rk4_rhs(x, F)
        k2 = rk4_rhs(x + 0.5 * dt * k1, F)
        k3 = rk4_rhs(x + 0.5 * dt * k2, F)
        k4 = rk4_rhs(x + dt * k3, F)
        x = x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(x ** 2)


CASES = {
    "rnn": (rnn, lambda: (rng.standard_normal((3, 4)), 0.4 * rng.standard_normal((4, 4)),
                          rng.standard_normal(4), 9), (1, 2)),
    "lstm": (lstm, lambda: (rng.standard_normal((6, 2, 3)), 0.3 * rng.standard_normal((3, 12)),
                            0.3 * rng.standard_normal((4, 12)), np.zeros((2, 4)),
                            np.zeros((2, 4))), (0, 1, 2)),
    "running_cost": (running_cost, lambda: (0.5, rng.random(12), 0.3, 12), (0, 1)),
    "heat": (heat, lambda: (rng.random(10), 0.2, 8), (0, 1)),
    "strided": (strided, lambda: (rng.random(4), 0.9, 2, 17, 3), (0, 1)),
    "branch": (with_branch, lambda: (rng.random(4), 1.1, 10), (0, 1)),
    "rows": (rows, lambda: (rng.standard_normal((7, 3)), 0.8), (0, 1)),
    "nested": (nested, lambda: (rng.random(3), 0.7, 4, 3), (0, 1)),
    "while": (while_loop, lambda: (rng.random(3), 0.9), (0, 1)),
    "break": (with_break, lambda: (rng.random(3) + 1.0, 1.5, 30), (0, 1)),
    "lorenz": (lorenz, lambda: (rng.standard_normal(6), 8.0, 0.01, 15), (0, 1)),
}


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("schedule,snapshots,nested", [
    ("revolve", 2, False), ("revolve", 5, False), ("uniform", 6, False), ("online", 3, False),
    ("revolve", 2, True)])
def test_checkpointed_gradient_equals_taped(name, schedule, snapshots, nested):
    f, make, wrt = CASES[name]
    args = make()
    before = copy.deepcopy(list(args))
    taped = tc.grad(f, wrt=wrt)(*args)
    ckpt = tc.grad(f, wrt=wrt, checkpoint=True, snapshots=snapshots, schedule=schedule,
                   nested=nested)
    got = ckpt(*args)
    assert_unchanged(before, list(args))
    for g, t in zip(got, taped):
        assert np.shape(g) == np.shape(t)
        assert _rel(g, t) <= 1e-12


@pytest.mark.parametrize("name", sorted(CASES))
def test_checkpointed_gradient_matches_finite_differences(name):
    f, make, wrt = CASES[name]
    args = make()
    got = tc.grad_with_checkpointing(f, wrt=wrt, snapshots=3)(*args)
    expected = numeric_grad(f, args, wrt)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)


def test_decorator_forms_agree():
    h, W, b = rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((3, 3)), rng.random(3)
    bare = tc.grad_with_checkpointing(rnn)
    configured = tc.grad_with_checkpointing(wrt=(1, 2), snapshots=4)(rnn)
    call = tc.grad_with_checkpointing(rnn, wrt=(1, 2), memory_budget="64KB")
    taped = tc.grad(rnn, wrt=(1, 2))(h, W, b, 11)
    np.testing.assert_allclose(bare(h, W, b, 11), tc.grad(rnn)(h, W, b, 11), rtol=1e-12)
    for got in (configured(h, W, b, 11), call(h, W, b, 11)):
        for g, t in zip(got, taped):
            np.testing.assert_allclose(g, t, rtol=1e-12)


@given(n=st.integers(0, 40), snapshots=st.integers(1, 12),
       schedule=st.sampled_from(["revolve", "uniform", "online"]))
@settings(max_examples=40, deadline=None)
def test_random_trip_counts_and_snapshots(n, snapshots, schedule):
    h = np.linspace(-1, 1, 6).reshape(2, 3)
    W = 0.5 * np.eye(3) + 0.1
    b = np.array([0.1, -0.2, 0.3])
    taped = tc.grad(rnn, wrt=(1, 2))(h, W, b, n)
    if schedule == "uniform" and n > 1:
        snapshots = max(snapshots, 2 * int(np.ceil(np.sqrt(n))))  # uniform holds a segment tape
    got = tc.grad(rnn, wrt=(1, 2), checkpoint=True, snapshots=snapshots,
                  schedule=schedule)(h, W, b, n)
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n,s", [(1, 1), (10, 1), (50, 3), (100, 10), (1000, 10)])
def test_forward_steps_meet_the_binomial_optimum(n, s):
    h, W, b = np.ones((1, 2)), 0.1 * np.eye(2), np.zeros(2)
    df = tc.grad_with_checkpointing(rnn, wrt=1, snapshots=s)
    with tc.profile() as prof:
        df(h, W, b, n)
    r, A, T = revolve_cost(n, s)
    assert prof.forward_steps + prof.recorded_steps <= T + 1
    assert prof.recorded_steps == n
    assert prof.peak_snapshots <= s


def test_generated_source_shows_the_checkpointing():
    df = tc.grad_with_checkpointing(rnn, wrt=(1, 2), snapshots=10)
    src = df.source
    assert "def loop" in src and "_step(t, h, W, b):" in src
    assert "_adjoint(t, h, h_next, bstate, W, b, W_T):" in src
    assert "next_state=True" in src
    assert "rt.CheckpointedLoop(range(n), snapshots=10" in src
    assert ".forward(" in src and ".reverse(" in src
    assert "carried: h; invariant: W, b; Revolve schedule, 10 snapshots" in src
    assert "tape = []" not in src  # one iteration is re-recorded: no tape of all steps


def test_disk_snapshots_are_removed_when_a_step_raises():
    def exploding(x, w, n):
        for t in range(n):
            x = np.sqrt(x * w) - 1.0 / (x - 0.0)
        return np.sum(x)

    before = set(os.listdir(tempfile.gettempdir()))
    df = tc.grad(exploding, wrt=0, checkpoint=True, snapshots=1, disk_snapshots=2)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError):
            df(np.array([4.0, 9.0]), -1.0, 5)
    after = set(os.listdir(tempfile.gettempdir()))
    assert not [p for p in after - before if "tangent" in p or "ckpt" in p]


def test_memory_budget_too_small_is_a_clear_error_before_any_work():
    calls = []

    def counted(x, n):
        for t in range(n):
            x = np.sin(x)
        return np.sum(x)

    df = tc.grad(counted, checkpoint=True, memory_budget=100)
    with pytest.raises(tc.CheckpointError, match="cannot hold one snapshot"):
        df(np.ones(1000), 5)
    del calls


@pytest.mark.parametrize("bad", [0, -3])
def test_non_positive_snapshots_rejected(bad):
    with pytest.raises(tc.CheckpointError):
        tc.grad_with_checkpointing(rnn, snapshots=bad)


def test_checkpointed_memory_stays_bounded():
    import tracemalloc
    h = rng.standard_normal((8, 64))
    W = 0.1 * rng.standard_normal((64, 64))
    b = np.zeros(64)
    n = 400
    taped = tc.grad(rnn, wrt=(1, 2))
    ckpt = tc.grad_with_checkpointing(rnn, wrt=(1, 2), snapshots=5)
    ckpt(h, W, b, 2), taped(h, W, b, 2)  # compile outside the measurement

    def peak(df):
        tracemalloc.start()
        df(h, W, b, n)
        p = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return p

    state = h.nbytes
    # 5 snapshots, one step's tape, and the gradient buffers (bW and its update)
    assert peak(ckpt) < 10 * state + 6 * W.nbytes
    assert peak(taped) > n * state  # the tape holds every step


def rnn_in_branch(h, W, b, n):
    for t in range(n):
        if t >= 0:  # h is last assigned in a branch: the adjoint step re-records
            h = np.tanh(h @ W + b)
    return np.sum(h)


def working_bytes(fn, *args):
    """The working memory a budgeted gradient of `fn` measures for its loop."""
    with tc.profile() as prof:
        tc.grad_with_checkpointing(fn, wrt=(1, 2), memory_budget="1GB")(*args)
    return prof.working_bytes


def test_memory_budget_below_all_states_uses_taped_segments():
    h = rng.standard_normal((64, 256))
    W = rng.standard_normal((256, 256)) / 16
    b = np.zeros(256)
    n = 100
    # room for 80 states beside the measured working memory, not for 100
    budget = 80 * h.nbytes + working_bytes(rnn_in_branch, h, W, b, n)
    df = tc.grad_with_checkpointing(rnn_in_branch, wrt=(1, 2), memory_budget=budget)
    assert "def loop" in df.source and "_segment(steps, h, bstate, W, b, W_T):" in df.source
    assert "next_state=True" not in df.source  # the adjoint step re-records
    with tc.profile() as prof:
        got = df(h, W, b, n)
    taped = tc.grad(rnn_in_branch, wrt=(1, 2))(h, W, b, n)
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12)
    # every step runs once in the sweep and once on a segment's tape: 2n in all
    assert prof.forward_steps == n and prof.recorded_steps == n
    assert prof.peak_snapshots < n // 2


def test_memory_budget_prefers_revolve_when_the_adjoint_step_reads_the_next_state():
    h = rng.standard_normal((4, 8))
    W = rng.standard_normal((8, 8)) / 4
    b = np.zeros(8)
    n = 100
    budget = 40 * h.nbytes + working_bytes(rnn, h, W, b, n)
    df = tc.grad_with_checkpointing(rnn, wrt=(1, 2), memory_budget=budget)
    assert "next_state=True" in df.source
    with tc.profile() as prof:
        got = df(h, W, b, n)
    taped = tc.grad(rnn, wrt=(1, 2))(h, W, b, n)
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12)
    s = prof.peak_snapshots
    r, A, T = revolve_cost(n, s)
    # Revolve in the snapshots the budget buys runs A + 1 <= 2n plain steps (the
    # segments' count), and each adjoint step starts from both sides of its step
    assert prof.forward_steps == A + 1 < 2 * n
    assert prof.recorded_steps == n


def test_nested_loops_checkpoint_the_inner_loop_inside_the_adjoint_step():
    df = tc.grad(nested, wrt=(0, 1), checkpoint=True, snapshots=2, nested=True)
    src = df.source
    outer_adjoint = [part for part in src.split("\ndef ") if "rt.CheckpointedLoop(range(m)" in part]
    assert len(outer_adjoint) == 1 and outer_adjoint[0].startswith("loop")
    inner = outer_adjoint[0]
    assert "_adjoint(t, x, bstate, m, w):" in inner and ".reverse(" in inner
    assert "private_adjoint" not in inner  # already private inside an adjoint step


def test_reads_of_an_invariant_array_accumulate_in_place():
    def seq(xs, w):
        h = np.zeros(4)
        for x in xs:
            h = np.tanh(h * w + x)
        return np.sum(h)

    for df in (tc.grad(seq, wrt=(0, 1)), tc.grad_with_checkpointing(seq, wrt=(0, 1), snapshots=3)):
        assert "rt.accumulate_at(bxs, xs, i, bx)" in df.source
        xs = rng.random((9, 4))
        got = df(xs, 0.5)
        expected = numeric_grad(seq, (xs, 0.5), (0, 1))
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 2, 9, 100])
def test_uniform_schedule_sizes_itself_without_snapshots(n):
    h, W, b = rng.standard_normal((2, 3)), 0.4 * rng.standard_normal((3, 3)), rng.random(3)
    got = tc.grad(rnn, wrt=(1, 2), checkpoint=True, schedule="uniform")(h, W, b, n)
    for g, t in zip(got, tc.grad(rnn, wrt=(1, 2))(h, W, b, n)):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-15)


def rnn_reading_w_three_ways(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W) + 0.1 * W[0] + 0.01 * np.sum(W * W)
    return np.sum(h * h)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_gathered_matmul_adjoints_mix_with_other_contributions(checkpoint):
    """``bW`` is gathered a few steps at a time (rt.ProductSum) while a row read and
    an elementwise use of W add into it too; the result is settled to an array."""
    r = np.random.default_rng(11)
    h, W, n = r.normal(size=(2, 12)), 0.3 * r.normal(size=(12, 12)), 9
    df = tc.grad(rnn_reading_w_three_ways, wrt=(0, 1), checkpoint=checkpoint, snapshots=3)
    assert "rt.accumulate_matmul_adjoint_x2(bW" in df.source
    got = df(h, W, n)
    assert all(type(g) is np.ndarray for g in got)
    check_grad(rnn_reading_w_three_ways, (h, W, n), (0, 1), df=df)
    if checkpoint:
        taped = tc.grad(rnn_reading_w_three_ways, wrt=(0, 1))(h, W, n)
        for g, t in zip(got, taped):
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-13)


def index_seen_by_two_loops(x, B, m, n):
    c = B
    for t in range(m):  # nothing to differentiate: an ordinary loop
        for t1 in range(2):
            if t1 % 2 == 0:
                c = c * np.cos(c)
    a = x
    for t in range(n):  # checkpointed; carries t1, bound only if the first loop ran
        for t1 in range(2):
            a = a * np.cos(a)
    return np.sum(a) + np.sum(c)


@pytest.mark.parametrize("m", [0, 2])
def test_carried_state_bound_on_some_paths_only(m):
    # found by `pytest tests/test_fuzz.py --fuzz-long`: the state of the second loop
    # holds t1, unbound when the first loop did not run (UnboundLocalError)
    x, b = np.linspace(0.1, 1.0, 4), np.linspace(0.2, 0.5, 4)
    df = tc.grad_with_checkpointing(index_seen_by_two_loops, wrt=0, snapshots=2)
    check_grad(index_seen_by_two_loops, (x, b, m, 3), df=df)


def _damped(h):
    return np.tanh(0.9 * h + 0.1)


def marker_loop_in_taped_loop(h, n, m):
    for k in range(m):
        h, _ = tc.checkpointed_loop(_damped, h, n, 2)
        h = h * 1.1
    return np.sum(h ** 2)


def marker_loop_in_taped_while(h, n):
    k = 0
    while k < 3:
        h, _ = tc.checkpointed_loop(_damped, h, n)
        k += 1
    return np.sum(h ** 2)


@pytest.mark.parametrize("fn, args", [(marker_loop_in_taped_loop, (5, 3)),
                                      (marker_loop_in_taped_while, (4,))],
                         ids=["for", "while"])
def test_checkpointed_loop_marker_inside_a_taped_loop(fn, args):
    """``tc.checkpointed_loop`` in a loop the gradient tapes makes one driver per
    trip; each trip's reverse needs its own (before, every trip reversed the last
    one's: a CheckpointError from the second)."""
    h0 = np.array([0.3, -0.2, 0.5])
    taped = check_grad(fn, (h0, *args))
    checkpointed = check_grad(fn, (h0, *args), df=tc.grad(fn, checkpoint=True, snapshots=2))
    np.testing.assert_allclose(taped, checkpointed, rtol=1e-12)
