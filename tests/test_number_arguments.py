"""Parameters the call gives numbers (compiler/fence/number_arguments.py): where the
aliasing fence refuses ``nxt = list(x); nxt[i] += v`` because, from the source, the
items of ``x`` may be arrays (added into in place), a call giving ``x`` a list or
tuple of floats compiles for that, exactly; a call giving arrays stays refused."""

import copy

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_structured_leaves, numeric_grad
from tangent_ckpt.compiler.desugar.passes import desugar
from tangent_ckpt.compiler.fence.number_arguments import (
    ARRAY, NUMBER, SEQUENCE, argument_kind, number_parameters,
)
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.errors import UnsupportedSyntaxError


def copied_and_updated(x, v):
    nxt = list(x)
    for i in range(2):
        nxt[i] += v * x[i]
    return nxt[0] * nxt[1] + x[0]


def packed_floats(a, b, v):
    x = (a, b)
    nxt = list(x)
    nxt[0] += v
    return nxt[0] * nxt[1] + x[0]


def retupled(x, v):
    x = tuple(x)
    nxt = list(x)
    nxt[0] += v
    return nxt[0] * nxt[1] + x[0]


def euler(x, dt, n):
    # EulerSimulator's step: next = list(x); next[i] += dt * dx[i]
    for t in range(n):
        dx = (x[1], -x[0] * x[1])
        nxt = list(x)
        for i in range(len(x)):
            nxt[i] += dt * dx[i]
        x = tuple(nxt)
    return x[0] + 2 * x[1]


def carried(x, v, n):
    s = 0.0
    for t in range(n):
        nxt = list(x)
        nxt[0] += v * nxt[1]
        nxt[1] -= v * nxt[0]
        s = s + nxt[0] * x[1]
        x = nxt
    return s + x[0]


@pytest.mark.parametrize("checkpoint", [False, True])
@pytest.mark.parametrize("f, args, wrt", [
    (copied_and_updated, ([1.0, 2.0], 0.5), (1,)),
    (copied_and_updated, ((1.0, np.float64(2.0)), 0.5), (1,)),
    (packed_floats, (1.0, 2.0, 0.5), (0, 1, 2)),
    (retupled, ([1.0, 2.0], 0.5), (1,)),
])
def test_a_list_of_floats_copied_then_updated_compiles_exactly(f, args, wrt, checkpoint):
    df = tc.grad(f, wrt=wrt, checkpoint=checkpoint, snapshots=2)
    check_grad(f, args, wrt=wrt, df=df)
    value, _ = tc.value_and_grad(f, wrt=wrt, checkpoint=checkpoint,
                                 snapshots=2)(*copy.deepcopy(args))
    assert value == pytest.approx(f(*copy.deepcopy(args)), rel=1e-12)


@pytest.mark.parametrize("checkpoint", [False, True])
@pytest.mark.parametrize("f, args", [
    (copied_and_updated, ([1.0, 2.0], 0.5)),
    (euler, ((1.0, 2.0), 0.1, 5)),
    (carried, ([1.0, 2.0], 0.3, 6)),
])
def test_a_differentiated_list_of_floats_copied_then_updated(f, args, checkpoint):
    df = tc.grad(f, wrt=(0, 1), checkpoint=checkpoint, snapshots=2)
    got = df(*copy.deepcopy(args))
    check_structured_leaves(f, args, (0,), got[:1])
    expected = numeric_grad(f, list(args), wrt=(1,))[0]
    np.testing.assert_allclose(got[1], expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("wrt", [(0, 1), (1,)])
def test_a_list_of_arrays_copied_then_updated_stays_refused(wrt):
    # nxt[i] += v adds into the caller's arrays, which x still holds
    arrays = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]
    with pytest.raises(UnsupportedSyntaxError, match="may also change 'x'"):
        tc.grad(copied_and_updated, wrt=wrt)(arrays, 0.5)


def test_one_gradient_given_floats_then_arrays_then_floats():
    df = tc.grad(copied_and_updated, wrt=1)
    assert df([1.0, 2.0], 0.5) == pytest.approx(6.0)
    with pytest.raises(UnsupportedSyntaxError, match="may also change 'x'"):
        df([np.array([1.0]), np.array([2.0])], 0.5)
    assert df((3.0, 2.0), 0.5) == pytest.approx(2 * 1.5 * 3.0 * 2.0)  # 2 (1 + v) x0 x1


def test_what_a_call_gives_is_a_number_or_a_list_of_numbers():
    assert argument_kind(1.5) == argument_kind(np.float32(2)) == argument_kind(3) == NUMBER
    assert argument_kind([1.0, np.float64(2.0), 3]) == argument_kind((1.0,)) == SEQUENCE
    # an array (a 0-d one too) is its own memory, written in place: never a NUMBER;
    # ARRAY says only that its elements are numbers (an array of objects holds them)
    assert argument_kind(np.array(1.0)) == argument_kind(np.zeros((2, 3))) == ARRAY
    assert argument_kind(np.arange(3)) == argument_kind(np.zeros(2, bool)) == ARRAY
    assert argument_kind(np.array([np.zeros(2), 1.0], dtype=object)) is None
    assert argument_kind(np.zeros(2, dtype=[("a", float)])) is None  # records: views
    assert argument_kind(np.ma.masked_array([1.0])) is None  # a subclass
    assert argument_kind([np.zeros(2)]) is None
    assert argument_kind([[1.0]]) is None  # a list of lists: the inner lists are shared
    assert argument_kind("a") is None


def _kinds(fn, given):
    parsed = parse_function(fn)
    desugar(parsed)
    return number_parameters(parsed.node, given, parsed.resolve)


def appends(x, v):
    x.append(v)
    nxt = list(x)
    nxt[0] += v
    return nxt[0] + x[0]


def stores(x, v):
    x[1] = v
    return x[0]


def aliases(x, v):
    y = x
    return y[0] * v


def test_a_list_counts_as_numbers_only_where_the_function_only_reads_it():
    given = {"x": SEQUENCE, "v": NUMBER}
    assert _kinds(copied_and_updated, given) == given
    assert _kinds(euler, {"x": SEQUENCE}) == {"x": SEQUENCE}
    # a store into the caller's list (or a name for it that may be stored into)
    # may put an array there
    for fn in (appends, stores, aliases):
        assert _kinds(fn, given) == {"v": NUMBER}


# --- arrays of numbers: buffers a simulation copies its state into ------------------
# From the source, `u = u0.copy()` may be a list of arrays, and `u_new[:] = u` would
# then put u's arrays into u_new (an array of objects): the fence refused the writes
# that follow ("a write into 'u_new' may also change 'u'").  A call giving u0 a NumPy
# array of numbers compiles for that (number_arguments.ARRAY): the store copies numbers.
def heat_ping_pong(u0, alpha, nt):
    u = u0.copy()
    u_new = np.empty_like(u)
    u_new[:] = u
    for n in range(nt):
        u_new[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        u, u_new = u_new, u
    return np.sum(u ** 2)


def upwind_copied_state(u0, c, nt):
    u = u0.copy()
    u_old = np.zeros_like(u)
    for n in range(nt):
        u_old[:] = u
        u[1:] = u_old[1:] - c * (u_old[1:] - u_old[:-1])
        u[0] = u_old[-1]
    return np.sum(u ** 3)


def upwind_copyto(u0, c, nt):
    u = u0.copy()
    u_old = np.zeros_like(u)
    for n in range(nt):
        np.copyto(u_old, u)
        u[1:] = u_old[1:] - c * (u_old[1:] - u_old[:-1])
        u[0] = u_old[-1]
    return np.sum(u ** 3)


def interior_copy_relaxed(u0, c, nt):
    u = u0[1:].copy()
    v = np.empty_like(u)
    for n in range(nt):
        v[:] = u
        u[1:] = v[:-1] * c + v[1:]
        u[0] = v[-1]
    return np.sum(u ** 2)


def rows_exchanged(U0, V0, c, nt):
    U = U0.copy()
    V = V0.copy()
    for n in range(nt):
        for k in range(U.shape[0]):
            V[k] = U[k] * c + V[k]
            U[k] = V[k - 1]
    return np.sum(U ** 2) + np.sum(V)


def out_buffer_copied_back(u0, c, nt):
    u = u0.copy()
    tmp = np.empty_like(u)
    for n in range(nt):
        np.multiply(u, c, out=tmp)
        tmp[1:] += u[:-1]
        u[:] = tmp
    return np.sum(u ** 2)


_STATE = np.array([0.9, 1.3, 0.4, 1.1, 0.7, 1.5])


@pytest.mark.parametrize("checkpoint", [False, True])
@pytest.mark.parametrize("f, args", [
    (heat_ping_pong, (_STATE, 0.1, 4)),
    (upwind_copied_state, (_STATE, 0.4, 4)),
    (upwind_copyto, (_STATE, 0.4, 4)),
    (interior_copy_relaxed, (_STATE, 0.7, 3)),
    (rows_exchanged, (_STATE.reshape(3, 2), _STATE[::-1].reshape(3, 2), 0.6, 3)),
    (out_buffer_copied_back, (_STATE, 0.7, 4)),
])
def test_a_state_copied_into_buffers_given_an_array_compiles_exactly(f, args, checkpoint):
    wrt = tuple(k for k, a in enumerate(args) if not isinstance(a, int))
    df = tc.grad(f, wrt=wrt, checkpoint=checkpoint, snapshots=2)
    check_grad(f, args, wrt=wrt, df=df)
    if checkpoint:
        assert "CheckpointedLoop(" in df.source
    value, _ = tc.value_and_grad(f, wrt=wrt)(*copy.deepcopy(args))
    assert value == pytest.approx(f(*copy.deepcopy(args)), rel=1e-12)


def test_a_state_given_an_array_of_objects_stays_refused():
    # u_old[:] = u then holds u's objects: the gradient given floats is not reused
    df = tc.grad(upwind_copied_state, wrt=1)
    assert np.isfinite(df(_STATE, 0.4, 3))
    with pytest.raises(UnsupportedSyntaxError, match="a write into 'u' may also change 'u_old'"):
        df(_STATE.astype(object), 0.4, 3)
