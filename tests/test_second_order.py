"""tc.hvp / tc.hessian (second_order.py): reverse mode over the tangent-linear
program, against finite differences of tc.grad and a dense Hessian, for every
control-flow form, taped and checkpointed; the checkpointed loop of the
tangent-linear program follows the Revolve schedule for its doubled state."""

import linecache

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.runtime.scheduling.schedules import revolve_cost
from coverage_cases import all_cases
from test_forward import CONSTRUCTS, _args, rnn
from test_grad_coverage import arguments, straight
from test_jvp_coverage import _uses_missing

EPS = 1e-5


def gradient_fd(fn, args, wrt, dirs):
    """(grad(args + eps d) - grad(args - eps d)) / 2 eps, per wrt argument."""
    grad = tc.grad(fn, wrt=wrt)

    def at(s):
        moved = list(args)
        for k, d in zip(wrt, dirs):
            moved[k] = moved[k] + s * d
        g = grad(*moved)
        return g
    return [(p - m) / (2 * EPS) for p, m in zip(at(EPS), at(-EPS))]


def _directions(args, wrt, rng):
    return [rng.normal(size=np.shape(args[k])) if np.ndim(args[k]) else float(rng.normal())
            for k in wrt]


OPTIONS = [{}, {"checkpoint": True, "snapshots": 2}]


@pytest.mark.parametrize("options", OPTIONS, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("fn, wrt", CONSTRUCTS, ids=[f.__name__ for f, _ in CONSTRUCTS])
def test_hvp_matches_finite_differences_of_the_gradient(fn, wrt, options):
    rng = np.random.default_rng(5)
    args = _args(fn, rng)
    before = [np.copy(a) for a in args]
    dirs = _directions(args, wrt, rng)
    hv = tc.hvp(fn, wrt=wrt, **options)(*args, tuple(dirs))
    for a, b in zip(hv, gradient_fd(fn, args, wrt, dirs)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


CHECKPOINTED = [{"snapshots": 2}, {"memory_budget": "16kB"}, {"snapshots": 2, "schedule": "online"},
                {"snapshots": 3, "schedule": "uniform"}]


@pytest.mark.parametrize("options", CHECKPOINTED, ids=lambda o: ",".join(map(str, o.values())))
@pytest.mark.parametrize("fn, wrt", CONSTRUCTS, ids=[f.__name__ for f, _ in CONSTRUCTS])
def test_checkpointed_hvp_equals_taped_hvp(fn, wrt, options):
    rng = np.random.default_rng(6)
    args = _args(fn, rng)
    dirs = _directions(args, wrt, rng)
    v = tuple(dirs)
    taped = tc.hvp(fn, wrt=wrt)(*args, v)
    ckpt = tc.hvp(fn, wrt=wrt, checkpoint=True, **options)(*args, v)
    for a, b in zip(taped, ckpt):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def dense_hessian_fd(fn, args, k):
    """Column j: the central difference of tc.grad along unit vector j."""
    x = np.asarray(args[k], dtype=float)
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = 1.0
        columns.append(np.ravel(gradient_fd(fn, args, (k,), [e])[0]))
    return np.stack(columns, axis=1).reshape(x.shape + x.shape)


@pytest.mark.parametrize("options", OPTIONS, ids=["taped", "checkpointed"])
def test_hessian_matches_the_dense_finite_difference_hessian(options):
    rng = np.random.default_rng(1)
    h, W, b, n = _args(rnn, rng)
    H = tc.hessian(rnn, wrt=1, **options)(h, W, b, n)
    assert H.shape == W.shape + W.shape
    np.testing.assert_allclose(H, dense_hessian_fd(rnn, [h, W, b, n], 1), rtol=1e-5, atol=1e-6)
    flat = H.reshape(W.size, W.size)
    np.testing.assert_allclose(flat, flat.T, rtol=1e-10, atol=1e-12)  # symmetric


def test_hessian_blocks_of_several_arguments():
    rng = np.random.default_rng(2)
    h, W, b, n = _args(rnn, rng)
    blocks = tc.hessian(rnn, wrt=(1, 2))(h, W, b, n)
    assert blocks[0][1].shape == W.shape + b.shape and blocks[1][1].shape == b.shape * 2
    np.testing.assert_allclose(blocks[1][1], dense_hessian_fd(rnn, [h, W, b, n], 2),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(blocks[0][1].reshape(W.size, b.size),
                               blocks[1][0].reshape(b.size, W.size).T, rtol=1e-10, atol=1e-12)


def noisy_given(x, rng):
    z = rng.standard_normal(x.shape)
    return np.sum(z * x ** 2)


MODULE_RNG = np.random.default_rng(3)


def noisy_from_the_module(x):
    return np.sum(MODULE_RNG.standard_normal(x.shape) * x ** 2)


def noisy_from_the_global_state(x):
    return np.sum(np.random.randn(*x.shape) * x ** 2)


@pytest.mark.parametrize("options", OPTIONS, ids=["taped", "checkpointed"])
def test_hessian_of_a_function_drawing_numbers_draws_them_once(options):
    """One Hessian-vector product per column, each drawing as one call of fn
    draws: column k used the k-th call's numbers (diag(2 z) came out with other
    z's), and the caller's generator ended n calls further on."""
    x = np.ones(3)
    z = np.random.default_rng(0).standard_normal(3)
    rng = np.random.default_rng(0)
    np.testing.assert_allclose(tc.hessian(noisy_given, **options)(x, rng), np.diag(2 * z))
    once = np.random.default_rng(0)
    noisy_given(x, once)
    assert rng.bit_generator.state == once.bit_generator.state
    MODULE_RNG.bit_generator.state = np.random.default_rng(3).bit_generator.state
    z = np.random.default_rng(3).standard_normal(3)
    np.testing.assert_allclose(tc.hessian(noisy_from_the_module, **options)(x), np.diag(2 * z))
    np.random.seed(5)
    z = np.random.randn(3)
    np.random.seed(5)
    np.testing.assert_allclose(tc.hessian(noisy_from_the_global_state, **options)(x),
                               np.diag(2 * z))


@pytest.mark.parametrize("n, s", [(20, 3), (57, 4)])
def test_checkpointed_hvp_replays_the_revolve_optimum_for_the_doubled_state(n, s):
    rng = np.random.default_rng(4)
    h, W, b, _ = _args(rnn, rng)
    v = rng.normal(size=W.shape)
    with tc.profile() as prof:
        tc.hvp(rnn, wrt=1, checkpoint=True, snapshots=s)(h, W, b, n, v)
    (stats,) = prof.loops.values()
    with tc.profile() as first:
        tc.grad(rnn, wrt=1, checkpoint=True, snapshots=s)(h, W, b, n)
    (first_stats,) = first.loops.values()
    # the minimal number of advances, plus the step the first turn records
    assert stats.forward_steps == first_stats.forward_steps == revolve_cost(n, s)[1] + 1
    assert stats.peak_snapshots == s
    # each snapshot holds the state and its tangent: twice the first-order state
    assert stats.peak_snapshot_bytes == 2 * first_stats.peak_snapshot_bytes


CASES = all_cases()
# not at ties: the gradient jumps there, its finite difference is no Hessian
SAMPLE = [k for k in range(0, len(CASES), 7) if not _uses_missing(CASES[k])
          and all(kind != "ties" for _, kind in CASES[k].args.values())]
# all cases of the linear algebra and of the rules whose tangents are built from other
# rules (gathers, products of the others, along_last)
EVERY_CASE_OF = ("np.linalg", "np.prod", "np.cumprod", "prod()", "np.sort", "np.partition",
                 "np.take_along_axis", "rt.", "scipy.special", "np.average")
SAMPLE += [k for k, case in enumerate(CASES) if any(n in case.body for n in EVERY_CASE_OF)
           and k not in SAMPLE and not _uses_missing(case)
           and all(kind != "ties" for _, kind in case.args.values())]


@pytest.mark.parametrize("k", SAMPLE, ids=[CASES[k].id for k in SAMPLE])
def test_tangent_rules_differentiate_again(k):
    """hvp of each sampled NumPy case: its tangent code goes through reverse mode."""
    case = CASES[k]
    f = straight(case, k)
    args = arguments(case, k)
    wrt = tuple(range(len(args)))
    rng = np.random.default_rng(k)
    out = np.asarray(f(*args), dtype=float)
    weight = rng.normal(size=out.shape)
    source = f"def weighted{k}({', '.join(case.args)}, weight):\n" \
             f"    return np.sum(case{k}({', '.join(case.args)}) * weight)\n"
    filename = f"<weighted {k}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, f"case{k}": f}
    exec(compile(source, filename, "exec"), namespace)
    g = namespace[f"weighted{k}"]
    dirs = _directions(args, wrt, rng)
    hv = tc.hvp(g, wrt=wrt)(*args, weight, tuple(dirs))
    expected = gradient_fd(g, [*args, weight], wrt, dirs)
    for a, b in zip(hv, expected):
        np.testing.assert_allclose(a, b, rtol=10 * case.tol, atol=1e-4 * (1 + np.max(np.abs(b))))


def test_source_shows_the_tangent_function_and_its_gradient():
    text = tc.source(tc.hvp(rnn, wrt=1, checkpoint=True, snapshots=3))
    assert "def tangent_rnn(h, W, b, n, dW):" in text
    assert "def dtangent_rnn(" in text and "rt.CheckpointedLoop" in text
    assert "h, dh = state" in text        # the loop's state is (state, tangent state)
    assert "def jvp_rnn" in str(tc.source(tc.jvp(rnn, wrt=1)))


# --- jvp of several outputs, and with has_aux ----------------------------------------------
def several_outputs(x, n):
    for t in range(n):
        x = np.sin(x) + 0.3 * x
    return np.sum(x ** 2), [x * 2.0, (np.cos(x), 1.5)]


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def test_jvp_of_a_tuple_output_has_a_tangent_of_its_structure():
    rng = np.random.default_rng(3)
    x, d = rng.normal(size=4), rng.normal(size=4)
    value, tangent = tc.jvp(several_outputs)(x, 3, d)
    expected = several_outputs(x, 3)
    assert type(tangent) is tuple and type(tangent[1]) is list and type(tangent[1][1]) is tuple
    hi, lo = several_outputs(x + EPS * d, 3), several_outputs(x - EPS * d, 3)
    for v, t, e, p, m in zip(_leaves(value), _leaves(tangent), _leaves(expected),
                             _leaves(hi), _leaves(lo)):
        np.testing.assert_allclose(v, e, rtol=1e-13)
        assert np.shape(t) == np.shape(e)
        np.testing.assert_allclose(t, (np.asarray(p) - m) / (2 * EPS), rtol=1e-6, atol=1e-8)


def test_jvp_with_has_aux_returns_the_aux_as_computed():
    rng = np.random.default_rng(4)
    x, d = rng.normal(size=4), rng.normal(size=4)
    value, tangent, aux = tc.jvp(several_outputs, has_aux=True)(x, 3, d)
    expected_value, expected_aux = several_outputs(x, 3)
    assert value == pytest.approx(expected_value, rel=1e-13)
    assert type(aux) is list and aux[1][1] == 1.5
    np.testing.assert_allclose(aux[0], expected_aux[0], rtol=1e-13)
    fd = (several_outputs(x + EPS * d, 3)[0] - several_outputs(x - EPS * d, 3)[0]) / (2 * EPS)
    assert tangent == pytest.approx(fd, rel=1e-6)


def test_hvp_of_a_tuple_output_is_refused_at_the_return_line():
    with pytest.raises(tc.TangentCkptError, match="tuple of 2 items") as info:
        tc.hvp(several_outputs)(np.ones(2), 2, np.ones(2))
    assert "test_second_order.py:" in str(info.value)


def checked_cube(x):
    if np.any(np.abs(x) > 100.0):
        raise ValueError(f"x too large: {np.max(np.abs(x)):.3g}")
    return np.sum(x ** 3)


def test_a_raise_with_an_f_string_is_differentiated_twice():
    """The generated tangent keeps ``rt.raise_error(ValueError(f'...'))``; reversing
    it refused the f-string (``tc.hvp`` of any function checking its input so)."""
    x, v = np.array([0.3, -0.2, 0.5]), np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(tc.hvp(checked_cube)(x, v), 6.0 * x * v, rtol=1e-12)
    with pytest.raises(ValueError, match="x too large: 200"):
        tc.hvp(checked_cube)(np.array([200.0, 0.0, 0.0]), v)
