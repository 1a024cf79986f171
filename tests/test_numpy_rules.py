"""Every NumPy adjoint rule against central finite differences (vector-Jacobian checks).

``check`` evaluates the inlined expression on real values through
``evaluation.evaluate`` and compares ``<adjoint, d>`` with
``<(f(x + eps d) - f(x - eps d)) / 2 eps, g>`` for random ``g`` and ``d``.
"""

import builtins
import copy
import math
import operator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import tangent_ckpt.adjoints.numpy_rules  # noqa: F401  (registers the rules)
from tangent_ckpt import runtime as rt
from tangent_ckpt.adjoints import ops_table
from tangent_ckpt.adjoints.evaluation import evaluate
from tangent_ckpt.adjoints.registry import lookup

NUMPY_2_1 = np.lib.NumpyVersion(np.__version__) >= "2.1.0"   # np.clip(min=), reshape(shape=)

EPS = 1e-6
SETTINGS = settings(max_examples=60, deadline=None)


def _at(args, kwargs, where, index):
    """Read the argument at ``where`` (a position or a keyword) / sequence element."""
    value = args[where] if isinstance(where, int) else kwargs[where]
    return value[index] if index is not None else value


def _with(args, kwargs, where, index, new):
    args, kwargs = list(args), dict(kwargs)
    if index is not None:
        seq = list(_at(args, kwargs, where, None))
        seq[index] = new
        new = seq
    if isinstance(where, int):
        args[where] = new
    else:
        kwargs[where] = new
    return args, kwargs


def _assert_same(old, new):
    if isinstance(old, dict):
        assert old.keys() == new.keys()
        for k in old:
            _assert_same(old[k], new[k])
    elif isinstance(old, (list, tuple)):
        assert len(old) == len(new)
        for a, b in zip(old, new):
            _assert_same(a, b)
    elif isinstance(old, np.ndarray):
        np.testing.assert_array_equal(old, new)


def check(fn, args, kwargs=None, param=None, where=0, index=None, rng=None, rtol=1e-5,
          atol=1e-6):
    """Vector-Jacobian check of ``fn``'s rule for ``param`` (the argument at ``where``)."""
    kwargs = kwargs or {}
    rng = rng or np.random.default_rng(0)
    ans = fn(*args, **kwargs)
    g = rng.standard_normal(np.shape(ans))
    before = copy.deepcopy((args, kwargs))
    adjoint = evaluate(fn, param, g, ans, args, kwargs, index=index)
    _assert_same(before, (args, kwargs))                   # inputs are never mutated
    x = np.asarray(_at(args, kwargs, where, index), dtype=float)
    assert np.shape(adjoint) == x.shape, (fn, param, np.shape(adjoint), x.shape)
    d = rng.standard_normal(x.shape)

    def f(v):
        a, k = _with(args, kwargs, where, index, v if x.ndim else float(v))
        return np.asarray(fn(*a, **k), dtype=float)

    numeric = np.sum((f(x + EPS * d) - f(x - EPS * d)) * g) / (2 * EPS)
    analytic = np.sum(np.asarray(adjoint) * d)
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol,
                               err_msg=f"{fn} wrt {param}")
    return adjoint


def rand(rng, shape, low=-2.0, high=2.0):
    out = rng.uniform(low, high, size=shape)
    return out if shape else float(out)


def away_from_zero(rng, shape, low=0.5, high=2.0):
    out = rng.uniform(low, high, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    return out if shape else float(out)


pairs = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4)
seeds = st.integers(0, 2**31 - 1)


# --- arithmetic ------------------------------------------------------------------

@pytest.mark.parametrize("fn", [np.add, np.subtract, np.multiply, np.divide, np.maximum,
                                np.minimum, np.power])
@SETTINGS
@given(shapes=pairs, seed=seeds)
def test_binary_broadcasting(fn, shapes, seed):
    rng = np.random.default_rng(seed)
    s1, s2 = shapes.input_shapes
    x1, x2 = rand(rng, s1), rand(rng, s2)
    if fn is np.divide:
        x2 = away_from_zero(rng, s2)
    if fn is np.power:
        x1, x2 = rand(rng, s1, 0.5, 2.0), rand(rng, s2)
    check(fn, [x1, x2], param="x1", where=0, rng=rng)
    check(fn, [x1, x2], param="x2", where=1, rng=rng)


def test_true_divide_is_divide_rule():
    assert lookup(np.true_divide) is lookup(np.divide)


@pytest.mark.parametrize("p", [0, 1, 2, 3, 4, -1, -2, 2.0, 3.0])
def test_power_constant_exponent_negative_and_zero_bases(p):
    x = np.array([-3.0, -1.5, 0.0, 0.7, 2.0]) if p >= 0 else np.array([-3.0, -1.5, 0.7, 2.0])
    ans = x ** p
    adj = evaluate(np.power, "x1", np.ones_like(x), ans, [x, p])
    expected = p * x ** (p - 1) if p != 0 else np.zeros_like(x)
    assert np.all(np.isfinite(adj))
    np.testing.assert_allclose(adj, expected)
    check(np.power, [x[x != 0] if p < 2 else x, p], param="x1")


def test_power_exponent_adjoint_uses_log_only_for_positive_base():
    x1, x2 = np.array([-2.0, 0.0, 3.0]), np.array([2.0, 2.0, 2.0])
    adj = evaluate(np.power, "x2", np.ones(3), x1 ** x2, [x1, x2])
    np.testing.assert_allclose(adj, [0.0, 0.0, 9.0 * np.log(3.0)])


def test_power_array_exponent_zero_is_not_nan():
    x1, x2 = np.array([0.0, 2.0]), np.array([0.0, 0.0])
    adj = evaluate(np.power, "x1", np.ones(2), x1 ** x2, [x1, x2])
    np.testing.assert_array_equal(adj, [0.0, 0.0])


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3), seed=seeds)
def test_where(shapes, seed):
    rng = np.random.default_rng(seed)
    sc, sx, sy = shapes.input_shapes
    cond = rng.random(sc) > 0.5
    x, y = rand(rng, sx), rand(rng, sy)
    check(np.where, [cond, x, y], param="x", where=1, rng=rng)
    check(np.where, [cond, x, y], param="y", where=2, rng=rng)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=2, max_side=4), seed=seeds)
def test_clip(shapes, seed):
    rng = np.random.default_rng(seed)
    sa, slo, shi = shapes.input_shapes
    a = rand(rng, sa, -3.0, 3.0)
    lo, hi = rand(rng, slo, -1.5, -0.1), rand(rng, shi, 0.1, 1.5)
    for param, where in (("a", 0), ("a_min", 1), ("a_max", 2)):
        check(np.clip, [a, lo, hi], param=param, where=where, rng=rng)
    if not NUMPY_2_1:   # np.clip(a, min=, max=) is new in NumPy 2.1
        return
    for param, where in (("a", 0), ("min", "min"), ("max", "max")):
        check(np.clip, [a], {"min": lo, "max": hi}, param=param, where=where, rng=rng)


def test_clip_one_sided_and_boundaries():
    a = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    g = np.ones(5)
    np.testing.assert_array_equal(
        evaluate(np.clip, "a", g, np.clip(a, None, 1.0), [a, None, 1.0]), [1, 1, 1, 1, 0])
    np.testing.assert_array_equal(
        evaluate(np.clip, "a", g, np.clip(a, -1.0, 1.0), [a, -1.0, 1.0]), [0, 1, 1, 1, 0])
    assert evaluate(np.clip, "a_max", g, np.clip(a, -1.0, 1.0), [a, -1.0, 1.0]) == 1.0
    assert evaluate(np.clip, "a_min", g, np.clip(a, None, 1.0), [a, None, 1.0]) == 0.0


def test_maximum_minimum_ties_split_evenly():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])
    g = np.ones(3)
    for fn, ex, ey in ((np.maximum, [0.5, 0, 1], [0.5, 1, 0]),
                       (np.minimum, [0.5, 1, 0], [0.5, 0, 1])):
        ans = fn(x, y)
        np.testing.assert_array_equal(evaluate(fn, "x1", g, ans, [x, y]), ex)
        np.testing.assert_array_equal(evaluate(fn, "x2", g, ans, [x, y]), ey)
    # broadcast scalar against a tie
    np.testing.assert_allclose(evaluate(np.maximum, "x2", g, np.maximum(x, 2.0), [x, 2.0]), 1.5)


@pytest.mark.parametrize("fn, args, param", [
    (np.maximum, lambda x: [x, 0.0], "x1"), (np.minimum, lambda x: [-x, 0.0], "x1"),
    (np.fmax, lambda x: [x, 0.0], "x1"), (np.maximum, lambda x: [0.0, x], "x2"),
    (np.clip, lambda x: [x, 0.0, None], "a"), (np.clip, lambda x: [x, 0.0, 1.5], "a"),
])
def test_an_infinite_adjoint_reaches_no_argument_that_was_not_selected(fn, args, param):
    """sqrt(maximum(x, 0)) at x < 0: the max gives 0, sqrt's adjoint there is
    infinite, and g * mask made 0 * inf = nan where the function is constant in x
    (its derivative 0, as np.where(x > 0, x, 0) gave)."""
    x = np.array([-1.0, 0.5, -2.0, 1.2])
    ans = fn(*args(x))
    g = np.where(ans == 0.0, np.inf, 1.0)
    got = evaluate(fn, param, g, ans, args(x))
    selected = ans != 0.0
    np.testing.assert_array_equal(got, np.where(selected, g, 0.0))


# --- elementwise -----------------------------------------------------------------

UNARY = [
    (np.negative, None), (np.square, None), (np.reciprocal, "nonzero"), (np.sqrt, "pos"),
    (np.exp, None), (np.expm1, None), (np.exp2, None), (np.log, "pos"), (np.log1p, "pos"),
    (np.log2, "pos"), (np.log10, "pos"), (np.sin, None), (np.cos, None), (np.tan, "small"),
    (np.arcsin, "small"), (np.arccos, "small"), (np.arctan, None), (np.sinh, None),
    (np.cosh, None), (np.tanh, None), (np.absolute, "nonzero"), (builtins.abs, "nonzero"),
    (np.copy, None), (np.asarray, None), (np.array, None),
]


def test_float_of_size_one_array():
    for x in (np.array(1.5), np.float32(1.5), 1.5):
        check(float, [x], param="x")


@pytest.mark.parametrize("fn, domain", UNARY, ids=lambda v: getattr(v, "__name__", str(v)))
@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=3, max_side=4), seed=seeds)
def test_unary(fn, domain, shape, seed):
    rng = np.random.default_rng(seed)
    if domain == "pos":
        x = rand(rng, shape, 0.2, 3.0)
    elif domain == "nonzero":
        x = away_from_zero(rng, shape)
    elif domain == "small":
        x = rand(rng, shape, -0.9, 0.9)
    else:
        x = rand(rng, shape)
    if fn is builtins.abs or fn in (np.copy, np.asarray, np.array):
        x = np.asarray(x)
    param = lookup(fn).param_names[0]
    check(fn, [x], param=param, rng=rng)


def test_abs_and_constants_at_zero():
    x = np.array([-1.0, 0.0, 2.0])
    for fn in (np.abs, abs):
        np.testing.assert_array_equal(evaluate(fn, "x", np.ones(3), fn(x), [x]), [-1, 0, 1])
    for fn in (np.sign, np.floor, np.ceil, np.round, np.around):
        assert lookup(fn).constant and not lookup(fn).templates


# --- linear algebra ---------------------------------------------------------------

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((5, 2, 3), (3,)),
                 ((2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)),
                 ((4, 4), (4, 4, 4)), ((4,), (4, 4, 4))]


@pytest.mark.parametrize("s1, s2", MATMUL_SHAPES)
def test_matmul(s1, s2):
    rng = np.random.default_rng(1)
    x1, x2 = rng.standard_normal(s1), rng.standard_normal(s2)
    check(np.matmul, [x1, x2], param="x1", where=0)
    check(np.matmul, [x1, x2], param="x2", where=1)


DOT_SHAPES = [((), (3,)), ((2, 3), ()), ((), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
              ((2, 3), (3, 4)), ((2, 4, 3), (3,)), ((2, 4, 3), (5, 3, 2)), ((3,), (5, 3, 2)),
              ((2, 3), (4, 3, 2)), ((2, 4, 3), (3, 2))]


@pytest.mark.parametrize("s1, s2", DOT_SHAPES)
def test_dot(s1, s2):
    rng = np.random.default_rng(2)
    a, b = rand(rng, s1), rand(rng, s2)
    check(np.dot, [a, b], param="a", where=0)
    check(np.dot, [a, b], param="b", where=1)


@pytest.mark.parametrize("s1, s2", [((3,), (4,)), ((2, 3), (2, 2)), ((1,), (5,))])
def test_outer(s1, s2):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    check(np.outer, [a, b], param="a", where=0)
    check(np.outer, [a, b], param="b", where=1)


@pytest.mark.parametrize("shape, kwargs", [((4,), {}), ((3, 4), {}), ((3, 4), {"axis": 1}),
                                           ((3, 4), {"axis": 0, "keepdims": True}),
                                           ((3, 4), {"ord": "fro"}), ((4,), {"ord": 2}),
                                           ((2, 3, 4), {"axis": (1, 2)})])
def test_norm(shape, kwargs):
    check(np.linalg.norm, [np.random.default_rng(4).standard_normal(shape)], kwargs, param="x")


def test_norm_at_zero_is_zero():
    x = np.zeros(3)
    np.testing.assert_array_equal(evaluate(np.linalg.norm, "x", 1.0, 0.0, [x]), np.zeros(3))


# --- reductions --------------------------------------------------------------------

@st.composite
def shape_axis(draw):
    shape = draw(array_shapes(min_dims=1, max_dims=3, max_side=4))
    nd = len(shape)
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                          st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                   unique=True).map(tuple)))
    return shape, axis, draw(st.booleans())


@pytest.mark.parametrize("fn", [np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin])
@SETTINGS
@given(case=shape_axis(), seed=seeds)
def test_reductions(fn, case, seed):
    shape, axis, keepdims = case
    rng = np.random.default_rng(seed)
    a = away_from_zero(rng, shape, 0.5, 1.5) if fn is np.prod else rng.standard_normal(shape)
    check(fn, [a], {"axis": axis, "keepdims": keepdims}, param="a", rng=rng)


def test_reductions_positional_axis_and_keepdims():
    a = np.random.default_rng(5).standard_normal((3, 4))
    check(np.sum, [a, 1, None, None, True], param="a")
    check(np.mean, [a, (0, 1)], param="a")


@pytest.mark.parametrize("x", [[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 3.0], [[1.0, 0.0], [2.0, 3.0]],
                               [0.0]])
def test_prod_with_zeros(x):
    x = np.array(x)
    for axis in (None, -1):
        adj = check(np.prod, [x], {"axis": axis}, param="a")
        assert np.all(np.isfinite(adj))
    adj = evaluate(np.prod, "a", 1.0, np.prod(x), [x])
    zeros = x == 0
    if zeros.sum() == 1:
        np.testing.assert_allclose(adj[zeros], np.prod(x[~zeros]))
        np.testing.assert_array_equal(adj[~zeros], 0.0)


def test_max_min_ties_share_equally():
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    adj = evaluate(np.max, "a", 1.0, np.max(x), [x])
    np.testing.assert_allclose(adj, [[0, 0.5, 0.5], [0, 0, 0]])
    adj = evaluate(np.min, "a", np.array([1.0, 6.0]), np.min(x, axis=1), [x], {"axis": 1})
    np.testing.assert_allclose(adj, [[1, 0, 0], [2, 2, 2]])
    # NumPy 2 made np.max a function of its own (in 1.x it is np.amax): each has the row
    assert lookup(np.amax).templates and lookup(np.max).templates


@pytest.mark.parametrize("shape, axis", [((5,), None), ((3, 4), None), ((3, 4), 0),
                                         ((3, 4), -1), ((2, 3, 4), 1)])
def test_cumsum(shape, axis):
    check(np.cumsum, [np.random.default_rng(6).standard_normal(shape)], {"axis": axis},
          param="a")


# --- shape -----------------------------------------------------------------------

SHAPE_CASES = [
    (np.reshape, [(3, 4), (2, 6)], {}), (np.reshape, [(3, 4), -1], {}),
    (np.reshape, [(3, 4), (4, -1)], {"order": "F"}),
    *([(np.reshape, [(3, 4)], {"shape": (12,)})] if NUMPY_2_1 else []),  # new in NumPy 2.1
    (np.ravel, [(2, 3)], {}), (np.ravel, [(2, 3)], {"order": "F"}),
    (np.transpose, [(2, 3)], {}), (np.transpose, [(2, 3, 4)], {}),
    (np.transpose, [(2, 3, 4), (1, -1, 0)], {}), (np.transpose, [(2, 3, 4)], {"axes": (2, 0, 1)}),
    (np.swapaxes, [(2, 3, 4), 0, -1], {}), (np.moveaxis, [(2, 3, 4), 0, -1], {}),
    (np.expand_dims, [(2, 3), 1], {}), (np.expand_dims, [(2, 3), (0, -1)], {}),
    (np.squeeze, [(1, 3, 1)], {}), (np.squeeze, [(1, 3, 1)], {"axis": 0}),
    (np.broadcast_to, [(3, 1), (2, 3, 4)], {}), (np.flip, [(3, 4)], {}),
    (np.flip, [(3, 4), 1], {}), (np.roll, [(5,), 2], {}), (np.roll, [(3, 4), 1], {}),
    (np.roll, [(3, 4), (1, -2), (0, 1)], {}), (np.roll, [(3, 4), -1, 1], {}),
    (np.array, [(2, 3)], {"ndmin": 4}),
]


@pytest.mark.parametrize("fn, args, kwargs", SHAPE_CASES)
def test_shape_ops(fn, args, kwargs):
    x = np.random.default_rng(7).standard_normal(args[0])
    check(fn, [x] + args[1:], kwargs, param=lookup(fn).param_names[0])


# --- joining ---------------------------------------------------------------------

JOIN_CASES = [
    (np.concatenate, [(2, 3), (4, 3)], {}), (np.concatenate, [(2, 3), (2, 1), (2, 2)], {"axis": 1}),
    (np.concatenate, [(2, 3), (2, 1)], {"axis": -1}), (np.concatenate, [(2, 3), (5,)], {"axis": None}),
    (np.stack, [(2, 3), (2, 3), (2, 3)], {}), (np.stack, [(2, 3), (2, 3)], {"axis": -1}),
    (np.stack, [(2, 3), (2, 3)], {"axis": 1}),
    (np.hstack, [(3,), (2,), ()], {}), (np.hstack, [(2, 3), (2, 1)], {}),
    (np.vstack, [(3,), (3,)], {}), (np.vstack, [(2, 3), (1, 3), (3,)], {}),
]


@pytest.mark.parametrize("fn, shapes, kwargs", JOIN_CASES)
def test_joining(fn, shapes, kwargs):
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s) for s in shapes]
    param = lookup(fn).param_names[0]
    assert param in lookup(fn).sequence_params
    for i in range(len(arrays)):
        check(fn, [arrays], kwargs, param=param, where=0, index=i, rng=rng)


# --- indexing --------------------------------------------------------------------

INDICES = [
    1, -1, slice(1, 3), slice(None, None, -2), (1, 2), (slice(None), 0), Ellipsis,
    (Ellipsis, 1), None, (None, 1), (Ellipsis, None, 0), np.array([0, 2, 0, 0]),
    [1, 1], (np.array([0, 1, 1]), np.array([2, 2, 2])), (slice(None), np.array([3, 3, 0])),
    (np.array([[0], [2]]), slice(1, 3)), "mask", ("mask0", slice(None)), (0, "mask1"),
]


def _index(spec, x):
    if isinstance(spec, str):
        rng = np.random.default_rng(9)
        if spec == "mask":
            return rng.random(x.shape) > 0.5
        if spec == "mask0":
            return rng.random(x.shape[0]) > 0.3
        return rng.random(x.shape[1]) > 0.3
    if isinstance(spec, tuple):
        return tuple(_index(k, x) if isinstance(k, str) else k for k in spec)
    return spec


@pytest.mark.parametrize("spec", INDICES, ids=repr)
def test_getitem(spec):
    x = np.random.default_rng(10).standard_normal((3, 4))
    check(operator.getitem, [x, _index(spec, x)], param="a")


def test_getitem_repeated_indices_accumulate():
    x = np.arange(4.0)
    adj = evaluate(operator.getitem, "a", np.ones(3), x[[1, 1, 3]], [x, [1, 1, 3]])
    np.testing.assert_array_equal(adj, [0, 2, 0, 1])


def test_getitem_of_tuple():
    adj = rt.getitem_adjoint(np.ones(2), (np.zeros(2), np.zeros(3)), 0)
    assert isinstance(adj, tuple) and adj[1] == 0.0 and adj[0].shape == (2,)


@pytest.mark.parametrize("spec", INDICES, ids=repr)
def test_accumulate_at_matches_getitem_adjoint(spec):
    x = np.random.default_rng(11).standard_normal((3, 4))
    index = _index(spec, x)
    g = np.random.default_rng(12).standard_normal(np.shape(x[index]))
    acc = rt.accumulate_at(0.0, x, index, g)
    np.testing.assert_allclose(acc, rt.getitem_adjoint(g, x, index))
    again = rt.accumulate_at(acc, x, index, g)
    assert again is acc                            # in place, O(size of g)
    np.testing.assert_allclose(again, 2 * rt.getitem_adjoint(g, x, index))


def test_accumulate_at_loop_read_and_zero_and_readonly():
    price = np.arange(5.0)
    acc = 0.0
    for t in range(5):
        acc = rt.accumulate_at(acc, price, t, 2.0 * t)
    np.testing.assert_array_equal(acc, 2.0 * price)
    assert rt.accumulate_at(0.0, price, 1, 0.0) == 0.0
    readonly = np.broadcast_to(1.0, (5,))
    out = rt.accumulate_at(readonly, price, 0, 1.0)
    np.testing.assert_array_equal(out, [2, 1, 1, 1, 1])
    np.testing.assert_array_equal(readonly, 1.0)


SETITEM = [(1, ()), (slice(1, 3), (2, 4)), (slice(1, 3), ()), (slice(None), (4,)),
           ((0, 2), ()), (np.array([0, 2]), (2, 4)), ((slice(None), np.array([1, 3])), (3, 1)),
           ("mask", ())]


@pytest.mark.parametrize("spec, vshape", SETITEM, ids=repr)
def test_setitem_adjoints(spec, vshape):
    rng = np.random.default_rng(13)
    x = rng.standard_normal((3, 4))
    index = _index(spec, x)
    v = rand(rng, vshape)

    def assign(x, v):
        y = np.array(x, copy=True)
        y[index] = v
        return y

    g = rng.standard_normal((3, 4))
    g_before = g.copy()
    gv = rt.setitem_adjoint_value(g, index, v)
    gx = rt.setitem_adjoint_array(g, index)
    np.testing.assert_array_equal(g, g_before)     # g is not mutated
    assert np.shape(gv) == np.shape(v) and gx.shape == x.shape and gx is not g
    for arg, adjoint in ((0, gx), (1, gv)):
        base = np.asarray([x, v][arg], dtype=float)
        d = rng.standard_normal(base.shape)

        def f(w):
            args = [x, v]
            args[arg] = w if base.ndim else float(w)
            return assign(*args)

        numeric = np.sum((f(base + EPS * d) - f(base - EPS * d)) * g) / (2 * EPS)
        np.testing.assert_allclose(np.sum(adjoint * d), numeric, rtol=1e-6, atol=1e-8)
    assert rt.setitem_adjoint_value(0.0, index, v) == 0.0
    assert rt.setitem_adjoint_array(0.0, index) == 0.0


# --- dtypes, symbolic zero, immutability of helpers ---------------------------------

F32_CASES = [
    (np.add, [(3, 1), (4,)], "x1"), (np.multiply, [(3, 1), ()], "x2"), (np.divide, [(3,), (3,)], "x2"),
    (np.power, [(3,), ()], "x1"), (np.power, [(3,), (3,)], "x2"), (np.tanh, [(3,)], "x"),
    (np.log10, [(3,)], "x"), (np.exp2, [(3,)], "x"), (np.maximum, [(3,), (3,)], "x1"),
    (np.matmul, [(2, 3), (3, 4)], "x1"), (np.matmul, [(3,), (5, 3, 4)], "x2"),
    (np.dot, [(2, 3), (4, 3, 2)], "b"), (np.sum, [(3, 4)], "a"), (np.mean, [(3, 4)], "a"),
    (np.prod, [(3, 4)], "a"), (np.max, [(3, 4)], "a"), (np.cumsum, [(3, 4)], "a"),
    (np.linalg.norm, [(3,)], "x"), (np.clip, [(3,), (), ()], "a"),
]


@pytest.mark.parametrize("fn, shapes, param", F32_CASES)
def test_float32_in_float32_out(fn, shapes, param):
    rng = np.random.default_rng(14)
    args = [rng.uniform(0.5, 1.5, s).astype(np.float32) if s else np.float32(1.3)
            for s in shapes]
    if fn is np.clip:
        args[1:] = [0.7, 1.2]
    ans = fn(*args)
    g = np.ones_like(ans)
    adj = evaluate(fn, param, g, ans, args)
    assert np.asarray(adj).dtype == np.float32, (fn, param, np.asarray(adj).dtype)
    if fn in (np.sum, np.mean, np.max, np.prod):    # a Python-float seed keeps float32 too
        assert evaluate(fn, param, 1.0, ans, args).dtype == np.float32


def _zero_g_cases():
    x = np.ones((2, 3))
    return [
        (np.power, "x1", [x, 3]), (np.power, "x2", [x, x]), (np.maximum, "x1", [x, x]),
        (np.clip, "a", [x, 0.0, 1.0]), (np.matmul, "x1", [x, x.T]), (np.matmul, "x2", [x, x.T]),
        (np.dot, "a", [x, x.T]), (np.outer, "b", [x, x]), (np.sum, "a", [x]), (np.mean, "a", [x]),
        (np.prod, "a", [x]), (np.max, "a", [x]), (np.cumsum, "a", [x]), (np.reshape, "a", [x, -1]),
        (np.transpose, "a", [x]), (np.concatenate, "arrays", [[x, x]]),
        (np.stack, "arrays", [[x, x]]), (operator.getitem, "a", [x, 0]), (np.add, "x1", [x, x]),
        (np.linalg.norm, "x", [x]),
    ]


@pytest.mark.parametrize("fn, param, args", _zero_g_cases())
def test_symbolic_zero_g(fn, param, args):
    ans = fn(*args)
    adj = evaluate(fn, param, 0.0, ans, args, index=0)
    assert np.all(np.asarray(adj) == 0)
    np.broadcast_to(adj, np.shape(args[0][0] if param == "arrays" else args[0]))


def test_unbroadcast_returns_g_itself_when_shapes_match():
    g = np.ones((3, 4))
    assert rt.unbroadcast(g, np.zeros((3, 4))) is g
    assert rt.matmul_adjoint_x1(g, np.zeros((3, 5)), np.zeros((5, 4))).shape == (3, 5)


def test_as_gradient_copies_readonly_views():
    view = rt.repeat_to_match(1.0, np.zeros((20, 30)))
    assert not view.flags.writeable
    out = rt.as_gradient(view, np.zeros((20, 30)))
    assert out.flags.writeable and out.shape == (20, 30)


def test_repeat_to_match_fills_a_small_array_and_views_a_large_one():
    for shape in ((4,), (2, 3), (20, 30)):
        for g, x in ((2.0, np.zeros(shape, np.float32)), (np.float64(2.0), np.zeros(shape)),
                     (np.full((1,) * len(shape), 2.0), np.zeros(shape))):
            out = rt.repeat_to_match(g, x, None, np.ndim(g) > 0)
            assert out.shape == shape and out.dtype == x.dtype and np.all(out == 2.0)
            assert out.flags.writeable == (x.size <= 256)


# --- coverage and docs ------------------------------------------------------------

REQUIRED = [
    np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.power, np.negative,
    np.square, np.sqrt, np.exp, np.expm1, np.log, np.log1p, np.sin, np.cos, np.tan, np.tanh,
    np.arctan, np.sinh, np.cosh, np.abs, np.absolute, builtins.abs, np.sign, np.maximum,
    np.minimum, np.where, np.clip, np.dot, np.matmul, np.outer, np.sum, np.mean, np.prod,
    np.max, np.min, np.amax, np.amin, np.reshape, np.transpose, np.swapaxes, np.expand_dims,
    np.squeeze, np.concatenate, np.stack, np.hstack, np.vstack, np.roll, np.cumsum, np.copy,
    np.asarray, np.array, operator.getitem, np.zeros, np.ones, np.zeros_like, np.ones_like,
    np.full, np.full_like, np.arange, np.linspace, np.eye, np.shape, np.ndim, np.size,
    builtins.len, np.argmax, np.argmin, np.floor, np.ceil, np.round, np.around,
    np.arcsin, np.arccos, np.log10, np.log2, np.exp2, np.reciprocal, np.linalg.norm,
]


@pytest.mark.parametrize("fn", REQUIRED, ids=lambda f: getattr(f, "__name__", repr(f)))
def test_required_function_has_rule(fn):
    rule = lookup(fn)
    assert rule is not None
    assert rule.constant or rule.templates


def test_constants_have_no_adjoint():
    for fn in (np.zeros, np.argmax, np.sign, np.floor, len, np.shape):
        rule = lookup(fn)
        assert rule.constant and rule.differentiable_params() == []
    lookup(np.zeros).bind([3], {"dtype": np.float32})       # constants bind any call


def test_docs_table_is_current():
    pytest.importorskip("scipy")       # the page lists the scipy.special rules too
    path = Path(__file__).resolve().parents[1] / "docs" / "supported_ops.md"
    rendered_under = f"under NumPy {ops_table.rendering_numpy()};"
    if rendered_under not in path.read_text():
        # the page is rendered under one NumPy (its aliases and rows differ by release);
        # under the others test_docs_list_every_numpy_rule checks each row is named
        pytest.skip("docs/supported_ops.md is rendered under another NumPy release")
    assert path.read_text() == ops_table.render_table(), (
        "regenerate: python -m tangent_ckpt.adjoints.ops_table > docs/supported_ops.md")


def test_docs_list_every_numpy_rule():
    from tangent_ckpt.adjoints import numpy_rules
    text = (Path(__file__).resolve().parents[1] / "docs" / "supported_ops.md").read_text()
    for fns in numpy_rules.SECTIONS.values():
        for fn in fns:
            assert any(f"`{name}`" in text for name in ops_table._aliases(fn)), fn


def test_every_numpy_rule_is_in_a_docs_section():
    from tangent_ckpt.adjoints import numpy_rules
    listed = [fn for fns in numpy_rules.SECTIONS.values() for fn in fns]
    assert len(listed) == len(set(map(id, listed)))
    for fn in REQUIRED:
        assert any(fn is f for f in listed), fn


@settings(max_examples=60, deadline=None)
@given(mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
def test_unbroadcast_sums_to_every_broadcastable_shape(shapes):
    a_shape, b_shape = shapes.input_shapes
    g = np.arange(np.prod(shapes.result_shape), dtype=float).reshape(shapes.result_shape) + 1
    for shape in (a_shape, b_shape):
        x = np.zeros(shape)
        expected = np.sum(g, axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and expected.shape[i] != 1)
        expected = np.sum(expected, axis=axes, keepdims=True) if axes else expected
        for target in (x, rt.shape_of(x)):
            got = rt.unbroadcast(g, target)
            assert got.shape == shape if shape else np.ndim(got) == 0
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("g_shape, x_shape", [((2,), (1, 2)), ((2,), (1, 1, 2)),
                                              ((3, 2), (1, 3, 2)), ((), (1, 1)),
                                              ((3,), (1, 1)), ((2, 3), (1, 2, 1))])
def test_unbroadcast_gives_the_leading_axes_of_length_one_g_lacks(g_shape, x_shape):
    """``x[t] = v`` with ``v`` of shape (1, k) into a row of shape (k,): NumPy
    drops ``v``'s leading axes of length 1, so the adjoint of the row is ``v``'s
    reshaped (it summed along the wrong axis: [3, 3] for [1, 2])."""
    g = np.arange(1.0, 1.0 + np.prod(g_shape)).reshape(g_shape)
    got = rt.unbroadcast(g, np.zeros(x_shape))
    assert got.shape == x_shape
    # g with x's leading ones, summed over the axes x was broadcast along
    aligned = g.reshape((1,) * (len(x_shape) - len(g_shape)) + g_shape)
    axes = tuple(i for i, (n, m) in enumerate(zip(x_shape, aligned.shape)) if n == 1 != m)
    np.testing.assert_array_equal(got, aligned.sum(axis=axes, keepdims=True))


@settings(max_examples=60, deadline=None)
@given(mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
def test_broadcast_shape_is_the_shape_of_an_elementwise_result(shapes):
    a, b = (np.zeros(s) for s in shapes.input_shapes)
    assert rt.broadcast_shape(a, b).shape == (a + b).shape
    assert rt.broadcast_shape(rt.shape_of(a), 2.0).shape == a.shape
    assert rt.broadcast_shape(a).shape == np.tanh(a).shape


@pytest.mark.parametrize("a,b", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                 ((5, 2, 3), (3, 4)), ((1, 2, 3), (5, 3, 4)), ((3,), (5, 3, 4))])
def test_matmul_shape_agrees_with_matmul(a, b):
    x, y = np.ones(a), np.ones(b)
    assert rt.matmul_shape(x, y).shape == np.shape(x @ y)
    assert rt.matmul_shape(rt.shape_of(x), rt.shape_of(y)).shape == np.shape(x @ y)


def test_matmul_shape_rejects_what_matmul_rejects():
    with pytest.raises(ValueError, match="core dimension"):
        rt.matmul_shape(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="dimensions"):
        rt.matmul_shape(np.ones(()), np.ones(3))


def test_product_sum_equals_the_sum_of_products():
    r = np.random.default_rng(5)
    dense = r.normal(size=(64, 48))
    expected = dense.copy()
    acc = dense.copy()
    for m in (8, 8, 3, 8, 40, 8, 8, 8, 8, 8, 1):  # 40 rows: more than the buffers hold
        a, g, w = r.normal(size=(m, 64)), r.normal(size=(m, 48)), r.normal(size=(64, 48))
        expected += a.T @ g
        acc = rt.accumulate_matmul_adjoint_x2(acc, g, a, w)
        assert type(acc) is rt.ProductSum
    acc += np.ones(48)  # another contribution to the same adjoint
    expected += np.ones(48)
    acc = rt.accumulate_at(acc, w, 3, np.full(48, 2.0))  # and a read of one row
    expected[3] += 2.0
    out = rt.settled((acc, [acc], 1.0))
    np.testing.assert_allclose(out[0], expected, rtol=1e-13, atol=1e-12)
    assert out[1][0] is out[0] and out[2] == 1.0


def test_product_sum_only_where_gathering_pays():
    r = np.random.default_rng(6)
    w = r.normal(size=(4, 4))
    for a, g, acc in [(r.normal(size=(3, 4)), r.normal(size=(3, 4)), np.zeros((4, 4))),  # tiny W
                      (r.normal(size=(200, 4)), r.normal(size=(200, 4)), np.zeros((4, 4))),
                      (r.normal(size=(3, 4)), r.normal(size=(3, 4)), 0.0)]:
        out = rt.accumulate_matmul_adjoint_x2(acc, g, a, w)
        assert type(out) is not rt.ProductSum
        np.testing.assert_allclose(out, a.T @ g)
    assert rt.accumulate_matmul_adjoint_x2(np.ones((4, 4)), 0.0, a, w) is not None
    # buffers never hold more bytes than the accumulator
    big = rt.accumulate_matmul_adjoint_x2(np.zeros((16, 1024)), r.normal(size=(2, 1024)),
                                          r.normal(size=(2, 16)), np.zeros((16, 1024)))
    if type(big) is rt.ProductSum:
        assert big._a.nbytes + big._g.nbytes <= big.dense.nbytes


def test_overwritten_keeps_a_copy_unless_every_element_is_a_positive_zero():
    for region, zero in ((np.zeros(4), True), (np.array([0.0, 0.0, 2.0]), False),
                         (np.array([3.0, 0.0]), False), (np.array([0.0, -0.0]), False),
                         (np.array([np.nan, 0.0]), False), (np.zeros(3, complex), True),
                         (np.array([[1.0, 2.0], [0.0, 4.0]])[:, 0], False)):
        kept = rt.overwritten(region)
        if zero:
            assert np.ndim(kept) == 0 and kept == 0 and kept.dtype == region.dtype
        else:
            assert isinstance(kept, np.ndarray) and kept is not region
            np.testing.assert_array_equal(kept, region)
            assert np.array_equal(np.signbit(kept), np.signbit(region))


def test_broadcast_shape_and_setitem_adjoint_value_on_their_fast_paths():
    a, b = np.zeros((3, 4)), np.zeros(4)
    assert rt.broadcast_shape(a, a).shape == (3, 4)
    assert rt.broadcast_shape(a, b, 2.0).shape == (3, 4)
    assert rt.broadcast_shape(2.0, 3.0).shape == ()
    g = np.arange(6.0)
    same = rt.setitem_adjoint_value(g, np.s_[1:-1], np.zeros(4))
    np.testing.assert_array_equal(same, g[1:-1])
    assert not np.shares_memory(same, g)
    np.testing.assert_array_equal(rt.setitem_adjoint_value(g, np.s_[1:-1], np.zeros(1)), [10.0])
    assert rt.setitem_adjoint_value(g, np.s_[1:-1], 3.0) == 10.0


# --- np.gradient over several axes, np.repeat with empty groups (#28) --------------------
import tangent_ckpt as tc  # noqa: E402
from gradcheck import check_grad  # noqa: E402


def gradient_of_both_axes(x):
    gy, gx = np.gradient(x)
    return np.sum(gy * gx) + np.sum(gx ** 2)


def gradient_with_spacings(x):
    derivatives = np.gradient(x, 0.5, 2.0, edge_order=2)
    return np.sum(np.sin(derivatives[1]))


def gradient_on_axes_tuple(x):
    d0, d2 = np.gradient(x, axis=(0, 2))
    return np.sum(d0 * d2)


def gradient_with_coordinates(x, ys, xs):
    dy, dx = np.gradient(x, ys, xs)
    return np.sum(dy ** 2 + np.cos(dx))


def gradient_in_a_loop(u, n):
    for t in range(n):
        gy, gx = np.gradient(u)
        u = u + 0.1 * np.tanh(gy - gx)
    return np.sum(u ** 2)


@pytest.mark.parametrize("fn, shape", [(gradient_of_both_axes, (4, 5)),
                                       (gradient_with_spacings, (5, 4)),
                                       (gradient_on_axes_tuple, (3, 2, 4))])
def test_np_gradient_over_several_axes(fn, shape):
    check_grad(fn, (np.random.default_rng(5).normal(size=shape),))


def test_np_gradient_with_coordinate_arrays():
    rng = np.random.default_rng(6)
    ys, xs = np.cumsum(rng.uniform(0.5, 1.5, 4)), np.cumsum(rng.uniform(0.5, 1.5, 5))
    check_grad(gradient_with_coordinates, (rng.normal(size=(4, 5)), ys, xs))


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2},
                                     {"checkpoint": True, "memory_budget": "100KB"}])
def test_np_gradient_over_several_axes_in_a_loop(options):
    u = np.random.default_rng(7).normal(size=(4, 4))
    got = check_grad(gradient_in_a_loop, (u, 5), df=tc.grad(gradient_in_a_loop, **options))
    np.testing.assert_allclose(got[0], tc.grad(gradient_in_a_loop)(u, 5), rtol=1e-12)


def repeat_zero_times(x):
    return np.sum(np.repeat(x, 0, axis=0) ** 2) + np.sum(x)


def repeat_with_empty_groups(x):
    return np.sum(np.repeat(x, [1, 0, 2], axis=1) ** 2)


def repeat_last_group_empty(x):
    return np.sum(np.repeat(x, [2, 0], axis=0) ** 3)


def repeat_flat_none(x):
    return np.sum(np.repeat(x, 0)) + np.sum(x ** 2)


@pytest.mark.parametrize("fn, shape", [(repeat_zero_times, (3, 2)), (repeat_zero_times, (0, 2)),
                                       (repeat_with_empty_groups, (2, 3)),
                                       (repeat_with_empty_groups, (0, 3)),
                                       (repeat_last_group_empty, (2, 3)),
                                       (repeat_last_group_empty, (2, 0)),
                                       (repeat_flat_none, (2, 3))])
def test_np_repeat_with_empty_groups_and_empty_dimensions(fn, shape):
    check_grad(fn, (np.random.default_rng(8).normal(size=shape),))


# A ufunc's accumulate (np.maximum.accumulate: a running maximum, a drawdown's peak),
# math.fsum, math.prod and math.copysign: refused as 'no adjoint rule' before.

def running_peak_loss(x):
    peak = np.maximum.accumulate(x)
    return np.sum((peak - x) ** 2)


def running_trough_by_rows(x):
    return np.sum(np.minimum.accumulate(x, axis=1) * np.cos(x))


def running_sum_and_product(x):
    return np.sum(np.add.accumulate(x, 1) * np.multiply.accumulate(x, axis=0))


def running_peak_in_a_loop(x):
    s = x * 0.0
    for t in range(4):
        s = np.maximum.accumulate(np.tanh(s + x * (t - 1.5)), axis=-1)
    return np.sum(s ** 2)


def math_sums_and_products(x):
    a, b = x[0], x[1]
    return math.fsum([a * b, a, 3.0]) * math.prod([a, b * 2.0, 0.5]) + \
        math.copysign(a, -1.0) * math.prod(x) + math.fsum(x)


def segment_sums(x):
    sums = np.add.reduceat(x, [0, 3, 1, 4], axis=1)   # 3 > 1: that output is x[:, 3]
    return np.sum(sums ** 2 * np.arange(4.0))


def grid_potential(x):
    X, Y = np.meshgrid(x[:3], x * 2.0)
    P, Q, R = np.meshgrid(x, x[1:], x[:2], indexing="ij")
    return np.sum(np.sin(X) * Y ** 2) + np.sum(P * Q * R ** 2)


ACCUMULATING = [(running_peak_loss, (6,)), (running_trough_by_rows, (2, 5)), (segment_sums, (2, 6)),
                (grid_potential, (4,)),
                (running_sum_and_product, (3, 4)), (running_peak_in_a_loop, (2, 5)),
                (math_sums_and_products, (3,))]


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
@pytest.mark.parametrize("fn, shape", ACCUMULATING, ids=[f.__name__ for f, _ in ACCUMULATING])
def test_ufunc_accumulate_and_math_sums_and_products_get_the_exact_gradient(fn, shape, options):
    x = np.random.default_rng(9).normal(size=shape)
    df = tc.grad(fn, **options)
    check_grad(fn, (x,), df=df)


def test_a_running_maximum_reads_as_numpy_in_the_generated_code():
    df = tc.grad(running_peak_loss)
    df(np.arange(4.0))
    assert "np.maximum.accumulate(x)" in df.source, df.source
    assert "rt.running_extremum_adjoint(" in df.source, df.source


def test_accumulate_over_no_axis_or_a_scalar_raises_as_python_does():
    for fn, x in ((lambda x: np.sum(np.add.accumulate(x, axis=None)), np.ones((2, 2))),
                  (lambda x: np.sum(np.maximum.accumulate(x[0, 0])), np.ones((2, 2)))):
        with pytest.raises(Exception) as python:
            fn(x)
        with pytest.raises(type(python.value), match=str(python.value)):
            tc.grad(fn)(x)


def test_the_running_extremum_adjoint_splits_a_tie_as_np_maximum_does():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    ans = np.maximum.accumulate(x)
    got = rt.running_extremum_adjoint(np.ones(4), x, ans, 0)
    # ans = [1, 3, 3, 3]: step 3 keeps 3; step 2's maximum(3, 3) is a tie, half to x[2]
    np.testing.assert_allclose(got, [1.0, 2.0, 1.0, 0.0])
    assert np.sum(got) == 4.0
