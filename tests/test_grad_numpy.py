"""Every NumPy adjoint rule, used inside a whole ``grad`` program, vs finite differences.

Each program below exercises one rule (the dict maps rule -> program); a test
checks that every differentiable rule of the registry has one.  Binary
elementwise rules run over hypothesis-drawn broadcasting shapes.
"""

import builtins
import operator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tangent_ckpt as tc
from tangent_ckpt.adjoints import registry
from gradcheck import check_grad


def p_add(a, b): return np.sum(np.sin(a + b))                    # noqa: E704
def p_subtract(a, b): return np.sum(np.sin(a - b))               # noqa: E704
def p_multiply(a, b): return np.sum(np.sin(a * b))               # noqa: E704
def p_divide(a, b): return np.sum(a / (b * b + 1.0))             # noqa: E704
def p_power(a, b): return np.sum((a * a + 0.5) ** (b * 0.5))     # noqa: E704
def p_maximum(a, b): return np.sum(np.maximum(a, b * 0.7) ** 2)  # noqa: E704
def p_minimum(a, b): return np.sum(np.minimum(a, b * 0.7) ** 2)  # noqa: E704
def p_where(a, b): return np.sum(np.where(a > 0.1, a * b, b) ** 2)  # noqa: E704


BINARY = {np.add: p_add, np.subtract: p_subtract, np.multiply: p_multiply,
          np.divide: p_divide, np.power: p_power, np.maximum: p_maximum,
          np.minimum: p_minimum, np.where: p_where}


def p_negative(x): return np.sum(np.sin(-x))                     # noqa: E704
def p_square(x): return np.sum(np.square(x) * x)                  # noqa: E704
def p_reciprocal(x): return np.sum(np.reciprocal(x * x + 1.0))    # noqa: E704
def p_clip(x): return np.sum(np.clip(x, -0.5, 0.5) * x)           # noqa: E704
def p_sqrt(x): return np.sum(np.sqrt(x * x + 1.0))                # noqa: E704
def p_exp(x): return np.sum(np.exp(x))                            # noqa: E704
def p_expm1(x): return np.sum(np.expm1(x))                        # noqa: E704
def p_exp2(x): return np.sum(np.exp2(x))                          # noqa: E704
def p_log(x): return np.sum(np.log(x * x + 1.0))                  # noqa: E704
def p_log1p(x): return np.sum(np.log1p(x * x))                    # noqa: E704
def p_log2(x): return np.sum(np.log2(x * x + 1.0))                # noqa: E704
def p_log10(x): return np.sum(np.log10(x * x + 1.0))              # noqa: E704
def p_sin(x): return np.sum(np.sin(x))                            # noqa: E704
def p_cos(x): return np.sum(np.cos(x))                            # noqa: E704
def p_tan(x): return np.sum(np.tan(x * 0.5))                      # noqa: E704
def p_arcsin(x): return np.sum(np.arcsin(np.tanh(x) * 0.9))       # noqa: E704
def p_arccos(x): return np.sum(np.arccos(np.tanh(x) * 0.9))       # noqa: E704
def p_arctan(x): return np.sum(np.arctan(x))                      # noqa: E704
def p_sinh(x): return np.sum(np.sinh(x))                          # noqa: E704
def p_cosh(x): return np.sum(np.cosh(x))                          # noqa: E704
def p_tanh(x): return np.sum(np.tanh(x))                          # noqa: E704
def p_absolute(x): return np.sum(np.abs(x) * x)                   # noqa: E704
def p_abs(x): return np.sum(abs(x) * x)                           # noqa: E704
def p_matmul(x): return np.sum(np.sin(x @ x.T))                   # noqa: E704
def p_dot(x): return np.sum(np.dot(x, x.T[:, 0]))                 # noqa: E704
def p_outer(x): return np.sum(np.sin(np.outer(x[0], x[1])))       # noqa: E704
def p_norm(x): return np.linalg.norm(x) + np.sum(np.linalg.norm(x, axis=1))  # noqa: E704
def p_sum(x): return np.sum(np.sin(np.sum(x, axis=0)))            # noqa: E704
def p_mean(x): return np.sum(np.sin(np.mean(x, axis=1)))          # noqa: E704
def p_prod(x): return np.sum(np.prod(x, axis=0))                  # noqa: E704
def p_max(x): return np.sum(np.max(x, axis=1)) + np.max(x)        # noqa: E704
def p_min(x): return np.sum(np.min(x, axis=0)) + np.min(x)        # noqa: E704
def p_amax(x): return np.sum(np.amax(x, axis=0))                  # noqa: E704
def p_amin(x): return np.sum(np.amin(x, axis=1))                  # noqa: E704
def p_cumsum(x): return np.sum(np.sin(np.cumsum(x, axis=1)))      # noqa: E704
def p_reshape(x): return np.sum(np.sin(np.reshape(x, (-1,))) * np.arange(6.0))  # noqa: E704
def p_ravel(x): return np.sum(np.ravel(x) * np.arange(6.0))       # noqa: E704
def p_transpose(x): return np.sum(np.transpose(x) * np.arange(2.0))  # noqa: E704
def p_swapaxes(x): return np.sum(np.swapaxes(x, 0, 1) * np.arange(2.0))  # noqa: E704
def p_moveaxis(x): return np.sum(np.moveaxis(x, 0, 1) * np.arange(2.0))  # noqa: E704
def p_expand_dims(x): return np.sum(np.sin(np.expand_dims(x, 0)))  # noqa: E704
def p_squeeze(x): return np.sum(np.sin(np.squeeze(x[:1])))        # noqa: E704
def p_broadcast_to(x): return np.sum(np.sin(np.broadcast_to(x, (4, 2, 3))))  # noqa: E704
def p_flip(x): return np.sum(np.flip(x, 1) * np.arange(3.0))      # noqa: E704
def p_roll(x): return np.sum(np.roll(x, 1, 1) * np.arange(3.0))   # noqa: E704
def p_copy(x): return np.sum(np.copy(x) ** 2)                     # noqa: E704
def p_asarray(x): return np.sum(np.asarray(x) ** 2)               # noqa: E704
def p_float(x): return float(x[0, 1]) * 3.0 + np.sum(x)           # noqa: E704
def p_array(x): return np.sum(np.array(x, ndmin=3) ** 2)          # noqa: E704
def p_concatenate(x): return np.sum(np.concatenate((x, x * x), axis=1) * np.arange(6.0))  # noqa: E704
def p_stack(x): return np.sum(np.sin(np.stack([x, x * 2.0], axis=1)))  # noqa: E704
def p_hstack(x): return np.sum(np.hstack((x, np.sin(x))) * np.arange(6.0))  # noqa: E704
def p_vstack(x): return np.sum(np.vstack((x, np.sin(x))) * np.arange(3.0))  # noqa: E704
def p_getitem(x): return np.sum(x[1, ::-1] * x[:, 0:1]) + x[0, 2]  # noqa: E704


UNARY = {
    np.negative: p_negative, np.square: p_square, np.reciprocal: p_reciprocal,
    np.clip: p_clip, np.sqrt: p_sqrt, np.exp: p_exp, np.expm1: p_expm1, np.exp2: p_exp2,
    np.log: p_log, np.log1p: p_log1p, np.log2: p_log2, np.log10: p_log10, np.sin: p_sin,
    np.cos: p_cos, np.tan: p_tan, np.arcsin: p_arcsin, np.arccos: p_arccos,
    np.arctan: p_arctan, np.sinh: p_sinh, np.cosh: p_cosh, np.tanh: p_tanh,
    np.absolute: p_absolute, builtins.abs: p_abs, np.matmul: p_matmul, np.dot: p_dot,
    np.outer: p_outer, np.linalg.norm: p_norm, np.sum: p_sum, np.mean: p_mean,
    np.prod: p_prod, np.max: p_max, np.min: p_min, np.amax: p_amax, np.amin: p_amin,
    np.cumsum: p_cumsum, np.reshape: p_reshape, np.ravel: p_ravel,
    np.transpose: p_transpose, np.swapaxes: p_swapaxes, np.moveaxis: p_moveaxis,
    np.expand_dims: p_expand_dims, np.squeeze: p_squeeze, np.broadcast_to: p_broadcast_to,
    np.flip: p_flip, np.roll: p_roll, np.copy: p_copy, np.asarray: p_asarray,
    builtins.float: p_float, np.array: p_array, np.concatenate: p_concatenate,
    np.stack: p_stack, np.hstack: p_hstack, np.vstack: p_vstack,
    operator.getitem: p_getitem,
}


@pytest.mark.parametrize("fn", list(UNARY), ids=lambda f: getattr(f, "__name__", str(f)))
def test_unary_rule_in_a_program(fn):
    x = np.random.default_rng(3).uniform(-0.9, 0.9, (2, 3))
    check_grad(UNARY[fn], (x,))


shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)


@pytest.mark.parametrize("fn", list(BINARY), ids=lambda f: f.__name__)
@settings(max_examples=12, deadline=None)
@given(shapes=shapes, seed=st.integers(0, 2 ** 16))
def test_binary_rule_over_broadcasting_shapes(fn, shapes, seed):
    rng = np.random.default_rng(seed)
    a_shape, b_shape = shapes.input_shapes
    a = rng.uniform(0.2, 1.0, a_shape) * rng.choice([-1.0, 1.0], a_shape)
    b = rng.uniform(0.2, 1.0, b_shape) * rng.choice([-1.0, 1.0], b_shape)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    check_grad(BINARY[fn], (a, b), wrt=(0, 1), rtol=1e-5, atol=1e-7)


# --- regressions: these gradients were silently wrong (zero) or crashed ----------------

def r_mod(x, y): return np.sum(x % y)                               # noqa: E704
def r_mod_fn(x, y): return np.sum(np.mod(x, y) * np.remainder(y, 0.7))  # noqa: E704
def r_row(x, y): return np.sum(np.r_[x, y, 2.0] ** 2)                # noqa: E704
def r_column(x, y): return np.sum(np.c_[x, y] ** 2 * np.arange(1.0, 3.0))  # noqa: E704
def r_linspace(x, y): return np.sum(np.linspace(x, y, 5) ** 2)       # noqa: E704
def r_vstack_one(x, y): return np.sum(np.vstack(x) ** 2 * y)         # noqa: E704
def r_hstack_one(x, y): return np.sum(np.hstack(x) * np.arange(6.0) * y)  # noqa: E704
def r_norm3(x, y): return np.linalg.norm(x, ord=3) * y               # noqa: E704
def r_norm4(x, y): return np.linalg.norm(x, 4) + np.linalg.norm(x, np.inf) * y  # noqa: E704
def r_norm_nuc(x, y): return np.linalg.norm(np.reshape(x, (2, 3)), 'nuc') * y  # noqa: E704


@pytest.mark.parametrize("fn", [r_mod, r_mod_fn, r_row, r_column, r_linspace],
                         ids=lambda f: f.__name__)
def test_formerly_constant_paths_match_finite_differences(fn):
    rng = np.random.default_rng(5)
    x, y = rng.uniform(1.0, 3.0, 4), rng.uniform(0.4, 0.9, 4)
    if fn is r_linspace:
        x, y = 0.3, 1.7
    grads = check_grad(fn, (x, y), wrt=(0, 1))
    assert all(np.any(np.asarray(g) != 0) for g in grads)       # not the old zero gradient


@pytest.mark.parametrize("fn", [r_vstack_one, r_hstack_one, r_norm3, r_norm4, r_norm_nuc],
                         ids=lambda f: f.__name__)
def test_formerly_crashing_calls_match_finite_differences(fn):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 2)) if "stack" in fn.__name__ else rng.standard_normal(6)
    check_grad(fn, (x, 1.3), wrt=(0, 1), rtol=1e-5)


def p_loop_over_list(x, y):
    total = 0.0
    for a in [x, y, x * y]:
        total = total + np.sum(np.sin(a) * a)
    return total


def test_loop_over_a_list_of_arrays():
    rng = np.random.default_rng(8)
    args = (rng.standard_normal(3), rng.standard_normal(3))
    check_grad(p_loop_over_list, args, wrt=(0, 1))
    check_grad(p_loop_over_list, args, wrt=(0, 1),
               df=tc.grad_with_checkpointing(p_loop_over_list, wrt=(0, 1), snapshots=1))


def quantiles_of(x):
    return np.sum(np.quantile(x, np.array([0.2, 0.8])))


def test_quantile_of_several_q_is_refused_when_the_gradient_runs():
    """The weights are written for one q; several would need one set each."""
    with pytest.raises(tc.TangentCkptError, match="one q"):
        tc.grad(quantiles_of)(np.arange(5.0))


def test_median_of_an_even_count_shares_the_adjoint_between_the_middle_two():
    g = tc.grad(lambda x: np.median(x))(np.array([4.0, 1.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.5, 0.5])


# methods of an array known at compile time (a module-level constant, an attribute of a
# module-level object) are their rows' functions, as for any array: A.dot(w) is np.dot(A, w)
CONST_A = np.linspace(0.5, 3.0, 6).reshape(3, 2)


class _Model:
    def __init__(self):
        self.W = np.linspace(-1.0, 1.0, 4).reshape(2, 2)


MODEL = _Model()


def c_dot(w): return np.sum(np.sin(CONST_A.dot(w)))                     # noqa: E704
def c_transposed_dot(w): return np.sum(CONST_A.T.dot(CONST_A.dot(w)) ** 2)  # noqa: E704
def c_object_dot(w): return np.sum(np.tanh(MODEL.W.dot(w)))              # noqa: E704
def c_clip(w): return np.sum(CONST_A.clip(w[0], w[1]) * w[0])            # noqa: E704
def c_sum(w): return CONST_A.sum(axis=0) @ (w * w)                       # noqa: E704
def c_reshape(w): return np.sum(CONST_A.reshape(2, 3) @ np.concatenate([w, w[:1]]))  # noqa: E704


@pytest.mark.parametrize("fn", [c_dot, c_transposed_dot, c_object_dot, c_clip, c_sum,
                                c_reshape], ids=lambda f: f.__name__)
def test_method_of_a_module_level_array_is_its_rule(fn):
    """``A.dot(w)`` with ``A`` a module-level array was 'no adjoint rule for dot' (the
    call was the bound method ``A.dot``, which has no row); np.dot(A, w) passed."""
    check_grad(fn, (np.array([1.2, 2.1]),))


def test_method_of_a_module_level_array_reads_as_the_numpy_function():
    df = tc.grad(c_sum)
    df(np.array([1.2, 2.1]))
    assert "np.sum(CONST_A, axis=0)" in df.source


def c_loop(h, n):
    for t in range(n):
        h = np.tanh(MODEL.W.dot(h) + 0.1)
    return np.sum(h * h)


def test_method_of_a_module_level_array_in_a_checkpointed_loop():
    h0 = np.array([0.3, -0.7])
    taped = check_grad(c_loop, (h0, 5))
    checkpointed = check_grad(c_loop, (h0, 5),
                              df=tc.grad_with_checkpointing(c_loop, snapshots=2))
    np.testing.assert_allclose(checkpointed[0], taped[0], rtol=1e-12)


CONST_V = np.linspace(0.5, 3.0, 6)


def c_take(w): return np.sum(CONST_V.take([0, 2]) * w)  # noqa: E704


def test_method_of_a_module_level_array_without_a_row_is_still_a_constant_call():
    """A method without a function of its own (``take``) keeps its old path."""
    check_grad(c_take, (np.array([1.2, 2.1]),))


def m_clip_below(x): return np.sum(x.clip(-0.1) ** 2)                   # noqa: E704
def m_clip_above(x): return np.sum(x.clip(max=0.5) ** 2)                # noqa: E704


@pytest.mark.parametrize("fn", [m_clip_below, m_clip_above], ids=lambda f: f.__name__)
def test_clip_method_with_one_bound(fn):
    """``x.clip(-0.1)`` leaves the upper bound at None; read as ``np.clip(x, -0.1)``
    it was NumPy's TypeError 'missing a_max' from the generated code."""
    check_grad(fn, (np.array([-0.5, 0.3, 1.2]),))
