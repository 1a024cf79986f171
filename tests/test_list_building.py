"""Lists built in loops (runtime/rows.py, lower/containers.py): ``hs.append(h)``
then ``np.stack(hs)`` / ``np.array(hs)`` / ``sum(hs)`` / ``hs[-1]``; ``hs = [h0] * n``
written row by row; list ``+`` and ``extend`` of lists of known length.  A list
whose length depends on the trip count is held as the array of its rows, carried
by the loop (and held in a checkpoint's snapshot) like any array."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_grad_and_autograd
from source_lines import line_of
from tangent_ckpt.errors import TransformError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examples.sir_model import sir_peak  # noqa: E402  (the textbook SIR model)

HERE = os.path.basename(__file__)
rng = np.random.default_rng(7)
CHECKPOINTED = [{}, {"checkpoint": True, "snapshots": 2}]


def vec(*shape):
    return rng.standard_normal(shape)


check = check_grad_and_autograd


def rnn_appending(x, W, n):
    hs = []
    h = x
    for t in range(n):
        h = np.tanh(W @ h)
        hs.append(h)
    return (np.sum(np.stack(hs) ** 2) + np.sum(hs[-1]) + np.sum(sum(hs))
            + np.sum(np.array(hs)) * len(hs))


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_append_then_stack_array_sum_and_last(options):
    df = check(rnn_appending, (vec(3), vec(3, 3) * 0.6, 7), (0, 1), **options)
    assert "hs = rt.append_row(hs, h)" in df.source.replace("hs_append_row", "hs") or \
        "rt.append_row(hs, h)" in df.source


def feeding_back_the_last_item_once_there_is_one(x, W, n):
    hist = []
    y = x
    for t in range(n):
        y = np.tanh(W @ y) + 0.1 * (hist[-1] if hist else 0.0)
        if not hist or t % 2:
            y = y * 1.1
        hist.append(y * 1.0)
    return np.sum(y) + np.sum(hist[0])


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_the_truth_of_a_list_built_at_run_time_is_whether_it_has_items(options):
    """``if hist`` on a list the loop appends to: its rows are an array, whose truth
    NumPy refuses (a bare ValueError when the gradient ran, before session 19);
    tested as ``len(hist) > 0``."""
    check(feeding_back_the_last_item_once_there_is_one, (vec(3), vec(3, 3) * 0.6, 5),
          (0, 1), **options)


def appending_from_a_start(x, W, n):
    hs = [x]
    for t in range(n):
        hs.append(np.tanh(W @ hs[-1]))
    return np.sum(np.stack(hs)[1:] * np.stack(hs)[:-1])


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_append_to_a_list_with_a_first_item(options):
    check(appending_from_a_start, (vec(3), vec(3, 3) * 0.6, 6), (0, 1), **options)


def repeated_then_written(x, W, n):
    hs = [x] * (n + 1)
    for t in range(n):
        hs[t + 1] = np.tanh(W @ hs[t])
    return np.sum(hs[-1]) + np.sum(np.stack(hs))


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_repeated_list_written_row_by_row(options):
    check(repeated_then_written, (vec(3), vec(3, 3) * 0.6, 6), (0, 1), **options)


def appending_in_a_branch(x, n):
    kept = []
    for t in range(n):
        y = np.sin(x * t)
        if t % 2 == 0:
            kept.append(y)
    return np.sum(np.stack(kept) ** 2)


def test_append_in_a_branch():
    check(appending_in_a_branch, (vec(3), 5), (0,))


def list_made_in_each_step(x, n):
    total = 0.0
    for t in range(n):
        parts = []
        for k in range(3):
            parts.append(x * (t + k))
        total = total + np.sum(np.stack(parts) ** 2)
    return total


def test_list_made_inside_a_loop_body():
    check(list_made_in_each_step, (vec(2), 3), (0,))


def joined_and_extended(a, b):
    # append/extend write into the list, never into its items: a and b are read
    # after them (the aliasing fence once refused this)
    xs = [a * 2.0, b * 3.0]
    xs.extend([np.sin(a), np.cos(b)])
    xs.append(np.tanh(a * b))
    ys = xs + [xs[0] * 0.5]
    return np.sum(np.stack(ys)) + len(ys) + np.sum(a * b)


def test_list_plus_and_extend():
    check(joined_and_extended, (vec(3), vec(3)), (0, 1))


def while_appending(x):
    hs = []
    h = x
    while np.sum(h ** 2) > 0.1:
        h = h * 0.5
        hs.append(h)
    return np.sum(sum(hs))


def test_append_in_a_while_loop():
    check(while_appending, (vec(3) + 2.0,), (0,))


def mutated_after_append(x, n):
    hs = []
    h = x * 1.0
    for t in range(n):
        hs.append(h)
        h[0] = t
    return np.sum(np.stack(hs))


def row_built_then_appended(x, n):
    hs = []
    for t in range(n):
        h = np.zeros(3)
        h[0] = x[0] * t
        h[1:] = np.sin(x[1:])
        hs.append(h)
    return np.sum(np.stack(hs) ** 2)


def row_written_then_stored(x, n):
    hs = [0.0 * x] * (n + 1)
    for t in range(n):
        h = np.sin(x) * t
        h[0] = 3.0
        hs[t + 1] = h
    return np.sum(np.stack(hs) ** 2)


def pair_written_then_appended(x, n):
    rows = []
    for t in range(n):
        v = np.sin(x) * t
        v[0] = 1.0
        rows.append([v, v * 2.0])
    return np.sum(np.asarray(rows) ** 2)


def written_then_repeated(x, n):
    h = np.sin(x)
    h[1] = 2.0
    hs = [h] * n
    return np.sum(np.stack(hs) ** 2)


@pytest.mark.parametrize("fn", [row_built_then_appended, row_written_then_stored,
                                pair_written_then_appended, written_then_repeated])
@pytest.mark.parametrize("options", CHECKPOINTED)
def test_an_array_written_in_place_before_it_is_put_in_the_list_is_that_row(fn, options):
    # was refused ("'h' is put in a list and also written in place") wherever the
    # function wrote into the name, even before the append; a write after it is the
    # aliasing fence's to refuse (test_refusals_name_the_line_and_the_construct)
    x = vec(3)
    value, _ = tc.value_and_grad(fn, **options)(x, 4)
    np.testing.assert_allclose(value, fn(x.copy(), 4), rtol=1e-12)
    check(fn, (x, 4), (0,), **options)


def shared_rows_written(x, n):
    hs = [np.zeros(3)] * n
    for t in range(n):
        hs[t][0] = x[t]
    return np.sum(np.stack(hs))


def runtime_list_doubled(x, n):
    hs = []
    for t in range(n):
        hs.append(x)
    hs = hs * 2
    return np.sum(np.stack(hs))


def dicts_appended(x):
    """The hunt's CTRNN forward pass (akm7289/CTRNN, RNN_Forward_pass.py): a list of
    dicts built at run time by append (once refused as a list of "lists")."""
    layers = []
    s = x
    for t in range(3):
        prev = s
        s = np.tanh(s)
        layers.append({'s': s, 'prev_s': prev})
    return np.sum(s)


@pytest.mark.parametrize("fn, marker, construct", [
    # the fence sees the list hold h after the append (it once left that to the
    # lowering, which named the append's line)
    (mutated_after_append, "h[0] = t", "may also change 'hs'"),
    (dicts_appended, "layers.append(", "holds no dicts"),
    (shared_rows_written, "hs[t][0] = x[t]", "hs"),
    (runtime_list_doubled, "hs = hs * 2", "hs * 2"),
])
def test_refusals_name_the_line_and_the_construct(fn, marker, construct):
    with pytest.raises(TransformError) as info:
        tc.grad(fn).compile()
    assert f"{HERE}:{line_of(fn, marker)}:" in str(info.value), str(info.value)
    assert construct in str(info.value), str(info.value)


def sinkhorn_errors_by_concatenation(a, K, n):
    """The outside hunt's q12 (numerical tours' Sinkhorn): error lists grown by
    ``err = err + [norm]`` in the loop, as ``.append`` grows them (refused as "changes
    its length inside a loop")."""
    v = np.ones_like(a)
    err_p, err_q = [], [np.sum(a)]
    for t in range(n):
        u = a / (K @ v)
        err_q = err_q + [np.sum(np.abs(v * (K.T @ u) - a))]
        v = a / (K.T @ u)
        err_p = err_p + [np.sum(u * v), np.sum(u) * 0.5]
    return np.sum(u * (K @ v)) + err_q[-1] + np.sum(np.stack(err_p) ** 2) + len(err_p)


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_a_list_grown_by_concatenation_in_a_loop_is_built_at_run_time(options):
    K = np.exp(-np.abs(vec(4, 4)))
    check(sinkhorn_errors_by_concatenation, (np.abs(vec(4)) + 0.5, K, 4), (0, 1), **options)


def test_a_list_grown_by_concatenation_checkpointed_equals_taped():
    args = (np.abs(vec(4)) + 0.5, np.exp(-np.abs(vec(4, 4))), 5)
    taped = tc.grad(sinkhorn_errors_by_concatenation, wrt=(0, 1))(*args)
    ckpt = tc.grad(sinkhorn_errors_by_concatenation, wrt=(0, 1), checkpoint=True,
                   snapshots=2)(*args)
    for t, c in zip(taped, ckpt):
        np.testing.assert_allclose(c, t, rtol=1e-12, atol=1e-14)


def concatenated_in_a_while_loop_keeping_the_old_list(x):
    errs, old = [], []
    k = 0
    while k < 3:
        x = np.sin(x)
        old = errs
        errs = errs + [x * 2.0]  # a new list: old keeps the items before
        k = k + 1
    return np.sum(errs[-1] * old[-1]) + np.sum(np.stack(old))


@pytest.mark.xfail(strict=True, raises=ValueError, reason=(
    "merge of dict-lists with taped-shapes: the list before its first append is "
    "rt.empty_rows(), shape (0,), its adjoint from append_row_adjoint_rows (0, 3); "
    "the zero the taped loop puts back for `old` (taped-shapes) meets it in "
    "`berrs + bold` and fails loudly (a crash, never a silent wrong gradient)"))
def test_a_concatenation_leaves_the_list_before_as_it_was():
    check(concatenated_in_a_while_loop_keeping_the_old_list, (vec(3),), (0,))


def prepended_in_a_loop(x, n):
    errs = []
    for t in range(n):
        x = x * 0.5
        errs = [np.sum(x)] + errs
    return errs[-1]


def lists_concatenated_in_a_loop(x, n):
    rows = []
    for t in range(n):
        x = x * 0.5
        rows = rows + [[np.sum(x), x[0]]]
    return np.sum(np.asarray(rows) ** 2)


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_lists_concatenated_to_a_list_in_a_loop_are_its_rows(options):
    # rows.append([np.sum(x), x[0]]) (desugar/concatenated_lists.py): a list of lists
    # of one length, what np.asarray makes of it (was refused)
    check(lists_concatenated_in_a_loop, (vec(3), 4), (0,), **options)


def grown_on_one_path(x, c, n):
    hs = [x]
    if c > 0:
        for t in range(n):
            hs.append(np.sin(hs[-1]))
    return np.sum(np.stack(hs))


@pytest.mark.parametrize("fn, marker, construct", [
    # built at run time on one path only: the other path's reads met a variable it
    # never bound (UnboundLocalError when the gradient ran)
    (grown_on_one_path, "if c > 0", "'hs' is a list, tuple or dict on one path"),
    (prepended_in_a_loop, "errs = [np.sum(x)] + errs", "errs"),
])
def test_other_concatenations_in_a_loop_stay_refused(fn, marker, construct):
    with pytest.raises(TransformError) as info:
        tc.grad(fn).compile()
    assert f"{HERE}:{line_of(fn, marker)}:" in str(info.value), str(info.value)
    assert construct in str(info.value), str(info.value)


def aliased_list(a, b):
    xs = [a * 2.0]
    ys = xs
    xs.append(b)
    return np.sum(np.stack(ys))


def test_a_second_name_of_a_list_that_grows_is_refused():
    # ys sees the append in Python; the aliasing fence refuses it (docs/inplace.md)
    with pytest.raises(TransformError) as info:
        tc.grad(aliased_list).compile()
    assert f"{HERE}:{line_of(aliased_list, 'xs.append(b)')}:" in str(info.value)


# --- compartment models: lists of states grown a day at a time ----------------------
def seir_vector(beta, sigma, gamma, C, e0, days):
    # SEIR with one compartment per age group: the rows are arrays
    S, E = [np.ones(e0.shape[0]) - e0], [e0]
    I, R = [np.zeros(e0.shape[0])], [np.zeros(e0.shape[0])]
    for d in range(days):
        s, e, i, r = S[-1], E[-1], I[-1], R[-1]
        force = beta * s * (C @ i + 0.1 * e)
        S.append(s - force)
        E.append(e + force - sigma * e)
        I.append(i + sigma * e - gamma * i)
        R.append(r + gamma * i)
    return np.sum(np.max(np.array(I), axis=0)) + np.sum(R[-1] ** 2)


COMPARTMENT_OPTIONS = [{}, {"checkpoint": True}, {"checkpoint": True, "snapshots": 3}]


@pytest.mark.parametrize("options", COMPARTMENT_OPTIONS)
def test_sir_model_appending_values_computed_from_the_last_items(options):
    """Values computed from list items are new objects; an append grows the list
    and never writes into them (the fence once refused line `S.append(...)`)."""
    df = check(sir_peak, (0.3, 0.1, 0.99, 0.01, 30), (0, 1, 2, 3), **options)
    if options:
        assert "CheckpointedLoop" in df.source


@pytest.mark.parametrize("options", COMPARTMENT_OPTIONS)
def test_seir_model_with_array_compartments(options):
    C = np.array([[0.8, 0.3, 0.1], [0.3, 0.9, 0.2], [0.1, 0.2, 0.7]])
    check(seir_vector, (0.4, 0.2, 0.1, C, np.array([0.01, 0.02, 0.0]), 25),
          (0, 1, 2, 3, 4), **options)


def last_row_written_while_read(x, n):
    S = [x * 1.0]
    for t in range(n):
        v = S[-1]
        S[-1][0] = 2.0 * v[1]
        S.append(v * 2.0)
    return np.sum(np.array(S)) + np.sum(v)


def test_a_row_written_through_the_list_while_its_name_is_read_is_refused():
    """``v`` and ``S[-1]`` are the same array when the rows are arrays: a write
    through one changes the other, so the fence still refuses it."""
    with pytest.raises(TransformError) as info:
        tc.grad(last_row_written_while_read).compile()
    message = str(info.value)
    assert f"{HERE}:{line_of(last_row_written_while_read, 'S[-1][0] =')}:" in message
    assert "'S'" in message and "'v'" in message, message


def last_item_replaced(x, n):
    S = [x * 1.0]
    for t in range(n):
        S.append(np.sin(S[-1]))
    for t in range(n):
        v = S[t]
        S[t] = v * 3.0
        S[t + 1] = S[t + 1] + v
    return np.sum(np.array(S) ** 2) + np.sum(v * v)


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_an_item_replaced_in_a_built_list_keeps_the_old_item_under_its_name(options):
    """``S[t] = ...`` puts a new object in the list; ``v`` still names the old one."""
    check(last_item_replaced, (vec(3), 4), (0,), **options)


# --- real programs the probe found refused (notes/probe_findings.md F1, F2, F3) --------
def history_of_a_rebound_state(beta, y0, days):
    y = y0
    history = [y0]
    for d in range(days):
        y = y + 0.1 * beta * y        # rebound, never written in place
        history.append(y)
    return np.sum(np.stack(history) ** 2)


def _hh_step(v, m, g):
    return v - 0.1 * g * m, m + 0.1 * v


def items_from_a_helpers_tuple(g, steps):
    vs, ms = [0.5], [0.2]
    for i in range(steps):
        a, b = _hh_step(vs[-1], ms[-1], g)
        vs.append(a)
        ms.append(b)
    return sum(vs) + ms[-1] ** 2


@pytest.mark.parametrize("options", COMPARTMENT_OPTIONS)
def test_appending_a_rebound_state_or_a_helpers_results(options):
    """An append only adds a reference: the appended value and what it was made
    from stay readable (the fence refused both, naming 'y' and 'b')."""
    check(history_of_a_rebound_state, (0.3, vec(2), 5), (0, 1), **options)
    check(items_from_a_helpers_tuple, (0.3, 6), (0,), **options)


def item_of_a_dict_written_in_place(x, n):
    xs = {}
    for t in range(n):
        xs[t] = np.zeros((3, 1))
        xs[t][t % 3] = 1
    return np.sum(x * xs[n - 1])


def test_an_array_inside_a_run_time_dict_written_in_place_is_differentiated():
    """min-char-rnn's one-hot ``xs[t][inputs[t]] = 1`` (a dict of run-time keys): a
    write into a copy of ``xs[t]`` stored back (tests/test_containers.py pins the
    refusals of an array under two keys or two names)."""
    check(item_of_a_dict_written_in_place, (vec(3, 1), 4))


def item_of_a_constant_key_dict_written_in_place(x):
    xs = {'a': np.zeros((3, 1)), 'b': np.zeros((3, 1))}
    xs['a'][1] = 1
    return np.sum(x * xs['a'])


def test_an_array_inside_a_dict_of_constant_keys_written_in_place_says_how_to_build_it():
    """``xs['a'][1] = 1``: ``xs['a', 1]`` (the advice for arrays) would be a tuple key."""
    with pytest.raises(TransformError) as info:
        tc.grad(item_of_a_constant_key_dict_written_in_place).compile()
    message = str(info.value)
    line = line_of(item_of_a_constant_key_dict_written_in_place, "xs['a'][1] = 1")
    assert f"{HERE}:{line}:" in message
    assert "x[1] = ...; xs['a'] = x" in message and "x['a', 1]" not in message, message


# --- a list of lists built in a loop (p22, Hodgkin-Huxley's all_vars) ----------------
def euler_trajectory(v0, m0, n):
    """Each step appends [v, m, t]: a list of lists, read as NumPy's array of it."""
    v, m = v0, m0
    all_vars = [[v, m, 0]]
    for t in range(n):
        dv = -0.5 * v + np.sin(m)
        dm = 0.3 * v * m
        v = v + 0.1 * dv
        m = m + 0.1 * dm
        all_vars.append([v, m, t + 1])
    variables = np.asarray(all_vars)
    return variables[-1, 0] + np.sum(variables[:, 1] ** 2) + np.sum(np.array(all_vars)[:, 2])


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_a_list_of_lists_appended_in_a_loop_is_the_array_numpy_makes(options):
    df = check(euler_trajectory, (0.8, -0.4, 6), (0, 1), **options)
    assert "np.stack((v, m, " in df.source  # one row per appended list
    if options:
        assert "CheckpointedLoop(" in df.source
        taped = tc.grad(euler_trajectory, wrt=(0, 1))(0.8, -0.4, 6)
        np.testing.assert_allclose(df(0.8, -0.4, 6), taped, rtol=1e-12, atol=1e-14)


def rows_of_arrays(x, n):
    rows = [[x, 2.0 * x]]
    y = x
    for t in range(n):
        y = np.sin(y) * 1.2
        rows.append([y, y * y])
    return np.sum(np.asarray(rows)[:, 1] ** 2) + np.sum(np.stack(rows)[-1, 0]) * len(rows)


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_a_list_of_lists_of_arrays_built_in_a_loop(options):
    check(rows_of_arrays, (vec(3), 4), (0,), **options)


def last_item_unpacked(x, n):
    rows = []
    for t in range(n):
        x = np.tanh(1.3 * x)
        rows.append([x, x * x])
    v, w = rows[-1]
    return v * w


def looped_over(x, n):
    rows = []
    for t in range(n):
        rows.append([x * t, x])
    total = 0.0
    for a, b in rows:
        total = total + a * b
    return total


def item_of_an_item(x, n):
    rows = []
    for t in range(n):
        rows.append([x * t, x])
    return rows[1][0]


def summed_rows(x, n):
    rows = []
    for t in range(n):
        rows.append([x, x])
    return np.sum(sum(rows))


def copied_rows(x, n):
    rows = []
    for t in range(n):
        rows.append([x, x])
    return np.sum(np.asarray(list(rows)))


def lists_of_two_lengths(x, n):
    rows = [[x, x]]
    for t in range(n):
        rows.append([x, x, x])
    return np.sum(np.asarray(rows))


def lists_and_numbers(x, n):
    rows = []
    for t in range(n):
        rows.append([x, x])
        rows.append(x)
    return np.sum(np.asarray(rows))


def lists_of_lists_appended(x, n):
    rows = []
    for t in range(n):
        rows.append([x, [x, x]])
    return np.sum(np.asarray(rows))


def list_of_lists_extended(x, n):
    rows = []
    for t in range(n):
        rows.append([x, x])
    rows.extend([[x, x]])
    return np.sum(np.asarray(rows))


@pytest.mark.parametrize("fn, marker, construct", [
    (last_item_unpacked, "rows[-1]", "an item of a list of lists built at run time"),
    (looped_over, "for a, b in rows", "a loop over the items of a list of lists"),
    (item_of_an_item, "rows[1][0]", "an item of a list of lists built at run time"),
    (summed_rows, "sum(rows)", "sum() of a list of lists built at run time"),
    (copied_rows, "list(rows)", "list() of a list of lists built at run time"),
    (lists_of_two_lengths, "rows.append([x, x, x])", "holds lists of length 2 only"),
    (lists_and_numbers, "rows.append(x)", "holds lists of length 2 only"),
    (lists_of_lists_appended, "rows.append([x, [x, x]])", "holds lists of length 2 only"),
    (list_of_lists_extended, "rows.extend", "on a list of lists built at run time"),
])
def test_a_list_of_lists_read_other_than_as_python_reads_it_is_refused(fn, marker, construct):
    """The list is held as the array NumPy makes of it: read whole by NumPy, or len.
    An item is a list in Python, no row (and a list of (W, b) pairs read item by item
    would fail where Python's does not); sum(rows) raises in Python, list(rows) would
    lose what the items are; ragged or nested items are no rows of one array."""
    with pytest.raises(TransformError) as info:
        tc.grad(fn).compile()
    assert f"{HERE}:{line_of(fn, marker)}:" in str(info.value), str(info.value)
    assert construct in str(info.value), str(info.value)


# --- item writes into a list made of other values: the list holds each item itself --
def losses_from_int_zeros(x, n):
    losses = [0] * n
    for t in range(n):
        losses[t] = x * (t + 0.5)
    return sum(losses)


def trajectory_from_int_zeros(a, n):
    xs = [0] * (n + 1)
    xs[0] = 1.0
    for t in range(n):
        xs[t + 1] = xs[t] * a
    return xs[-1]


def filled_comprehension_of_ints(x, n):
    out = [0 for _ in range(n)]
    for t in range(n):
        out[t] = np.sin(x * t)
    return sum(out)


def appended_ints_then_floats(x, n):
    hs = []
    for t in range(n):
        hs.append(0)
    for t in range(n):
        hs[t] = x * t
    return sum(hs)


def truth_values_then_floats(x, n):
    flags = [False] * n
    for t in range(n):
        flags[t] = np.tanh(x + t)
    return sum(flags)


def int_arrays_then_floats(x, n):
    hs = [np.zeros(2, dtype=int)] * (n + 1)
    hs[0] = x
    for t in range(n):
        hs[t + 1] = np.tanh(hs[t] * 1.5)
    return np.sum(np.stack(hs))


def float32_arrays_then_float64(x, n):
    hs = [np.zeros(2, np.float32)] * n
    for t in range(n):
        hs[t] = x * (t + 1.0) / 3.0
    return np.sum(np.stack(hs))


def complex_into_floats(x, n):
    zs = [0.0] * n
    for t in range(n):
        zs[t] = np.exp(1j * x * t)
    total = sum(zs)
    return np.real(total) + np.imag(total)


@pytest.mark.parametrize("options", CHECKPOINTED)
@pytest.mark.parametrize("f, x", [
    (losses_from_int_zeros, 0.7), (trajectory_from_int_zeros, 0.9),
    (filled_comprehension_of_ints, 0.7), (appended_ints_then_floats, 0.7),
    (truth_values_then_floats, 0.3), (int_arrays_then_floats, np.array([0.3, -0.6])),
    (float32_arrays_then_float64, np.array([0.3, 0.6])), (complex_into_floats, 0.7),
])
def test_an_item_written_into_a_list_of_other_values_is_held_as_written(f, x, options):
    """``[0] * n`` filled with floats holds the floats: the rows take a dtype that
    holds each item written (they kept the first items' dtype, so ints truncated
    every float: a wrong value and a zero gradient; a complex item lost its
    imaginary part; float32 rows rounded float64 items)."""
    value, (g,) = tc.value_and_grad(f, wrt=(0,), **options)(x, 4)
    expected = f(x, 4)
    assert np.asarray(value).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    check(f, (x, 4), **options)


def arrays_into_a_list_of_nones(x, n):
    hs = [None] * n
    for t in range(n):
        hs[t] = x * t
    return np.sum(np.stack(hs))


def numbers_into_a_list_of_arrays(x, n):
    hs = [np.zeros(3)] * n
    for t in range(n):
        hs[t] = np.sum(x) * t
    return sum(np.sum(h) for h in hs)


@pytest.mark.parametrize("f, marker, shapes", [
    (arrays_into_a_list_of_nones, "hs[t] = x * t", "of shape (2,) written into a list whose "
                                                    "items have shape ()"),
    (numbers_into_a_list_of_arrays, "hs[t] = np.sum(x) * t", "of shape () written into a "
                                                             "list whose items have shape (3,)"),
])
def test_an_item_of_another_shape_than_the_lists_items_is_refused_at_its_line(f, marker,
                                                                             shapes):
    """One array of rows cannot hold items of two shapes, and NumPy would broadcast a
    number over a row (``sum`` of the list then counted it three times): refused
    when the item is written, naming the line, where Python runs."""
    x = np.array([0.3, 0.6, 0.1])[:2 if f is arrays_into_a_list_of_nones else 3]
    with pytest.raises(TransformError) as info:
        tc.grad(f)(x, 3)
    assert f"{HERE}:{line_of(f, marker)}:" in str(info.value), str(info.value)
    assert shapes in str(info.value), str(info.value)


def lists_made_by_calling_list(h, n):
    hs = list()
    us = list()
    for t in range(n):
        h = np.tanh(h * 1.1)
        hs.append(h)
        us.append(h * 2.0)
    return np.sum(np.stack(hs) * np.stack(us))


def containers_made_by_calling_their_types(h):
    d = dict()
    d["a"] = h * 2.0
    t = tuple()
    return np.sum(d["a"]) + len(t)


@pytest.mark.parametrize("f, args", [(lists_made_by_calling_list, (3,)),
                                     (containers_made_by_calling_their_types, ())],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_list_dict_and_tuple_called_empty_are_their_displays(f, args):
    """``hs = list()`` (desugar/empty_displays.py): its append was refused as an
    array's in-place method, and two such lists were taken for one object."""
    x = np.array([0.3, -0.4, 0.7])
    check_grad(f, (x, *args))
    check_grad(f, (x, *args), df=tc.grad(f, checkpoint=True, snapshots=2))


# --- a list made in each trip and filled by an unrolled loop -------------------------
def decayed_pairs(W, b, n):
    params = [(W, b), (W * 2.0, b * 3.0)]
    for t in range(n):
        ps = []
        for Wk, bk in params:
            ps.append((Wk * 0.9, bk + Wk))
        params = ps
    return np.sum(params[0][0] * params[1][1]) + np.sum(params[1][0])


def three_stages(x, n):
    h = x
    for t in range(n):
        hs = []
        for w in [1.0, 2.0, 3.0]:
            hs.append(np.sin(h * w))
        h = hs[0] * hs[1] + hs[2]
    return np.sum(h)


def stages_read_after_the_loop(x, n):
    h = x
    hs = [x]
    for t in range(n):
        hs = []
        for w in [1.0, 2.0]:
            hs.append(np.sin(h * w))
        h = hs[0] * hs[1]
    return np.sum(hs[0])


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_list_made_in_a_trip_and_filled_by_an_unrolled_loop_stays_a_list(options):
    """``ps = []`` in each trip, then ``ps.append(...)`` in a loop over a container
    in that trip: the same length in every trip, so one variable per item (no rows,
    which a list of pairs could not be: refused before)."""
    x = vec(3)
    df = check(decayed_pairs, (x, vec(3), 3), wrt=(0, 1), **options)
    assert "append_row" not in df.source and "empty_rows" not in df.source
    df = check(three_stages, (x, 3), **options)
    assert "append_row" not in df.source and "empty_rows" not in df.source
    # each item the append computed is the list's as it is (no hs_0 = hs_sin copies)
    assert "h_mul = hs_sin * hs_sin_2\n" in df.source and "hs_0 = " not in df.source


@pytest.mark.parametrize("options", CHECKPOINTED)
def test_list_made_in_a_trip_and_read_after_the_loop_keeps_its_rows(options):
    """Where the list is read after the loop (or by a loop of no trips: the list
    from before it) it stays the rows the loop carries."""
    x = vec(3)
    for n in (0, 3):
        df = check(stages_read_after_the_loop, (x, n), **options)
    assert "append_row" in df.source


def list_of_a_trip_kept_under_another_name(x):
    h = x
    keep = None
    for t in range(3):
        hs = []
        for w in [1.0, 2.0]:
            hs.append(np.sin(h * w))
        keep = hs
        h = hs[0] + hs[1]
    return np.sum(h) + np.sum(keep[1])


def test_a_list_of_a_trip_bound_to_another_name_is_held_as_rows():
    """``keep = hs`` makes another name of the trip's list, None where the loop
    starts: the list is held as its rows, as before lists of a trip stayed static
    (this session's change refused it)."""
    x = np.array([0.3, -0.2])
    value, _ = tc.value_and_grad(list_of_a_trip_kept_under_another_name)(x)
    np.testing.assert_allclose(value, list_of_a_trip_kept_under_another_name(x), rtol=1e-12)
    check_grad(list_of_a_trip_kept_under_another_name, (x,))


def appended_to_a_dict_default(x, v):
    d = {}
    d.setdefault("a", []).append(x)  # GROW
    return d["a"][0] * v


def appended_to_a_dict_item(x, v):
    d = {"a": [x]}
    d["a"].append(v)  # GROW
    return d["a"][0] * d["a"][1]


def appended_to_a_copy_of_a_list_given(x, xs):
    ys = list(xs)
    ys.append(x)  # GROW
    return sum(ys) * x


def test_an_append_to_an_item_of_a_dict_of_constant_keys_is_followed():
    # (refused as "grows a list that is not bound to a name" before
    # desugar/keyed_lists.py made each key a name)
    check_grad(appended_to_a_dict_item, (1.5, 0.5), wrt=(0, 1))


@pytest.mark.parametrize("fn, words", [
    (appended_to_a_dict_default, ".append() grows a list that is not bound to a name"),
])
def test_an_append_the_compiler_does_not_follow_says_which_list(fn, words):
    # (they said "in-place method .append() changes an array": no array has .append)
    with pytest.raises(tc.UnsupportedSyntaxError) as info:
        tc.grad(fn)(1.5, [1.0, 2.0])
    text = str(info.value)
    assert f"{HERE}:{line_of(fn, '# GROW')}:" in text and words in text, text
    assert "changes an array" not in text, text


def test_a_copy_of_a_list_given_outside_wrt_grown_is_compiled_for_its_structure():
    # (refused before session 23: "grows 'ys', which the compiler does not hold as a
    # list of known length"; a list outside wrt is now compiled for its structure
    # where it is refused as a run-time value, container_args.nested_sequences)
    xs = [1.0, 2.0]
    check_grad(appended_to_a_copy_of_a_list_given, (1.5, xs), wrt=(0,))
    assert xs == [1.0, 2.0]


def test_the_advice_for_a_copy_of_a_list_given_holds():
    # differentiated with respect to the list too, its length is known
    got = tc.grad(appended_to_a_copy_of_a_list_given, wrt=(0, 1))(1.5, [1.0, 2.0])
    assert got[0] == pytest.approx(2 * 1.5 + 3.0) and got[1] == pytest.approx([1.5, 1.5])


def history_read_by_index(x):
    S = []
    for k in range(3):
        r = x
        for i in range(len(S)):
            r = r + S[i] * S[i]
        S.append(r * 0.5)
    return np.sum(r)


def history_read_by_iteration(x):
    S = []
    for k in range(3):
        r = x
        for s in S:
            r = r + s * s
        S.append(r * 0.5)
    return np.sum(r)


@pytest.mark.parametrize("options", CHECKPOINTED)
@pytest.mark.parametrize("f", [history_read_by_index, history_read_by_iteration])
def test_a_history_read_by_a_loop_before_each_append_reaches_its_empty_start(f, options):
    # L-BFGS's two-loop recursion over its (s, y) history: the first trip's loop reads
    # the empty list, whose adjoint met that of the rows appended later ((0,) against
    # (0, 3): "operands could not be broadcast" in the gradient)
    check_grad(f, (vec(3),), wrt=(0,), df=tc.grad(f, wrt=(0,), **options))
