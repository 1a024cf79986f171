"""desugar/tuple_lists.py: a list of tuples appended in a loop (``traj.append((s, a,
r))``) and read by item or by a loop is one list per tuple position, each a list
the lowering builds at run time; the gradient is Python's, taped and checkpointed."""

import os

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.container_args import structure_of
from tangent_ckpt.errors import TransformError

HERE = os.path.basename(__file__)
OPTIONS = [{}, {"checkpoint": True, "snapshots": 2}]


def returns_read_backwards(W, x0, n):
    traj = []
    s = x0
    for t in range(n):
        a = np.tanh(W @ s)
        r = np.sum(a * s)
        traj.append((s, a, r))
        s = s + 0.1 * a
    G = 0.0
    loss = 0.0
    for s, a, r in reversed(traj):
        G = r + 0.9 * G
        loss = loss + G * np.sum(a)
    return loss + traj[1][2] * traj[-1][0][1] + len(traj)


def items_of_a_while_loop(W, x0, n):
    traj = []
    s = x0
    k = 0
    while k < n:
        a = np.tanh(W @ s)
        traj.append((a, 2.0 * k))
        s = s + 0.1 * a
        k = k + 1
    loss = 0.0
    for t in range(len(traj)):
        a, c = traj[t]
        loss = loss + c * np.sum(a ** 2)
    for i, (a, c) in enumerate(traj):
        loss = loss + i * np.sum(a)
    for step in traj[::-1]:
        loss = loss * 0.5 + np.sum(step[0]) * step[1]
    return loss + np.sum(traj[n - 1][0])


def read_by_a_comprehension(W, x0, n):
    traj = []
    s = x0
    for t in range(n):
        s = np.sin(W @ s)
        traj.append((t, s))
    return sum([np.sum(h) * t for t, h in traj])


def episodes_reset_the_buffer(W, x0, n):
    total = 0.0
    s = x0
    for episode in range(2):
        traj = []
        for t in range(n):
            s = np.tanh(W @ s + 0.1 * episode)
            traj.append((s, np.sum(s ** 2)))
        for h, r in traj:
            total = total + r * np.sum(h)
    return total


PROGRAMS = [returns_read_backwards, items_of_a_while_loop, read_by_a_comprehension,
            episodes_reset_the_buffer]


@pytest.mark.parametrize("f", PROGRAMS)
@pytest.mark.parametrize("options", OPTIONS)
def test_one_list_per_position_computes_what_python_does(f, options):
    rng = np.random.default_rng(0)
    W, x0 = 0.5 * rng.normal(size=(3, 3)), rng.normal(size=3)
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(W, x0, 4)
    np.testing.assert_allclose(value, f(W.copy(), x0.copy(), 4), rtol=1e-12)
    df = tc.grad(f, wrt=(0, 1), **options)
    check_grad(f, (W, x0, 4), wrt=(0, 1), df=df)
    if options:
        taped = tc.grad(f, wrt=(0, 1))(W, x0, 4)
        for g, t in zip(df(W, x0, 4), taped):
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)


def test_the_tuples_are_gone_from_the_desugared_function():
    text = desugared(returns_read_backwards)
    assert "traj_0.append(s)" in text and "traj_2.append(r)" in text
    assert "zip(traj_0[::-1], traj_1[::-1], traj_2[::-1])" in text
    assert "traj_2[1]" in text and "traj_0[-1][1]" in text and "len(traj_0)" in text
    assert "traj.append" not in text


def test_a_loop_variable_holding_the_tuple_is_made_again_from_the_items():
    text = desugared(items_of_a_while_loop)
    assert "for step_0, step_1 in zip(traj_0[::-1], traj_1[::-1]):" in text
    assert "step = (step_0, step_1)" in text
    assert "a = traj_0[t]" in text and "c = traj_1[t]" in text  # a, c = traj[t]


def read_whole_by_numpy(x, n):
    pairs = []
    for t in range(n):
        pairs.append((x * t, x))
    return np.sum(np.asarray(pairs)[:, 0]) + pairs[0][1]


def appended_tuples_of_two_lengths(x, n):
    traj = []
    for t in range(n):
        traj.append((x, x))
        traj.append((x, x, x))
    return traj[0][1]


def zipped_with_another_list(x, n):
    traj = []
    for t in range(n):
        traj.append((x * t, x))
    total = 0.0
    for (a, b), w in zip(traj, [1.0] * n):
        total = total + a * b * w
    return total


def appended_to_while_read(x, n):
    traj = [(x, x), x]
    for t in range(n):
        traj.append((x * t, x))
    return traj[1][0]


@pytest.mark.parametrize("fn", [read_whole_by_numpy, appended_tuples_of_two_lengths,
                                zipped_with_another_list, appended_to_while_read])
def test_other_reads_and_appends_are_left_to_the_lowering(fn):
    """Read whole by NumPy (the array of its rows), tuples of two lengths, a read the
    pass does not know, a binding other than []: no list is split."""
    assert "_0.append(" not in desugared(fn)


def test_a_read_the_pass_does_not_know_is_refused_with_what_is_read():
    with pytest.raises(TransformError) as info:
        tc.grad(zipped_with_another_list).compile()
    message = str(info.value)
    assert f"{HERE}:{line_of(zipped_with_another_list, 'for (a, b), w in')}:" in message
    assert "a list of tuples appended in a loop" in message, message


def test_tuples_of_two_lengths_are_refused_as_such():
    with pytest.raises(TransformError) as info:
        tc.grad(appended_tuples_of_two_lengths).compile()
    message = str(info.value)
    assert f"{HERE}:{line_of(appended_tuples_of_two_lengths, 'traj.append((x, x, x))')}:" \
        in message
    assert "holds lists of length 2 only" in message, message


def adaptive_steps(y0, k, t_end):
    """RKF45's shape: (t, y) pairs from the start, one more per accepted step of a
    while loop, the last pair's state read at the end."""
    t, y, h = 0.0, y0, 0.1
    res = [(t, y)]
    while t < t_end:
        y_half = y + 0.5 * h * (-k * y)
        y_new = y + h * (-k * y_half)
        err = np.sum(np.abs(y_new - y - h * (-k * y)))
        if err < 0.05:
            t = t + h
            y = y_new
            res.append((t, y))
        h = 0.9 * h
    return np.sum(res[-1][1] ** 2) + res[len(res) // 2][0] * np.sum(res[0][1])


@pytest.mark.parametrize("options", OPTIONS)
def test_a_list_of_pairs_from_a_display_grown_in_a_while_loop(options):
    y0, k = np.array([1.0, -0.5]), np.array([0.8, 1.3])
    value, _ = tc.value_and_grad(adaptive_steps, wrt=(0, 1), **options)(y0, k, 0.5)
    np.testing.assert_allclose(value, adaptive_steps(y0.copy(), k.copy(), 0.5), rtol=1e-12)
    check_grad(adaptive_steps, (y0, k, 0.5), wrt=(0, 1),
               df=tc.grad(adaptive_steps, wrt=(0, 1), **options))
    assert "res_0 = [t]" in desugared(adaptive_steps)


def pairs_of_calls(x, n):
    traj = [(np.sin(x), np.cos(x)), (x, x)]  # calls in a display of two: left as written
    for t in range(n):
        traj.append((x * t, x))
    return traj[1][0]


def test_a_display_of_several_pairs_of_calls_is_left_to_the_lowering():
    assert "_0.append(" not in desugared(pairs_of_calls)


def appended_in_a_loop_over_a_list(params, x, n):
    new = []
    for W, b in params:  # unrolled by the compiler: a list of known length
        new.append((W * 0.5, b))
    for t in range(3):  # a constant range
        new.append((x, x))
    for W, b in new:
        x = np.tanh(x @ W + b)
    return np.sum(x)


def test_a_list_grown_only_in_loops_the_compiler_unrolls_is_left_as_written():
    """Its items are read as written (the generated code stays what it was)."""
    params = [(np.eye(3), np.zeros(3)), (np.eye(3), np.ones(3))]
    assert "new.append((W * 0.5, b))" in desugared(appended_in_a_loop_over_a_list,
                                                   {0: structure_of(params)})


def counted_from_one(W, x0, n):
    traj = [(x0, 0.5)]
    s = x0
    for t in range(n):
        s = np.tanh(W @ s)
        traj.append((s, np.sum(s) * t))
    loss = 0.0
    for i, (h, r) in enumerate(traj, 1):
        loss = loss + i * r * np.sum(h)
    return loss + i


def counted_from_a_name_and_a_keyword_backwards(W, x0, n):
    traj = []
    s = x0
    k = 0
    while k < n:
        s = np.sin(W @ s)
        traj.append((s, 2 * k, np.sum(s ** 2)))
        k = k + 1
    first = n - 2
    loss = 0.0
    for i, step in enumerate(traj, first):
        first = first + 10  # (the start was read once, before the loop)
        loss = loss + i * np.sum(step[0]) + step[1] * step[2]
    for j, (h, c, r) in enumerate(reversed(traj), start=len(traj) - 1):
        loss = loss * 0.5 + j * r + np.sum(h)
    return loss + first


@pytest.mark.parametrize("f", [counted_from_one,
                               counted_from_a_name_and_a_keyword_backwards])
@pytest.mark.parametrize("options", OPTIONS)
def test_enumerate_from_a_start_counts_as_python_does(f, options):
    """``enumerate(traj, start)`` (``start=``; of ``reversed(traj)`` too): the index
    counted from 0 plus the start read once before the loop (the lowering refused
    "enumerate(..., start)"; ``enumerate(reversed(traj))`` was left to the lowering,
    which refused the list read by item)."""
    rng = np.random.default_rng(1)
    W, x0 = 0.5 * rng.normal(size=(3, 3)), rng.normal(size=3)
    for n in (4, 1):
        value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(W, x0, n)
        np.testing.assert_allclose(value, f(W.copy(), x0.copy(), n), rtol=1e-12)
        check_grad(f, (W, x0, n), wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))
    text = desugared(counted_from_one)
    assert "for i_0, (h, r) in enumerate(zip(traj_0, traj_1)):" in text, text
    assert "i = i_0 + 1" in text, text


def counted_from_a_float(x, n):
    traj = []
    for t in range(n):
        traj.append((x * t, x))
    total = 0.0
    for i, (a, b) in enumerate(traj, 0.5):  # (Python raises: the start is no int)
        total = total + i * np.sum(a * b)
    return total


def test_a_start_python_refuses_is_still_refused_by_the_lowering():
    with pytest.raises(TransformError) as info:
        tc.grad(counted_from_a_float).compile()
    message = str(info.value)
    assert f"{HERE}:{line_of(counted_from_a_float, 'enumerate(traj, 0.5)')}:" in message
    assert "enumerate(..., start)" in message, message


def counted_only(W, x0, n):
    traj = []
    s = x0
    for t in range(n):
        s = np.tanh(W @ s)
        traj.append((s, np.sum(s) * t))
        if t % 2 == 0:
            traj.append((s * 0.5, 1.0))
    return np.sum(s ** 2) * len(traj)


@pytest.mark.parametrize("options", OPTIONS)
def test_a_list_of_tuples_read_only_by_len_is_split_too(options):
    """Read by nothing but ``len``, the list was the lowering's array of rows, each
    tuple stacked into a row: an array and a number made "all input arrays must
    have the same shape" when the gradient ran (the fuzzer's tuple_lists family)."""
    rng = np.random.default_rng(2)
    W, x0 = 0.5 * rng.normal(size=(3, 3)), rng.normal(size=3)
    value, _ = tc.value_and_grad(counted_only, wrt=(0, 1), **options)(W, x0, 3)
    np.testing.assert_allclose(value, counted_only(W.copy(), x0.copy(), 3), rtol=1e-12)
    check_grad(counted_only, (W, x0, 3), wrt=(0, 1),
               df=tc.grad(counted_only, wrt=(0, 1), **options))
    assert "len(traj_0)" in desugared(counted_only)


def rollout_of_constant_length(W, x0):
    # an episode of a fixed number of steps: range(4) is a loop the lowering runs,
    # its list held as rows like any other
    traj = []
    s = x0
    for t in range(4):
        s = np.tanh(W @ s)
        traj.append((s, np.sum(s ** 2)))
    G = 0.0
    for s_t, r in reversed(traj):
        G = r + 0.9 * G + 0.1 * np.sum(s_t)
    return G


def truth_tested_traj(W, x0, n):
    traj = []
    s = x0
    for t in range(n):
        s = np.tanh(W @ s)
        traj.append((s, np.sum(s)))
    scale = 2.0 if traj else 1.0
    if traj and not not traj:
        s = s * scale
    if not traj:
        s = s * 3.0
    return np.sum(s ** 2) + len(traj)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("f, args", [(rollout_of_constant_length, ()),
                                     (truth_tested_traj, (3,)),
                                     (truth_tested_traj, (0,))],
                         ids=["constant_range", "truth", "truth_of_an_empty_list"])
def test_a_list_of_a_constant_range_or_truth_tested_traj_is_split(f, args, options):
    """Both stacked each tuple into a row, and an array beside a number made "all
    input arrays must have the same shape" when the gradient ran (the loop over
    the constant range's list was refused as a list of lists built at run time)."""
    rng = np.random.default_rng(3)
    W, x0 = 0.5 * rng.normal(size=(3, 3)), rng.normal(size=3)
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(W, x0, *args)
    np.testing.assert_allclose(value, f(W.copy(), x0.copy(), *args), rtol=1e-12)
    check_grad(f, (W, x0) + args, wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))
    assert "traj_1" in desugared(f)


def lstm_caches(Wf, Wc, xs):
    # a cell's cache per step, over the rows of the array given (``for x in xs``:
    # its length known when the code runs), read back by item
    h, c = np.zeros(2), np.zeros(2)
    cache = []
    for x in xs:
        z = np.concatenate([h, x])
        f = 1.0 / (1.0 + np.exp(-(Wf @ z)))
        c = f * c + (1 - f) * np.tanh(Wc @ z)
        h = np.tanh(c)
        cache.append((z, f, c, np.sum(h)))
    return np.sum(cache[-1][2] ** 2) + cache[0][3] + 0.1 * np.sum(cache[1][0])


@pytest.mark.parametrize("options", OPTIONS)
def test_a_list_of_tuples_grown_over_the_rows_of_an_array_is_split(options):
    """It was the lowering's array of rows, refused where read by item ("an item
    of a list of lists built at run time")."""
    rng = np.random.default_rng(4)
    Wf, Wc, xs = 0.5 * rng.normal(size=(2, 4)), 0.5 * rng.normal(size=(2, 4)), rng.normal(size=(3, 2))
    value, _ = tc.value_and_grad(lstm_caches, wrt=(0, 1, 2), **options)(Wf, Wc, xs)
    np.testing.assert_allclose(value, lstm_caches(Wf, Wc, xs), rtol=1e-12)
    check_grad(lstm_caches, (Wf, Wc, xs), wrt=(0, 1, 2),
               df=tc.grad(lstm_caches, wrt=(0, 1, 2), **options))
    assert "cache_2[-1]" in desugared(lstm_caches)


def read_through_an_alias(W, x0, n):
    traj = []
    s = x0
    for t in range(n):
        s = np.tanh(W @ s)
        traj.append((s, np.sum(s)))
    other = traj  # the same list under a second name
    total = 0.0
    for s_t, r in other:
        total = total + np.sum(s_t) * r
    return total * len(other)


def alias_read_whole(W, x0, n):
    pts = []
    s = x0
    for t in range(n):
        s = np.tanh(W @ s)
        pts.append((s[0], s[1]))
    other = pts
    return np.sum(np.array(other) ** 2)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("f", [read_through_an_alias, alias_read_whole])
def test_a_list_of_tuples_read_through_an_alias(f, options):
    """``other = traj`` names the one list: read as ``traj``, the list is split
    (its loop was refused, ``len(other)`` crashed with "all input arrays must have
    the same shape"); an alias the pass does not split after all stays as written."""
    rng = np.random.default_rng(5)
    W, x0 = 0.5 * rng.normal(size=(3, 3)), rng.normal(size=3)
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(W, x0, 3)
    np.testing.assert_allclose(value, f(W.copy(), x0.copy(), 3), rtol=1e-12)
    check_grad(f, (W, x0, 3), wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))
    text = desugared(f)
    assert ("other" not in text) == (f is read_through_an_alias), text
