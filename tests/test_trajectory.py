"""Subscript writes keep only what they overwrite (compiler/analyze/fresh_arrays.py,
transform/reverse.py, package/saves.py), and checkpointed trajectories keep
incremental snapshots: gradients against central finite differences, taped and
checkpointed, and the bytes the tape holds."""

import tracemalloc

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, numeric_grad
from tangent_ckpt.errors import TangentCkptError


def trajectory(x, n):
    S = np.zeros((n, x.shape[0]))
    S[0] = x
    for t in range(1, n):
        S[t] = np.sin(S[t - 1]) * 1.01
    return np.sum(S ** 2)


def columns(x, n):
    S = np.zeros((x.shape[0], n))
    S[:, 0] = x
    for t in range(1, n):
        S[:, t] = np.tanh(S[:, t - 1] + 0.3)
    return np.sum(np.cos(S))


def masked(x, n):
    y = np.sin(x)
    for t in range(n):
        mask = y > 0.2
        y[mask] = y[mask] * 0.9 + 0.05 * t
    return np.sum(y ** 3)


def fancy(x, n):
    y = np.cos(x)
    for t in range(n):
        y[[2, 0]] = np.sin(y[[0, 1]]) + x[1]
    return np.sum(y ** 2)


def augmented(x, n):
    y = np.sin(x)
    for t in range(n):
        y[t % 3] += y[(t + 1) % 3] * x[0]
        y[1:] *= 1.1
    return np.sum(y ** 2)


def rewritten_rows(x, n):
    S = np.zeros((2, x.shape[0]))
    S[0] = x
    for t in range(n):
        S[(t + 1) % 2] = np.sin(S[t % 2]) + 0.1 * S[(t + 1) % 2]
    return np.sum(S ** 2)


def straight_line(x):
    y = np.sin(x)
    y[1] += x[0] ** 2
    y[[0, 2]] = y[[2, 0]] * 3.0
    return np.sum(y ** 2)


X = np.array([0.3, -0.7, 1.1, 0.5])
WRITES = [trajectory, columns, masked, fancy, augmented, rewritten_rows]


@pytest.mark.parametrize("f", WRITES, ids=lambda f: f.__name__)
def test_subscript_writes_in_a_taped_loop_match_finite_differences(f):
    check_grad(f, (X, 6))


@pytest.mark.parametrize("f", WRITES, ids=lambda f: f.__name__)
def test_subscript_writes_in_a_checkpointed_loop_match_finite_differences(f):
    df = tc.grad(f, checkpoint=True, snapshots=2)
    check_grad(f, (X, 7), df=df)


def test_straight_line_writes_match_finite_differences():
    check_grad(straight_line, (X,))


def test_writes_go_in_place_and_keep_the_overwritten_row():
    source = tc.grad(trajectory).source
    assert "S = S.copy()" not in source
    # the overwritten row joins the step's one tape entry, and comes back from it
    assert "S_old_2 = rt.overwritten(S[t])" in source
    assert "S[t] = S_old_2" in source
    assert source.count("tape.extend(") == source.count("del tape[") == 1


def test_a_write_naming_an_element_twice_is_refused():
    def f(x):
        y = np.sin(x)
        y[[0, 0]] += x[1]
        return np.sum(y ** 2)
    with pytest.raises(TangentCkptError, match="more than once"):
        tc.grad(f)(X)


def test_an_argument_written_into_is_copied_not_changed():
    def f(x):
        x[1] = x[0] * 2.0
        return np.sum(x ** 2)
    check_grad(f, (X.copy(),))


def _peak(fn, *args):
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_taped_trajectory_keeps_rows_not_copies_of_the_array():
    n, m = 200, 100
    x = np.linspace(-1.0, 1.0, m)
    s_bytes = n * m * 8
    peak = _peak(tc.grad(trajectory), x, n)
    # a copy of S per step would be n/2 times S; the rows overwritten are one S
    assert peak < 8 * s_bytes


def test_private_adjoint_copies_an_adjoint_another_name_holds():
    from tangent_ckpt import runtime as rt
    S = np.ones(3)

    def shared(S):
        bS = S * 2.0
        other = bS
        bS = rt.private_adjoint(bS, S)
        bS += 1.0
        return other

    def alone(S):
        bS = S * 2.0
        return rt.private_adjoint(bS, S)

    np.testing.assert_array_equal(shared(S), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(alone(S), [2.0, 2.0, 2.0])


def test_overwritten_keeps_a_zero_only_for_positive_zeros():
    from tangent_ckpt import runtime as rt
    assert rt.overwritten(np.zeros(4)) == 0.0 and np.ndim(rt.overwritten(np.zeros(4))) == 0
    kept = rt.overwritten(np.array([0.0, -0.0]))
    assert isinstance(kept, np.ndarray) and np.signbit(kept[1])
    row = np.array([1.0, 2.0])
    kept = rt.overwritten(row)
    row[0] = 5.0
    assert kept[0] == 1.0


def shifted_rows(x, n):
    S = np.ones((n + 2, x.shape[0]))
    S[0] = x
    for t in range(n):
        S[t + 1, :] = np.sin(S[t]) * S[t + 2] + 0.1
    return np.sum(S ** 2)


@pytest.mark.parametrize("f", [trajectory, columns, shifted_rows], ids=lambda f: f.__name__)
@pytest.mark.parametrize("options", [dict(snapshots=1), dict(snapshots=3),
                                     dict(snapshots=2, verify=True),
                                     dict(snapshots=3, schedule="uniform"),
                                     dict(snapshots=2, min_steps=4)],
                         ids=["s1", "s3", "verify", "uniform", "min_steps"])
def test_steps_writing_rows_in_place_match_finite_differences(f, options):
    df = tc.grad(f, checkpoint=True, **options)
    assert "in_place=[S]" in df.source and "writes.keep(S, " in df.source
    for n in (1, 2, 9):
        check_grad(f, (X, n), df=df)


def test_a_row_written_twice_keeps_whole_snapshots():
    source = tc.grad(rewritten_rows, checkpoint=True, snapshots=2).source
    assert "in_place" not in source and "S = S.copy()" in source


def test_checkpointed_trajectory_snapshots_hold_the_rows_written_not_copies():
    n, m = 120, 50
    x = np.linspace(-1.0, 1.0, m)
    df = tc.grad(trajectory, checkpoint=True, snapshots=8)
    with tc.profile() as prof:
        df(x, n)
    snapshot_bytes = prof.as_dict()["peak_snapshot_bytes"]
    assert 0 < snapshot_bytes and snapshot_bytes < n * m * 8 / 4  # eight whole copies would be 8 * n * m * 8
    peak = _peak(df, x, n)
    assert peak < 8 * n * m * 8


def test_the_journal_undoes_writes_latest_first():
    from tangent_ckpt.runtime.stores.snapshots import WriteJournal
    S = np.zeros((3, 2))
    journal = WriteJournal([S])
    journal.keep(S, 0)
    S[0] = 1.0
    mark = journal.mark()
    journal.keep(S, np.s_[:, 1])
    S[:, 1] = 2.0
    journal.keep(S, 0)
    S[0] = 3.0
    journal.undo_to(mark)
    np.testing.assert_array_equal(S, [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    journal.undo_to(0)
    assert not S.any() and journal.nbytes == 0


def carried_with_draws(x, W, n):
    S = np.zeros((n, x.shape[0]))
    h = np.sin(x)
    c = 0.0
    for t in range(n):
        h = np.tanh(W @ h + 0.1 * np.random.randn(x.shape[0]))
        S[t] = h * S[t - 1] + h      # step 0 reads the last row, written by the last step
        c = c + np.sum(S[t] ** 2)
    return np.sum(S ** 3) + c


@pytest.mark.parametrize("snapshots", [1, 2, 4])
def test_a_trajectory_carried_beside_other_state_and_random_draws_matches_taped(snapshots):
    W = np.random.default_rng(1).standard_normal((4, 4)) * 0.5
    df = tc.grad(carried_with_draws, wrt=(0, 1), checkpoint=True, snapshots=snapshots)
    assert "in_place=[S]" in df.source
    np.random.seed(3)
    got = df(X, W, 7)
    np.random.seed(3)
    taped = tc.grad(carried_with_draws, wrt=(0, 1))(X, W, 7)

    def seeded(x, W, n):
        np.random.seed(3)
        return carried_with_draws(x, W, n)
    numeric = numeric_grad(seeded, (X, W, 7), wrt=(0, 1))
    for g, t, d in zip(got, taped, numeric):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g, d, rtol=1e-6, atol=1e-8)
