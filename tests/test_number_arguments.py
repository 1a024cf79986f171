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
    NUMBER, SEQUENCE, argument_kind, number_parameters,
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
    assert argument_kind(np.array(1.0)) is None  # a 0-d array: written in place
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
