"""np.fft and complex intermediates under a real loss (runtime/primitive_adjoints/fft_adjoints.py,
runtime/primitive_adjoints/complex_adjoints.py, compiler/analyze/complex_values.py): each coverage case of
``fft_cases`` against autograd running the same code, pseudo-spectral solvers
taped and checkpointed against finite differences and autograd, and the
convention's corner cases (a real variable whose adjoint picks up an imaginary
part, a real buffer accumulated in place in a loop)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from autograd_oracle import autograd_gradient, available
from coverage_cases import draw, fft_cases
from gradcheck import check_grad, numeric_grad
from test_grad_coverage import compile_source, straight

CASES = fft_cases()


def seeded_loss(case, k, seed):
    """The case as a real scalar loss ``np.sum(seed * <case>)`` (a module-level
    ``np`` that autograd_oracle can rebind)."""
    params = ", ".join(case.args)
    *lines, last = case.body.splitlines()
    body = "".join(f"    {line}\n" for line in lines)
    f = compile_source(f"loss{k}", f"def loss{k}({params}):\n{body}"
                                   f"    return np.sum(seed * ({last}))\n")
    f.__globals__["seed"] = seed
    return f


def autograd_lacks(case):
    """Autograd's real transforms refuse an odd length along the last axis and
    scale norm='forward' as if it were norm=None (its make_rfft_factors divides
    by n for None only); finite differences decide those cases."""
    real_transform = "rfft" in case.body
    return real_transform and ("norm='forward'" in case.body or any(
        np.prod(shape[-1:]) % 2 for shape, _ in case.args.values()) or "n=7" in case.body
        or "n=5" in case.body or "s=(2, 5)" in case.body or "s=(4, 5)" in case.body)


def test_autograd_is_compared_on_most_fft_cases():
    assert sum(not autograd_lacks(c) for c in CASES) >= 22


@pytest.mark.skipif(not available(), reason="autograd (the oracle extra) is not installed")
@pytest.mark.parametrize("k", range(len(CASES)), ids=[c.id for c in CASES])
def test_fft_case_matches_autograd(k):
    case = CASES[k]
    rng = np.random.default_rng(k)
    args = [draw(rng, shape, kind) for shape, kind in case.args.values()]
    seed = rng.standard_normal(np.shape(straight(case, 900 + k)(*args)))
    f = seeded_loss(case, 900 + k, seed)
    wrt = tuple(range(len(args)))
    ours = tc.grad(f, wrt=wrt)(*args)
    theirs = autograd_gradient(f, args, wrt)
    if autograd_lacks(case):
        return  # test_grad_coverage checks these against finite differences
    assert theirs is not None, "autograd runs every fft case but the real ones of odd length"
    for a, b in zip(ours, theirs):
        assert np.isrealobj(a)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def pseudo_spectral(u0, nu, n):
    """A Burgers/KdV-like step: exponential time differencing of the linear part,
    the nonlinear term in Fourier space, a dispersive phase."""
    k = np.fft.fftfreq(16) * 16.0
    decay = np.exp(-nu * k ** 2 * 0.01)
    phase = np.exp(1j * k ** 3 * 0.0005)
    u = u0
    for t in range(n):
        u_hat = np.fft.fft(u)
        nonlinear = -0.005j * k * np.fft.fft(u * u)
        u = np.real(np.fft.ifft((u_hat + nonlinear) * decay * phase))
    return np.sum(u ** 2) + np.sum(np.abs(np.fft.rfft(u, norm="ortho")))


def heat_etd(u0, nu, forcing, n):
    """The heat equation with a forcing, exponential time differencing with rfft."""
    k = np.fft.rfftfreq(12) * 12.0
    decay = np.exp(-nu * k ** 2 * 0.02)
    u = u0
    for t in range(n):
        u = np.fft.irfft(np.fft.rfft(u) * decay + 0.02 * np.fft.rfft(np.sin(u) * forcing),
                         n=12)
    return np.sum(u * u * forcing)


def heat_2d(u0, nu, n):
    """Two-dimensional diffusion with fft2 and a shifted spectrum."""
    k = np.fft.fftshift(np.fft.fftfreq(6)) * 6.0
    decay = np.exp(-nu * (k[:, None] ** 2 + k[None, :] ** 2) * 0.01)
    u = u0
    for t in range(n):
        spectrum = np.fft.fftshift(np.fft.fft2(u))
        u = np.real(np.fft.ifft2(np.fft.ifftshift(spectrum * decay))) + 0.01 * u * u
    return np.sum(u ** 3)


SOLVERS = [
    (pseudo_spectral, lambda rng: (rng.standard_normal(16), 0.7, 7), (0, 1)),
    (heat_etd, lambda rng: (rng.standard_normal(12), 0.3, rng.uniform(0.5, 1.5, 12), 6),
     (0, 1, 2)),
    (heat_2d, lambda rng: (rng.standard_normal((6, 6)) * 0.5, 0.4, 5), (0, 1)),
]


@pytest.mark.parametrize("solver, make_args, wrt", SOLVERS, ids=[s[0].__name__ for s in SOLVERS])
def test_spectral_solver_taped_checkpointed_and_finite_differences_agree(solver, make_args, wrt):
    args = make_args(np.random.default_rng(3))
    taped = check_grad(solver, args, wrt=wrt, rtol=1e-6, atol=1e-8)
    checkpointed = tc.grad_with_checkpointing(solver, wrt=wrt, snapshots=2)(*args)
    for a, b in zip(taped, checkpointed):
        assert np.isrealobj(b)
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)
    theirs = autograd_gradient(solver, args, wrt)
    if available():
        assert theirs is not None
        for a, b in zip(taped, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_real_buffer_accumulated_in_a_loop_takes_the_real_part():
    """``decay`` is real and read in every step by complex products: its adjoint,
    an accumulator updated in place, receives the real part only."""
    df = tc.grad_with_checkpointing(pseudo_spectral, wrt=1, snapshots=2)
    assert "rt.real_part(" in df.source
    args = (np.random.default_rng(1).standard_normal(16), 0.7, 7)
    assert isinstance(df(*args), float)


def test_the_imaginary_part_a_real_value_picks_up_does_not_leak():
    """``r`` is real and multiplied by a complex number: its adjoint carries an
    imaginary part that is no derivative; np.real/np.abs of a complex value
    downstream of it must not read that part."""
    def f(x):
        z = np.fft.fft(x)
        r = np.abs(z)
        w = np.real(z) * (1.0 - 2.0j) + r * (0.5 + 1.5j)
        return np.sum(np.real(w) * np.imag(w)) + np.sum(np.abs(w))
    x = np.random.default_rng(2).standard_normal(5)
    check_grad(f, (x,), rtol=1e-6, atol=1e-8)


def test_a_complex_global_kernel_is_seen_as_complex():
    kernel = np.exp(0.3j * np.arange(8))

    def f(x, n):
        for t in range(n):
            x = np.real(np.fft.ifft(np.fft.fft(x) * kernel)) + 0.1 * x
        return np.sum(x ** 2)
    f.__globals__["kernel"] = kernel
    try:
        x = np.random.default_rng(4).standard_normal(8)
        got = tc.grad_with_checkpointing(f, wrt=0, snapshots=2)(x, 5)
        np.testing.assert_allclose(got, numeric_grad(f, (x, 5))[0], rtol=1e-6, atol=1e-8)
    finally:
        del f.__globals__["kernel"]


def test_the_gradient_of_a_real_input_is_real_with_flat_and_floats():
    def f(x, a):
        return np.sum(np.abs(np.fft.fft(x * a)) ** 2)
    x = np.random.default_rng(5).standard_normal(4)
    gx, ga = tc.grad(f, wrt=(0, 1))(x, 0.5)
    assert gx.dtype == np.float64 and isinstance(ga, float)
    flat = tc.grad(f, wrt=(0, 1), flat=True)(x, 0.5)
    assert flat.dtype == np.float64
    np.testing.assert_allclose(flat, np.r_[gx, ga])


def _sign_of_complex(x):
    z = x * (1.0 + 2.0j)
    return np.sum(np.real(np.sign(z) * np.conj(z)))


def _norm_of_spectrum(x):
    return np.linalg.norm(np.fft.fft(x))


@pytest.mark.parametrize("f", [_sign_of_complex, _norm_of_spectrum])
def test_a_rule_written_for_real_input_refuses_a_complex_value(f):
    """np.sign(z) = z / |z| is smooth for complex z, and np.linalg.norm's rule
    (g x / |x|) lacks the conjugate a complex x needs: differentiated as if the
    values were real, both gave wrong gradients.  Refused, in both modes."""
    x = np.array([1.0, 2.0, -0.5])
    with pytest.raises(tc.UnsupportedFunctionError, match="of a differentiated complex value"):
        tc.grad(f)(x)
    with pytest.raises(tc.UnsupportedFunctionError, match="of a differentiated complex value"):
        tc.jvp(f, wrt=0)(x, x)


def _spectrum_in_a_loop_the_loss_ignores(a, B, c, s, M, n):
    # the fuzzer's program, as it wrote it (test_fuzz.py, --fuzz-long)
    def rt(k):
        def inner2(x):
            return np.tanh(x * k)
        return inner2
    g3 = rt(s)
    v4 = g3(a) + g3(c[0]) * 0.5
    k0 = 0
    while k0 < n:
        if np.sum((0.5 + 0.5)) > 0.0:
            a = np.tanh((np.tanh(np.sum(np.linspace(np.tanh(np.sum(a)), 2.0 * np.real(
                np.fft.ifft(np.fft.fft(c * 0.5) * (0.6 + 0.3j)))[0, 1] + 1.0, 3) * c[0]))
                * np.ones((3,))))
        else:
            a = np.tanh((np.tanh((0.5 + 0.5)) * np.ones((3,))))
        B = np.tanh(((0.5 * 0.5) * np.ones((2, 3))))
        k0 = k0 + 1
    ans = np.tanh(np.tanh((0.5 + 0.5)))
    return np.sum(v4) + ans + np.sum(B)


def test_a_zero_adjoint_times_a_complex_constant_stays_the_symbolic_zero():
    """Found by --fuzz-long: where no adjoint reaches the fft (the loss ignores the
    loop's result), the symbolic zero times ``0.6 + 0.3j`` became a Python ``0j``
    that fft_adjoint took for an array (IndexError), then a complex zero added into
    a real buffer.  The checkpointed gradient equals the taped one."""
    rng = np.random.default_rng(3)
    args = (rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal((2, 3)),
            0.3, rng.standard_normal((3, 3)), 2)
    taped = tc.grad(_spectrum_in_a_loop_the_loss_ignores, wrt=2)(*args)
    ckpt = tc.grad(_spectrum_in_a_loop_the_loss_ignores, wrt=2, checkpoint=True,
                   schedule="revolve", min_steps=1)(*args)
    np.testing.assert_allclose(ckpt, taped, rtol=1e-12, atol=1e-14)
    check_grad(_spectrum_in_a_loop_the_loss_ignores, args, wrt=(2,))


def order_parameter_after_coupling(theta0, n):
    theta = theta0.copy()
    for t in range(n):
        coupling = np.sin(theta[None, :] - theta[:, None]).sum(axis=1)
        theta = theta + 0.1 * coupling
    return np.abs(np.mean(np.exp(1j * theta)))


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_real_adjoint_assigned_from_a_complex_contribution_is_real(options):
    """The adjoint of a real name first set (not added in place) from a complex
    contribution (``1j * theta``) is its real part: left complex, it reached a
    real buffer through theta[None, :]'s adjoint and NumPy refused the cast (the
    Kuramoto order parameter, tests/test_real_programs.py)."""
    theta = np.array([0.1, 0.5, 1.2, 2.0])
    df = tc.grad(order_parameter_after_coupling, **options)
    got = check_grad(order_parameter_after_coupling, (theta, 3), df=df)
    assert not np.iscomplexobj(got[0])


# complex values that come from the call's arguments (not wrt): the gradient is
# compiled for where they are complex (container_args.complex_paths, api.py)

def _norm_of_scaled(x, c):
    return np.linalg.norm(x * c)


def _least_squares(x, H, y):
    r = H @ x - y
    return np.linalg.norm(r) ** 2


def _std_of_product(x, z):
    return np.std(x * z)


def _vdot_of_product(x, z):
    return np.vdot(x * z, x * z).real


_C = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.2 - 1.0j])
_X = np.array([0.33, -0.72, 1.23])


@pytest.mark.parametrize("f, extra", [
    (_norm_of_scaled, (1.0 + 2.0j,)), (_norm_of_scaled, (np.complex128(1.0 + 2.0j),)),
    (_norm_of_scaled, (_C,)), (_std_of_product, (_C,)), (_vdot_of_product, (_C,)),
    (_least_squares, (np.outer(_C, _C)[:, :3], _C))])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_complex_argument_reaching_a_rule_for_real_input_is_refused(f, extra, options):
    """Found by the dtypes hunt: a complex argument outside wrt was not known to
    be complex, so np.linalg.norm, np.std, np.vdot differentiated it as if it were
    real (the gradient of the complex least squares was wrong, jvp returned a complex
    tangent for a real output).  Refused in both modes, as a complex constant is."""
    with pytest.raises(tc.UnsupportedFunctionError, match="of a differentiated complex value"):
        tc.grad(f, **options)(_X, *extra)
    with pytest.raises(tc.UnsupportedFunctionError, match="of a differentiated complex value"):
        tc.jvp(f, wrt=0)(_X, *extra, np.ones(3))


def test_one_gradient_called_with_real_then_complex_then_real_arguments():
    """The gradient is compiled per set of complex arguments: the same object
    differentiates a real ``c`` and refuses a complex one, in any order."""
    df = tc.grad(_norm_of_scaled)
    expected = check_grad(_norm_of_scaled, (_X, 2.0), df=df)
    with pytest.raises(tc.UnsupportedFunctionError, match="complex value"):
        df(_X, 1.0 + 2.0j)
    np.testing.assert_allclose(df(_X, 2.0), expected[0])


def _abs_sum_in_a_loop(x, z, n):
    s = 0.0
    for t in range(n):
        s = s + np.abs(np.sum(x * z))
    return s


def _recurrence_in_a_loop(x, z, n):
    h = x
    for t in range(n):
        h = h * z + x
    return np.sum(np.abs(h))


def _over_complex_rows(x, zs):
    s = 0.0
    for zk in zs:
        s = s + np.abs(np.sum(x * zk))
    return s


def _into_a_real_buffer(x, z):
    r = np.zeros(3)
    for i in range(3):
        r[i] = x[i] * z[i]
    return np.sum(r * r)


@pytest.mark.parametrize("f, extra", [
    (_abs_sum_in_a_loop, (_C, 3)), (_recurrence_in_a_loop, (_C, 3)),
    (_over_complex_rows, (np.stack([_C, 2 * _C]),)), (_over_complex_rows, ([_C, 2 * _C],)),
    (_into_a_real_buffer, (_C,))])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_a_complex_argument_in_a_loop_adds_real_parts_into_real_buffers(f, extra, options):
    """``bx += bs_mul * z`` with ``z`` a complex argument: NumPy refused to add the
    complex contribution into x's real adjoint (UFuncTypeError from the generated
    code).  Its real part is the derivative; both modes match finite differences."""
    check_grad(f, (_X, *extra), df=tc.grad(f, **options))


class _Solver:
    def __init__(self):
        self.kernel = np.array([1j, 2.0, 3.0])
        self.weight = np.array([1.0, 2.0, 3.0])

    def norm_of_kernel(self, x):
        return np.linalg.norm(x * self.kernel)

    def norm_of_weight(self, x):
        return np.linalg.norm(x * self.weight) + np.sum(np.abs(x * self.kernel) ** 2)


def test_a_complex_attribute_of_an_object_is_complex_its_real_ones_are_not():
    solver = _Solver()
    with pytest.raises(tc.UnsupportedFunctionError, match="complex value"):
        tc.grad(solver.norm_of_kernel)(_X)
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        check_grad(solver.norm_of_weight, (_X,), df=tc.grad(solver.norm_of_weight, **options))


# dtype=complex: a cast or a constructor that makes a complex value

def _std_of_complex_sqrt(x):
    w = np.sqrt(np.asarray(x, dtype=complex))   # complex square roots of negatives
    return np.std(w)


def _var_of_complex_buffer(x):
    w = np.zeros(3, dtype=complex)
    w[:] = x
    w = np.sqrt(w)
    return np.var(w)


def _norm_of_buffer_like(x, z):
    w = np.zeros(3, z.dtype)
    w[:] = x
    return np.linalg.norm(np.sqrt(w))


@pytest.mark.parametrize("f, extra", [
    (_std_of_complex_sqrt, ()), (_var_of_complex_buffer, ()),
    (_norm_of_buffer_like, (np.ones(3, dtype=complex),))])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_complex_dtype_makes_a_complex_value(f, extra, options):
    """Found by the dtypes hunt: ``np.asarray(x, dtype=complex)``,
    ``np.zeros(n, dtype=complex)`` and ``dtype=z.dtype`` were not seen to make
    complex values (the check looked for a complex number, not a complex type),
    so np.std / np.var / np.linalg.norm differentiated them as real: a wrong sign.
    Refused, as for any complex value."""
    with pytest.raises(tc.UnsupportedFunctionError, match="of a differentiated complex value"):
        tc.grad(f, **options)(_X, *extra)


def _imaginary_roots_summed_in_a_loop(x, n):
    w = np.zeros(3, dtype=np.complex128)
    s = 0.0
    for t in range(n):
        w = w * 0.5 + np.sqrt(np.asarray(x, "complex128"))
        s = s + np.sum(np.imag(w) * x)
    return s


def _imaginary_roots_of_buffer(x):
    w = np.zeros(3, dtype=complex)
    w[:] = x
    return np.sum(np.imag(np.sqrt(w)) * x) + np.sum(np.abs(np.sqrt(w)) ** 2)


@pytest.mark.parametrize("f, extra", [(_imaginary_roots_summed_in_a_loop, (3,)),
                                      (_imaginary_roots_of_buffer, ())])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_complex_dtype_values_under_a_real_loss_match_finite_differences(f, extra, options):
    """The loop's adjoint of x, a real buffer, adds the real part of contributions
    read from dtype=complex values (UFuncTypeError before)."""
    check_grad(f, (_X, *extra), df=tc.grad(f, **options))


def _norm_of_buffer_of_dtype(x, dt):
    w = np.zeros(3, dtype=dt)
    w[:] = x
    return np.linalg.norm(np.sqrt(np.abs(w) + w))


def _norm_of_buffer_of_result_type(x, z):
    w = np.zeros(3, dtype=np.result_type(x, z))
    w[:] = x
    return np.linalg.norm(np.sqrt(np.abs(w) + w))


def test_a_buffer_of_a_complex_dtype_given_at_run_time_is_complex():
    """A subscript write keeps its target's dtype, so the dtype decides: a complex
    type passed as an argument (dt=complex) or np.result_type of a complex value."""
    with pytest.raises(tc.UnsupportedFunctionError, match="of a differentiated complex value"):
        tc.grad(_norm_of_buffer_of_dtype)(_X, complex)
    with pytest.raises(tc.UnsupportedFunctionError, match="of a differentiated complex value"):
        tc.grad(_norm_of_buffer_of_result_type)(_X, _C)
    check_grad(_norm_of_buffer_of_dtype, (np.abs(_X), float))
    check_grad(_norm_of_buffer_of_result_type, (np.abs(_X), np.ones(3)))
