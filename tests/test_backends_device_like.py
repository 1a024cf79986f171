"""Gradients on arrays that refuse what CuPy refuses (tests/device_like_arrays.py),
without a GPU: the adjoint and tangent rules and the checkpointed loop build every
array they need in the library of the arrays they meet.

Run on an H200 with CuPy (docs/backends.md), the rules of det, slogdet,
cholesky, eigh and norm raised CuPy's TypeErrors (a NumPy identity matrix, a
seed expanded by NumPy, ``np.eye(like=)`` handing CuPy NumPy 2's ``device=``);
each case here failed so before its fix, and equals the NumPy gradient now."""

import linecache

import numpy as np
import pytest

import tangent_ckpt as tc
from tests.backend_problems import assert_same_gradient, problems
from tests.device_like_arrays import DeviceLikeArray, on_device_like

RNG = np.random.default_rng(5)
SQUARE = RNG.standard_normal((4, 4)) + 4.0 * np.eye(4)
SPD = SQUARE @ SQUARE.T
X = RNG.standard_normal((3, 4))
V = RNG.standard_normal(4)

#: name -> (body returning a scalar of the arguments a, x, v; the argument a)
CASES = {
    "inv": ("np.sum(np.linalg.inv(a) @ v)", SQUARE),
    "solve": ("np.sum(np.linalg.solve(a, v) ** 2)", SQUARE),
    "det": ("np.linalg.det(a) * np.sum(v)", SQUARE),
    "slogdet": ("np.linalg.slogdet(a)[1] + np.sum(v)", SQUARE),
    "cholesky": ("np.sum(np.linalg.cholesky(a) @ v)", SPD),
    "eigh": ("np.sum(np.linalg.eigh(a)[0] * v)", SPD),
    "eigh_vectors": ("np.sum(np.linalg.eigh(a)[1] ** 2 * v)", SPD),  # (signs: free)
    "svd": ("np.sum(np.linalg.svd(a, full_matrices=False)[1] * v)", SQUARE),
    "norm": ("np.linalg.norm(a @ v)", SQUARE),
    "norm_axis": ("np.sum(np.linalg.norm(x * v, axis=1))", SQUARE),
    "trace": ("np.trace(a) * np.sum(v)", SQUARE),
    "max_axis": ("np.sum(np.max(x * v, axis=0))", SQUARE),
    "var": ("np.var(x * v)", SQUARE),
    "prod": ("np.prod(v) * np.sum(a)", SQUARE),
    "gradient": ("np.sum(np.gradient(v) ** 2) + np.sum(a)", SQUARE),
    "linspace": ("np.sum(np.linspace(v, 2 * v, 3) ** 2) + np.sum(a)", SQUARE),
    "einsum_diagonal": ("np.sum(np.einsum('ii->i', a) * v)", SQUARE),
    "irfft": ("np.sum(np.fft.irfft(np.fft.rfft(v)) ** 2) + np.sum(a)", SQUARE),
}


def compiled(name, body):
    """``f(a, x, v)`` returning ``body``, from a file ``inspect`` can read back."""
    filename = f"<device-like {name}>"
    source = f"def f(a, x, v):\n    return {body}\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("mode", ["taped", "checkpointed"])
def test_gradient_on_device_like_arrays_equals_numpy_gradient(name, mode):
    body, a = CASES[name]
    grad = tc.grad(compiled(name, body), wrt=(0, 2), checkpoint=mode == "checkpointed")
    args = (a, X, V)
    want = grad(*args)
    got = grad(*on_device_like(args))
    assert all(isinstance(g, DeviceLikeArray) for g in got)
    assert_same_gradient(got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangent_on_device_like_arrays_equals_numpy_tangent(name):
    body, a = CASES[name]
    jvp = tc.jvp(compiled(name, body), wrt=(0, 2))
    args, tangents = (a, X, V), (np.ones_like(a), np.ones_like(V))
    want = jvp(*args, tangents)
    got = jvp(*on_device_like(args), on_device_like(tangents))
    assert_same_gradient([got[1]], [want[1]])


@pytest.mark.parametrize("name", sorted(problems(np.random.default_rng(0))))
@pytest.mark.parametrize("mode", ["taped", "checkpointed"])
def test_backend_problems_on_device_like_arrays(name, mode):
    f, args, wrt = problems(np.random.default_rng(0))[name]
    grad = tc.grad(f, wrt=wrt, checkpoint=mode == "checkpointed", snapshots=2)
    want = grad(*args)
    given = on_device_like(args)
    got = grad(*given)
    assert all(isinstance(g, DeviceLikeArray) for g in got)
    assert_same_gradient(got, want)
    assert all(np.array_equal(x.get(), y) for x, y in zip(given, args)
               if isinstance(x, DeviceLikeArray))
