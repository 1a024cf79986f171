"""runtime/primitive_adjoints/scipy_adjoints.py: the adjoints of
``scipy.signal.convolve2d`` (every mode and boundary, the kernel and ``fillvalue``
too) and ``scipy.spatial.distance_matrix`` (every ``p``) against central finite
differences, and in programs: a Cahn-Hilliard step taped and checkpointed,
pairwise distances of one set of points, and a Newton iteration through
``scipy.linalg.solve`` and ``scipy.linalg.norm``."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from gradcheck import check_grad

scipy_signal = pytest.importorskip("scipy.signal")
scipy_spatial = pytest.importorskip("scipy.spatial")
scipy_linalg = pytest.importorskip("scipy.linalg")
from tangent_ckpt import runtime as rt  # noqa: E402

convolve2d = scipy_signal.convolve2d
distance_matrix = scipy_spatial.distance_matrix

EPS = 1e-6
SHAPES = [((5, 6), (3, 3)), ((5, 6), (2, 4)), ((4, 4), (4, 4)), ((3, 4), (5, 6)),
          ((2, 3), (7, 8)), ((6, 5), (1, 1))]


def _numeric(f, x, g):
    """``d sum(g * f(x)) / dx`` by central differences (``x`` an array or a float)."""
    if np.ndim(x) == 0:
        return np.sum(g * (f(x + EPS) - f(x - EPS))) / (2 * EPS)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += EPS
        down[i] -= EPS
        out[i] = np.sum(g * (f(up) - f(down))) / (2 * EPS)
    return out


@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}*{s[1]}")
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm", "circular", "symmetric"])
def test_convolve2d_adjoints_match_finite_differences(shapes, mode, boundary):
    rng = np.random.default_rng(hash((shapes, mode, boundary)) % 2**32)
    image, kernel, fill = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1]), 0.7
    g = rng.standard_normal(convolve2d(image, kernel, mode, boundary, fill).shape)
    np.testing.assert_allclose(
        rt.convolve2d_in1_adjoint(g, image, kernel, mode, boundary),
        _numeric(lambda x: convolve2d(x, kernel, mode, boundary, fill), image, g), atol=1e-7)
    np.testing.assert_allclose(
        rt.convolve2d_in2_adjoint(g, image, kernel, mode, boundary, fill),
        _numeric(lambda x: convolve2d(image, x, mode, boundary, fill), kernel, g), atol=1e-7)
    np.testing.assert_allclose(
        rt.convolve2d_fillvalue_adjoint(g, image, kernel, mode, boundary),
        _numeric(lambda x: convolve2d(image, kernel, mode, boundary, x), fill, g), atol=1e-7)


def cahn_hilliard(c, k, steps):
    """p18's pattern: a periodic Laplacian by convolution, then a mirrored smoothing
    with a kernel that is differentiated too."""
    lap = np.array([[0.0, 1.0, 0.0], [1.0, -4.0, 1.0], [0.0, 1.0, 0.0]])
    for _ in range(steps):
        mu = c ** 3 - c - 0.3 * convolve2d(c, lap, mode="same", boundary="wrap")
        c = c + 0.05 * convolve2d(mu, k, "same", "symm")
    return np.sum(c ** 2) + np.sum(convolve2d(c, k, "valid"))


def test_convolve2d_in_a_loop_taped_and_checkpointed():
    rng = np.random.default_rng(1)
    c, k = rng.uniform(-0.5, 0.5, (5, 6)), rng.uniform(0.0, 1.0, (2, 3))
    check_construct(cahn_hilliard, (c, k, 3), wrt=(0, 1), autograd=False)
    assert "CheckpointedLoop" in tc.grad(cahn_hilliard, wrt=(0, 1), checkpoint=True,
                                         snapshots=2).source


def padded_with(image, fill):
    return np.sum(np.sin(convolve2d(image, np.ones((2, 2)), "full", "fill", fill)))


def test_a_differentiated_fillvalue_gets_the_padded_entries_adjoint():
    check_grad(padded_with, (np.arange(6.0).reshape(2, 3) / 7, 0.4), wrt=(0, 1))


def test_forward_mode_and_hessian_vector_products_of_convolve2d():
    rng = np.random.default_rng(2)
    c, k, d = rng.uniform(-0.5, 0.5, (4, 5)), rng.uniform(0.0, 1.0, (2, 3)), \
        rng.standard_normal((4, 5))
    _, tangent = tc.jvp(cahn_hilliard, wrt=0)(c, k, 2, d)
    numeric = (cahn_hilliard(c + EPS * d, k, 2) - cahn_hilliard(c - EPS * d, k, 2)) / (2 * EPS)
    assert tangent == pytest.approx(numeric, rel=1e-6)
    grad = tc.grad(cahn_hilliard, wrt=0)
    numeric_hv = (grad(c + EPS * d, k, 2) - grad(c - EPS * d, k, 2)) / (2 * EPS)
    np.testing.assert_allclose(tc.hvp(cahn_hilliard, wrt=0)(c, k, 2, d), numeric_hv,
                               rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("p", [1, 2, 3, 1.5, np.inf])
def test_distance_matrix_adjoints_match_finite_differences(p):
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((2, 3))
    ans = distance_matrix(x, y, p)
    g = rng.standard_normal(ans.shape)
    np.testing.assert_allclose(rt.distance_matrix_x_adjoint(g, x, y, ans, p),
                               _numeric(lambda v: distance_matrix(v, y, p), x, g), atol=1e-7)
    np.testing.assert_allclose(rt.distance_matrix_y_adjoint(g, x, y, ans, p),
                               _numeric(lambda v: distance_matrix(x, v, p), y, g), atol=1e-7)


def lennard_jones(p):
    """p23's pattern: the distances of one set of points to itself (a zero diagonal,
    set aside before the division); ``p`` a constant of the closure."""
    def energy(pos):
        r = distance_matrix(pos, pos, p) + np.eye(len(pos))
        inv = 1.0 / r ** 2 - np.eye(len(pos))
        return np.sum(inv ** 6 - inv ** 3)
    return energy


@pytest.mark.parametrize("p", [2, 1, np.inf])
def test_distance_matrix_of_one_set_of_points_taped_forward_and_second_order(p):
    energy = lennard_jones(p)
    pos = np.array([[0.0, 0.1, 0.2], [1.2, 0.0, 0.3], [0.1, 1.3, 0.9], [1.0, 1.6, 0.1]])
    check_grad(energy, (pos,), rtol=1e-5)
    d = np.random.default_rng(4).standard_normal(pos.shape)
    _, tangent = tc.jvp(energy)(pos, d)
    numeric = (energy(pos + EPS * d) - energy(pos - EPS * d)) / (2 * EPS)
    assert tangent == pytest.approx(numeric, rel=1e-6)
    if p == 2:
        grad = tc.grad(energy)
        numeric_hv = (grad(pos + EPS * d) - grad(pos - EPS * d)) / (2 * EPS)
        np.testing.assert_allclose(tc.hvp(energy)(pos, d), numeric_hv, rtol=1e-5, atol=1e-6)


def with_a_variable_p(x, p):
    return np.sum(distance_matrix(x, x * 2.0, p))


def test_forward_mode_with_a_p_known_only_at_run_time_is_refused():
    with pytest.raises(tc.TangentCkptError, match=r"distance_matrix: no tangent rule for "
                                                  r"these arguments \(p=<variable>"):
        tc.jvp(with_a_variable_p, wrt=0)(np.ones((2, 2)), 2, np.ones((2, 2)))


def _newton(F, DFinv, x0, rtol, atol):
    """NumCSE's Newton iteration: ``x -= s`` on a copy, left by a ``return`` from
    inside ``while True`` once the step is small."""
    x = np.copy(x0)
    while True:
        s = DFinv(x, F(x))
        x -= s
        sn = scipy_linalg.norm(s)
        if sn <= rtol * scipy_linalg.norm(x) or sn <= atol:
            return x


def _intersection(x0, c):
    def F(x):
        return np.array([x[0] ** 2 - 2 * x[0] - x[1] + c, x[0] ** 2 + x[1] ** 2 - 1])

    def DFinv(x, f):
        J = np.array([[2 * x[0] - 2, -1.0], [2 * x[0], 2 * x[1]]])
        return scipy_linalg.solve(J, f)

    x = _newton(F, DFinv, x0, 1e-10, 1e-12)
    return x[0] + 3 * x[1]


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
def test_newton_through_scipy_solve_and_norm(options):
    """The root moves with ``c``; the start ``x0`` changes nothing once converged,
    which the unrolled iteration reproduces to rounding."""
    args = (np.array([2.0, 3.0]), 0.7)
    check_grad(_intersection, args, wrt=(0, 1),
               df=tc.grad(_intersection, wrt=(0, 1), **options), rtol=1e-5, atol=1e-7)


def _solve_assuming_symmetry(a, b):
    return np.sum(scipy_linalg.solve(a, b, assume_a="sym"))


def _solve_overwriting_b(a, b):
    return np.sum(scipy_linalg.solve(a, b, overwrite_b=True))


def _solve_transposed(a, b):
    return np.sum(scipy_linalg.solve(a, b, transposed=True))


@pytest.mark.parametrize("f", [_solve_assuming_symmetry, _solve_overwriting_b,
                               _solve_transposed], ids=lambda f: f.__name__)
def test_solve_options_its_rule_does_not_cover_are_refused(f):
    """SciPy reads one triangle for 'sym', may write into b, or solves a.T x = b:
    the rule is written for none of them."""
    with pytest.raises(tc.UnsupportedFunctionError, match="scipy.linalg.solve"):
        tc.grad(f, wrt=(0, 1))(np.eye(3) * 2.0, np.ones(3))
