"""Rules with a singular derivative (``singular=`` rows: sqrt, log, division, arcsin...)
keep an adjoint that is exactly 0 at 0: a value that a mask, ``np.where`` or
``np.triu`` discards contributes nothing, even where its local derivative is
infinite or NaN (``0 * inf`` would be NaN; finite differences give a number).
Where the adjoint is not 0 the singularity stays: inf or NaN, as the math says."""

import warnings

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, numeric_grad
from tangent_ckpt import runtime as rt
from tangent_ckpt.adjoints import registry
from tangent_ckpt.adjoints.evaluation import evaluate, evaluate_tangent

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:divide by zero:RuntimeWarning")


# --------------------------------------------------------------- the snippets

def pair_energy(x, m):
    """Gravitational energy of point masses: the diagonal of r is 0, 1 / r is inf
    there, and np.triu discards it."""
    d = x[:, None, :] - x[None, :, :]
    r = np.sqrt(np.sum(d * d, axis=-1))
    return -np.sum(np.triu(m[:, None] * m[None, :] / r, 1))


def pair_energy_masked(x):
    """The same with a mask written by np.where over 1 / r."""
    d = x[:, None, :] - x[None, :, :]
    r = np.sqrt(np.sum(d ** 2, axis=-1))
    inv = np.where(r > 0, 1.0 / r, 0.0)
    return np.sum(inv) + np.sum(np.where(r > 0, r ** -3, 0.0))


def pair_distances_with_mask(x):
    """A soft-sphere potential over r with the diagonal masked by a boolean matrix."""
    d = x[:, None, :] - x[None, :, :]
    r = np.linalg.norm(d, axis=-1)
    off = ~np.eye(x.shape[0], dtype=bool)
    return np.sum(np.where(off, np.log(r) + np.arcsinh(1.0 / r), 0.0))


def masked_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0) * np.arange(1.0, x.size + 1))


def masked_log(x):
    """log of an exact 0 (x * (x > 0) is 0 wherever x <= 0), then masked."""
    y = x * (x > 0)
    return np.sum(np.where(y > 0, np.log(y), 0) ** 2)


def masked_division(x, counts):
    """A mean per bin, with empty bins (count 0) masked out."""
    return np.sum(np.where(counts > 0, x / counts, 0.0) ** 2)


def masked_sqrt_of_product(x, c):
    """x * c is exactly 0 where c is 0, whatever x: its sqrt is singular there."""
    return np.sum(np.where(c > 0, np.sqrt(x * c), 0.0))


def masked_arcsin(x):
    """y is exactly 1 where x > 1 (np.minimum); arcsin' is inf there, masked."""
    y = np.minimum(x, 1.0)
    return np.sum(np.where(y < 1.0, np.arcsin(y), 0.0))


def nbody(x, v, n):
    """Velocity Verlet-like steps with a masked 1 / r on the pair diagonal."""
    for t in range(n):
        d = x[:, None, :] - x[None, :, :]
        r = np.sqrt(np.sum(d * d, axis=-1))
        inv = np.where(r > 0, 1.0 / r, 0.0)
        a = -np.sum(d * (inv ** 3)[:, :, None], axis=1)
        v = v + 0.01 * a
        x = x + 0.01 * v
    return np.sum(x * x) + np.sum(np.triu(r, 1))


RNG = np.random.RandomState(7)
POINTS = RNG.randn(5, 3)
MIXED = np.array([-1.5, -0.3, 0.4, 1.2, 2.0, -0.7])


def test_pair_energy_with_triu_matches_finite_differences():
    got = check_grad(pair_energy, (POINTS, np.linspace(1.0, 2.0, 5)))
    assert np.all(np.isfinite(got[0]))


def test_pair_energy_masked_by_where_matches_finite_differences():
    check_grad(pair_energy_masked, (POINTS,))


def test_log_and_norm_masked_by_a_boolean_matrix_match_finite_differences():
    check_grad(pair_distances_with_mask, (POINTS,))


@pytest.mark.parametrize("f", [masked_sqrt, masked_log, masked_arcsin])
def test_masked_elementwise_singularity_matches_finite_differences(f):
    x = MIXED if f is not masked_arcsin else np.array([-0.5, 0.2, 1.5, 1.8, 0.7])
    got = check_grad(f, (x,))
    assert np.all(np.isfinite(got[0]))


def test_masked_division_by_zero_counts_matches_finite_differences():
    counts = np.array([2.0, 0.0, 3.0, 0.0, 1.0, 4.0])
    check_grad(masked_division, (MIXED, counts))


def test_masked_sqrt_of_an_exact_zero_product_matches_finite_differences():
    c = np.array([1.0, 0.0, 2.0, 0.0, 0.5, 3.0])
    check_grad(masked_sqrt_of_product, (np.abs(MIXED) + 0.1, c))


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True, "snapshots": 2},
                                     {"checkpoint": True, "memory_budget": "16KB"}],
                         ids=["taped", "checkpointed", "snapshots=2", "memory_budget"])
def test_nbody_loop_with_a_masked_pair_diagonal(options):
    x0, v0 = RNG.randn(4, 2), 0.1 * RNG.randn(4, 2)
    df = tc.grad(nbody, wrt=(0, 1), **options)
    got = check_grad(nbody, (x0, v0, 5), wrt=(0, 1), df=df)
    taped = tc.grad(nbody, wrt=(0, 1))(x0, v0, 5)
    for g, t in zip(got, taped):
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)


# ------------------------------------------------- real singularities stay

@pytest.mark.parametrize("f, x", [
    (lambda x: np.sum(np.sqrt(x)), np.array([0.0, 1.0])),
    (lambda x: np.sum(np.log(x)), np.array([0.0, 1.0])),
    (lambda x: np.sum(np.where(x >= 0, np.sqrt(x), 0.0)), np.array([0.0, 1.0])),
    (lambda x: np.sum(1.0 / x), np.array([0.0, 1.0])),
    (lambda x: np.sum(np.arcsin(x)), np.array([1.0, 0.5])),
], ids=["sqrt", "log", "sqrt-kept-by-where", "reciprocal", "arcsin"])
def test_a_singularity_the_output_reads_is_still_inf_or_nan(f, x):
    got = tc.grad(f)(x)
    assert not np.isfinite(got[0]), got
    assert np.isfinite(got[1])


def test_jvp_of_a_masked_sqrt_matches_finite_differences():
    x = MIXED
    t = np.linspace(0.5, 1.5, x.size)
    value, tangent = tc.jvp(masked_sqrt)(x, t)
    expected = numeric_grad(masked_sqrt, (x,))[0] @ t
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)


def test_jvp_of_the_pair_energy_is_finite():
    t = RNG.randn(*POINTS.shape)
    _, tangent = tc.jvp(pair_energy_masked)(POINTS, t)
    expected = numeric_grad(pair_energy_masked, (POINTS,))[0].ravel() @ t.ravel()
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)


# ------------------------------------------------- the rows and the helper

# where each singular row's derivative is infinite or NaN (its arguments)
SINGULAR_POINTS = {
    np.sqrt: (0.0,), np.cbrt: (0.0,), np.log: (0.0,), np.log1p: (-1.0,), np.log2: (0.0,),
    np.log10: (0.0,), np.reciprocal: (0.0,), np.arcsin: (1.0,), np.arccos: (1.0,),
    np.arctanh: (1.0,), np.arccosh: (1.0,), np.divide: (1.0, 0.0), np.remainder: (1.0, 0.0),
    np.power: (0.0, 0.5), np.float_power: (0.0, -2.0), np.hypot: (0.0, 0.0),
    np.arctan2: (0.0, 0.0),
}


def _singular_numpy_rules():
    return [r for r in registry.all_rules() if r.singular and r.fn is not rt.where_nonzero
            and r.name.startswith("np.")]


def test_every_singular_row_has_a_singular_point_here():
    assert {r.fn for r in _singular_numpy_rules()} <= set(SINGULAR_POINTS)


@pytest.mark.parametrize("fn", list(SINGULAR_POINTS), ids=lambda f: f.__name__)
def test_singular_row_gives_zero_for_a_zero_adjoint_at_its_singular_point(fn):
    rule = registry.lookup(fn)
    assert rule.singular
    regular = 1.5 if fn is np.arccosh else 0.5
    args = tuple(np.array([a, regular]) for a in SINGULAR_POINTS[fn])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ans = fn(*args)
        for param in rule.templates:
            zero = evaluate(fn, param, np.zeros(2), ans, args)
            assert np.all(zero == 0), (param, zero)
            one = evaluate(fn, param, np.ones(2), ans, args)
            assert np.isfinite(one[1])
        tangents = {p: np.zeros(2) for p in rule.tangents}
        assert np.all(evaluate_tangent(fn, tangents, ans, args) == 0)


def test_where_nonzero_returns_the_product_itself_off_singular_points():
    g = np.array([0.0, 2.0, 3.0], dtype=np.float32)
    product = g * np.float32(0.5)
    assert rt.where_nonzero(g, product) is product


def test_where_nonzero_zeroes_nan_only_where_g_is_zero():
    g = np.array([0.0, 1.0, 0.0, 2.0], dtype=np.float32)
    d = np.array([np.inf, np.inf, 1.0, np.nan], dtype=np.float32)
    with np.errstate(invalid="ignore"):
        got = rt.where_nonzero(g, g * d)
    assert got.dtype == np.float32
    assert got[0] == 0 and got[1] == np.inf and got[2] == 0 and np.isnan(got[3])
    assert rt.where_nonzero(0.0, np.array([np.nan])) == 0.0      # the symbolic zero
    assert rt.where_nonzero(np.float64(0.0), float("nan")) == 0.0


def test_a_constant_divisor_needs_no_guard():
    def scaled(x):
        return np.sum(x / 2.0) + np.sum(x ** 3)
    text = tc.grad(scaled).source
    assert "where_nonzero" not in text

    def root(x):
        return np.sum(np.sqrt(x) / x)
    text = tc.grad(root).source
    assert text.count("where_nonzero") == 3, text


@pytest.mark.parametrize("f, args", [
    (pair_energy_masked, (POINTS,)),
    (pair_energy, (POINTS, np.linspace(1.0, 2.0, 5))),
    (masked_division, (MIXED, np.array([2.0, 0.0, 3.0, 0.0, 1.0, 4.0]))),
], ids=["pair-energy-where", "pair-energy-triu", "division"])
def test_hvp_of_a_masked_singularity_matches_differences_of_the_gradient(f, args):
    """tc.hvp differentiates the tangent code, whose guard rt.where_nonzero has
    its own row."""
    v = np.linspace(0.5, 1.5, args[0].size).reshape(args[0].shape)
    got = tc.hvp(f)(*args, v)
    grad = tc.grad(f)
    expected = numeric_grad(lambda x: np.sum(grad(x, *args[1:]) * v), (args[0],))[0]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_where_nonzero_numba_twin_equals_the_numpy_helper():
    numba = pytest.importorskip("numba")
    import tangent_ckpt.runtime.jit.numba_twins  # noqa: F401  (registers the twins)

    @numba.njit
    def guarded(g, product):
        return rt.where_nonzero(g, product)

    g = np.array([[0.0, 1.0], [2.0, 0.0]])
    with np.errstate(invalid="ignore"):
        for factor, product in ((g, g * np.array([[np.inf, np.inf], [1.0, 2.0]])),
                                (g, g * 2.0), (g[:1], g[:1] / np.zeros((2, 2))),
                                (0.0, g * np.nan), (1.0, 2.0), (0.0, float("nan"))):
            np.testing.assert_array_equal(guarded(factor, product),
                                          rt.where_nonzero(factor, product))
