"""tc.checkpoint(fn, *args): segments recomputed in the reverse sweep.

Every gradient is compared with the same function without checkpoint (1e-12)
and, on small problems, with central finite differences."""

import tracemalloc

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt import checkpoint as ckpt  # an alias: resolved by identity
from gradcheck import check_grad

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 4)) * 0.5
V = RNG.standard_normal((4, 4)) * 0.5
B = RNG.standard_normal(4) * 0.1


def close(a, b, tol=1e-12):
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def block(x, W):
    a = np.tanh(x @ W)
    b = np.sin(a) * a
    return b + x


def two_out(x, W, b):
    u = np.tanh(x @ W + b)
    v = np.cos(u) * x
    return u, v


def nested_block(x, W, V):
    y = tc.checkpoint(block, x, W)
    z = tc.checkpoint(block, y, V)
    return np.tanh(z) * y


def f_chain(x, W, V):
    h1 = np.tanh(x @ V)
    h2 = tc.checkpoint(block, h1, W)
    h3 = ckpt(block, h2, W)
    return np.sum(h3 * h3)


def f_chain_plain(x, W, V):
    h1 = np.tanh(x @ V)
    h2 = block(h1, W)
    h3 = block(h2, W)
    return np.sum(h3 * h3)


def f_tuple(x, W, b):
    u, v = tc.checkpoint(two_out, x, W, b)
    return np.sum(u * v) + np.sum(v ** 2)


def f_tuple_plain(x, W, b):
    u, v = two_out(x, W, b)
    return np.sum(u * v) + np.sum(v ** 2)


def f_nested(x, W, V):
    y = tc.checkpoint(nested_block, x, W, V)
    return np.sum(np.sin(y))


def f_nested_plain(x, W, V):
    y = block(x, W)
    z = block(y, V)
    return np.sum(np.sin(np.tanh(z) * y))


def f_local(x, W):
    def inner(h):
        return np.tanh(h @ W) + h
    y = tc.checkpoint(inner, x)
    y = tc.checkpoint(inner, y)
    return np.sum(y * x)


def f_local_plain(x, W):
    y = np.tanh(x @ W) + x
    y = np.tanh(y @ W) + y
    return np.sum(y * x)


def f_loop(x, W, b, n):
    h = x
    for t in range(n):
        h = tc.checkpoint(block, h, W) + b
    return np.sum(h ** 2)


def f_loop_plain(x, W, b, n):
    h = x
    for t in range(n):
        h = block(h, W) + b
    return np.sum(h ** 2)


def f_min_bytes(x, W, limit):
    y = tc.checkpoint(block, x, W, min_bytes=limit)
    return np.sum(y * y)


CASES = [
    (f_chain, f_chain_plain, (X, W, V), (0, 1, 2)),
    (f_tuple, f_tuple_plain, (X, W, B), (0, 1, 2)),
    (f_nested, f_nested_plain, (X, W, V), (0, 1, 2)),
    (f_local, f_local_plain, (X, W), (0, 1)),
    (f_loop, f_loop_plain, (X, W, B, 4), (0, 1, 2)),
]


@pytest.mark.parametrize("f, plain, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_equals_uncheckpointed_and_finite_differences(f, plain, args, wrt):
    got = tc.grad(f, wrt=wrt)(*args)
    close(got, tc.grad(plain, wrt=wrt)(*args))
    check_grad(f, args, wrt=wrt)


@pytest.mark.parametrize("f, plain, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_outside_grad_is_a_plain_call(f, plain, args, wrt):
    assert np.allclose(f(*args), plain(*args), rtol=1e-14, atol=0)


def test_inside_checkpointed_loop():
    args = (X, W, B, 6)
    want = tc.grad(f_loop_plain, wrt=(0, 1, 2))(*args)
    for kw in (dict(snapshots=2), dict(snapshots=6), dict(schedule="uniform")):
        close(tc.grad_with_checkpointing(f_loop, wrt=(0, 1, 2), **kw)(*args), want)


def test_generated_code_reads_like_the_design():
    src = tc.grad(f_chain, wrt=1).source
    assert "def segment" in src and "_primal(h1, W)" in src
    assert "segment" in src and ".forward(h1, W)" in src and ".reverse(" in src
    assert "= yield " in src  # the adjoint hands back the outputs, then reverses
    df = tc.grad(f_chain, wrt=1)
    main = src[src.index("def df_chain"):]
    primal = main[:main.index("# reverse sweep")]
    # the primal keeps only the segment's outputs: no intermediates of block()
    assert "np.sin" not in primal and "np.tanh(a_matmul" not in primal
    assert df(X, W, V).shape == W.shape


def test_min_bytes_decided_at_run_time():
    small = X.nbytes + 1  # the output is smaller: the record is kept, nothing recomputed
    plain = tc.grad(lambda_free_min_bytes_plain, wrt=(0, 1))(X, W, 0)
    for limit, recomputed in ((small, 0), (X.nbytes, 1), (1, 1)):
        with tc.profile() as prof:
            got = tc.grad(f_min_bytes, wrt=(0, 1))(X, W, limit)
        close(got, plain)
        st = prof.loops["segment"
                        + str(f_min_bytes.__code__.co_firstlineno + 1)]
        assert st.steps_recomputed == recomputed
        assert st.checkpoints == recomputed


def lambda_free_min_bytes_plain(x, W, limit):
    y = block(x, W)
    return np.sum(y * y)


def test_profiler_counts_checkpoints_and_recomputation():
    with tc.profile() as prof:
        tc.grad(f_loop, wrt=1)(X, W, B, 5)
    (name, st), = [(k, v) for k, v in prof.loops.items() if k.startswith("segment")]
    assert st.runs == 5 and st.checkpoints == 5 and st.steps_recomputed == 5
    assert st.bytes_saved > 0  # the re-recorded intermediates, measured
    assert "checkpoints" in prof.report()


def deep(x, W):
    for k in range(12):
        x = np.tanh(x @ W) + x * 0.5
    return x


def f_deep(x, W):
    for k in range(4):
        x = tc.checkpoint(deep, x, W)
    return np.sum(x)


def f_deep_plain(x, W):
    for k in range(4):
        x = deep(x, W)
    return np.sum(x)


def _peak(df, *args):
    df(*args)  # compile and warm up
    tracemalloc.start()
    try:
        df(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_intermediates_are_not_kept():
    x = RNG.standard_normal((64, 64))
    w = RNG.standard_normal((64, 64)) * 0.1
    plain = _peak(tc.grad(f_deep_plain, wrt=1), x, w)
    ckpt_peak = _peak(tc.grad(f_deep, wrt=1), x, w)
    close(tc.grad(f_deep, wrt=1)(x, w), tc.grad(f_deep_plain, wrt=1)(x, w))
    # taped: 4 * 12 iterations of intermediates; checkpointed: about one segment's
    assert ckpt_peak < 0.5 * plain, (ckpt_peak, plain)


def test_errors_are_clear():
    def bad(x):
        return np.sum(tc.checkpoint(x))
    with pytest.raises(tc.TangentCkptError):
        tc.grad(bad)(X)

    def bad_kw(x):
        return np.sum(tc.checkpoint(block, x, W, mode=1))
    with pytest.raises(tc.UnsupportedSyntaxError, match="keyword"):
        tc.grad(bad_kw)(X)


def _checked_block(x):
    y = np.sin(x)
    print("block runs")
    if np.max(y) > 0.9:
        raise ValueError("too big (block)")
    return y


def segment_kept_below_min_bytes(x):
    return np.sum(tc.checkpoint(_checked_block, x, min_bytes=10 ** 9))


def scope_switched_at_run_time(x, flag):
    with tc.checkpoint_scope("checked", enabled=flag):
        y = np.sin(x)
        print("scope runs")
        assert np.max(y) < 0.9, "too big (scope)"
    return np.sum(y)


@pytest.mark.parametrize("f, extra, printed", [
    (segment_kept_below_min_bytes, (), "block runs"),
    (scope_switched_at_run_time, (False,), "scope runs"),
    (scope_switched_at_run_time, (True,), "scope runs"),
])
@pytest.mark.parametrize("options", [{}, {"checkpoint": "auto", "memory_budget": "1MB"}])
def test_a_segment_whose_record_is_kept_checks_and_prints_as_python_does(capsys, f, extra,
                                                                         printed, options):
    """A kept record runs the re-recording function alone, which left out the
    segment's raise, assert and print: the gradient came back where Python
    raises, and nothing was printed.  Each now runs once, as written."""
    small, large = np.array([0.5, 0.7]), np.array([0.5, 1.4])
    g = tc.grad(f, **options)(small, *extra)
    np.testing.assert_allclose(g, np.cos(small), rtol=1e-12)
    assert capsys.readouterr().out.count(printed) == 1
    with pytest.raises((ValueError, AssertionError), match="too big"):
        tc.grad(f, **options)(large, *extra)
