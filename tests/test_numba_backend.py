"""backend="numba" (runtime/jit/numba_backend.py, runtime/jit/numba_twins.py): the same
gradients as the NumPy backend, compiled steps, one warning per fallback,
compile time reported and cached across processes."""

import importlib.util
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt.cli.dump import dump_source  # noqa: E402
from tangent_ckpt.errors import CheckpointError  # noqa: E402
from tests.gradcheck import numeric_grad  # noqa: E402
from tangent_ckpt.runtime.jit import numba_backend  # noqa: E402
from tangent_ckpt.runtime.jit.numba_backend import NumbaFallbackWarning  # noqa: E402

from tests import numba_problems  # noqa: E402
from tests.numba_problems import private_cache  # noqa: E402,F401  (autouse fixture)

CASES = numba_problems.cases(np.random.default_rng(0))
_close = numba_problems.close


@pytest.mark.parametrize("name, fn, args, wrt, options", CASES, ids=[c[0] for c in CASES])
def test_checkpointed_gradient_equals_numpy_backend_with_compiled_steps(name, fn, args, wrt,
                                                                        options):
    want = tc.grad(fn, wrt=wrt, checkpoint=True, **options)(*args)
    df = tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        got = df(*args)
    _close(got, want)
    report = df.backend_report
    assert report.fallbacks == {}
    assert any(n.endswith("_adjoint") for n in report.functions)
    assert report.compile_seconds > 0


def test_value_and_grad_and_decorator_take_the_backend():
    name, fn, args, wrt, options = CASES[0]
    value, grads = tc.value_and_grad(fn, wrt=wrt, checkpoint=True, backend="numba",
                                     **options)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    decorated = tc.grad_with_checkpointing(fn, wrt=wrt, backend="numba", **options)
    _close(decorated(*args), grads)


def test_plain_steps_advance_inside_one_compiled_call():
    name, fn, args, wrt, options = CASES[0]
    df = tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", **options)
    df(*args)
    functions = df.backend_report.functions
    advance = next(f for n, f in functions.items() if n.endswith("_advance"))
    assert len(advance.dispatcher.signatures) == 1  # it ran, compiled
    step = next(f for n, f in functions.items() if n.endswith("_step"))
    assert step.advance is advance


def test_function_numba_cannot_compile_runs_with_numpy_after_one_warning():
    def taped(x, n):  # a taped loop: its tape is a list of arrays and shapes
        for t in range(n):
            x = np.sin(x) * 1.5
        return np.sum(x)
    x = np.linspace(0.1, 1.0, 5)
    want = tc.grad(taped)(x, 4)
    df = tc.grad(taped, backend="numba")
    with pytest.warns(NumbaFallbackWarning, match=r"dtaped\(\) runs with NumPy") as record:
        got = df(x, 4)
    assert len([w for w in record if w.category is NumbaFallbackWarning]) == 1
    _close(got, want)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaFallbackWarning)
        _close(df(x, 4), want)  # no second warning
    assert "dtaped" in df.backend_report.fallbacks


def test_unknown_backend_is_refused():
    with pytest.raises(CheckpointError, match="backend must be one of numpy, numba"):
        tc.grad(numba_problems.heat_loss, backend="cuda")


def test_numba_source_decorates_steps_and_keeps_the_driver_in_python():
    name, fn, args, wrt, options = CASES[0]
    df = tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", **options)
    df(*args)  # compiled for float arguments: writes into them need no dtype check
    text = str(df.source)
    # step, adjoint step, advance; the two sweeps; the statements of the step
    # and of the adjoint step, each run computed as a few loops (numba_passes)
    assert text.count("@njit(cache=True)\n") == 3
    assert text.count("@njit(cache=True, quiet=True)\n") == 2
    assert text.count("@njit(\n    cache=True,\n    passes=((") == 2
    assert "np.s_" not in text and "slice(1, -1)" in text
    assert ("rt.getitem_adjoint(" in text or "rt.accumulate_at(" in text) and \
        "rt.CheckpointedLoop(" in text  # runtime helpers stay calls (their Numba twins)
    assert "# line" in text  # the user's lines stay as comments
    assert "@njit(cache=True)\ndef dmisfit" not in text  # the driver's caller stays Python
    assert ".sweep = " in text and ".advance = " in text


def test_numba_source_is_made_by_the_compiler_before_emit():
    """The rewriting is a compiler pass on the trees (compiler/backend/numba_code.py): the
    runtime's numba module parses no source."""
    with open(numba_backend.__file__) as fh:
        text = fh.read()
    assert "import ast" not in text and "ast.parse" not in text


def test_second_process_loads_compiled_code_from_the_cache(tmp_path):
    script = textwrap.dedent("""\
        import json, numpy as np, tangent_ckpt as tc
        from tests import numba_problems as P
        name, fn, args, wrt, options = P.cases(np.random.default_rng(0))[0]
        df = tc.grad(fn, wrt=wrt, checkpoint=True, backend="numba", **options)
        df(*args)
        r = df.backend_report
        print(json.dumps([r.compile_seconds, r.cache_hits]))
        """)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, TANGENT_CKPT_NUMBA_CACHE=str(tmp_path), PYTHONPATH=root)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, cwd=root, check=True) for _ in range(2)]
    (first, hits1), (second, hits2) = (eval(r.stdout.strip().splitlines()[-1]) for r in runs)
    assert hits1 == 0 and hits2 >= 3
    assert second < first


def test_dump_backend_numba_prints_decorated_module(tmp_path):
    src = tmp_path / "heatmod.py"
    src.write_text(textwrap.dedent("""\
        import numpy as np


        def heat(u0, k, n):
            u = u0.copy()
            for t in range(n):
                u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
            return np.sum(u ** 2)
        """))
    text = dump_source(f"{src}:heat", wrt="0,1", snapshots=4, backend="numba")
    assert "from tangent_ckpt.runtime.jit.numba_backend import njit" in text
    assert "@njit(cache=True)\ndef loop6_step(" in text
    (tmp_path / "dumped.py").write_text(text)
    dumped, module = (_load(name, tmp_path / f"{name}.py") for name in ("dumped", "heatmod"))
    u0, k = np.linspace(0, 1, 12), np.full(12, 0.2)
    want = tc.grad(module.heat, wrt=(0, 1), checkpoint=True, snapshots=4)(u0, k, 20)
    _close(dumped.dheat(u0, k, 20), want)


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Numba's cache finds a cached function's module by name
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def _noisy(x, n):
    for t in range(n):
        x = np.sin(x) + 0.1 * np.random.normal(size=x.shape)
    return np.sum(x ** 2)


def test_steps_drawing_from_numpys_global_random_state_stay_numpy():
    # compiled, np.random.normal would draw from Numba's own generator, which the
    # driver does not keep with the snapshots: recomputed steps would draw other numbers
    x = np.linspace(0.1, 1.0, 5)
    np.random.seed(3)
    want = tc.grad(_noisy, checkpoint=True, snapshots=3)(x, 12)
    df = tc.grad(_noisy, checkpoint=True, snapshots=3, backend="numba")
    with pytest.warns(NumbaFallbackWarning, match="global random state"):
        df.compile()
    np.random.seed(3)
    _close(df(x, 12), want)
    assert "@njit(cache=True)\ndef loop" not in str(df.source)


def _noisy_generator(x, rng, n):
    for t in range(n):
        x = np.sin(x) + 0.1 * rng.normal(size=x.shape)
    return np.sum(x ** 2)


def test_steps_given_a_random_generator_stay_numpy():
    x = np.linspace(0.1, 1.0, 5)
    want = tc.grad(_noisy_generator, checkpoint=True, snapshots=3)(
        x, np.random.default_rng(5), 12)
    df = tc.grad(_noisy_generator, checkpoint=True, snapshots=3, backend="numba")
    with pytest.warns(NumbaFallbackWarning, match="random generator"):
        got = df(x, np.random.default_rng(5), 12)
    _close(got, want)


DIFFUSIVITY = np.full(6, 0.2)


def _global_array_loss(u, n):
    for t in range(n):
        u = u + DIFFUSIVITY * np.sin(u)
    return np.sum(u ** 2)


def test_steps_reading_a_global_array_stay_numpy_and_see_changes_in_place():
    # Numba freezes a global array into the machine code: a change in place after
    # the first call would be missed, so such a step runs with NumPy
    u = np.linspace(0.1, 1.0, 6)
    df = tc.grad(_global_array_loss, checkpoint=True, snapshots=3, backend="numba")
    with pytest.warns(NumbaFallbackWarning, match="global array 'DIFFUSIVITY'"):
        df.compile()
    _close(df(u, 10), tc.grad(_global_array_loss, checkpoint=True, snapshots=3)(u, 10))
    saved = DIFFUSIVITY.copy()
    try:
        DIFFUSIVITY[:] = 0.3
        _close(df(u, 10), tc.grad(_global_array_loss, checkpoint=True, snapshots=3)(u, 10))
    finally:
        DIFFUSIVITY[:] = saved


PARAMETERS = (np.full(6, 0.2), 0.5)


def _global_tuple_loss(u, n):
    for t in range(n):
        u = u + PARAMETERS[0] * np.sin(u) * PARAMETERS[1]
    return np.sum(u ** 2)


def test_steps_reading_a_global_tuple_holding_an_array_stay_numpy():
    # the tuple's array, like a global array, would be frozen into the machine code
    # (the gradient kept the old values after PARAMETERS[0][:] = 0.3)
    u = np.linspace(0.1, 1.0, 6)
    df = tc.grad(_global_tuple_loss, checkpoint=True, snapshots=3, backend="numba")
    with pytest.warns(NumbaFallbackWarning, match="holding an array 'PARAMETERS'"):
        df.compile()
    saved = PARAMETERS[0].copy()
    try:
        PARAMETERS[0][:] = 0.3
        _close(df(u, 10), tc.grad(_global_tuple_loss, checkpoint=True, snapshots=3)(u, 10))
    finally:
        PARAMETERS[0][:] = saved


@pytest.mark.parametrize("index", [slice(1, None), slice(None, -1), slice(2, 5)])
def test_compiled_slice_store_equals_numpys_also_when_the_value_overlaps_the_target(index):
    numba_backend._numba()  # the twins
    from_numba = numba.njit(lambda x, i, v: tc.runtime.assign_at(x, i, v))
    for make_value in (lambda x: x[:-1][:len(x[index])].copy(), lambda x: x[:len(x[index])]):
        want, got = np.arange(8.0), np.arange(8.0)
        want[index] = make_value(want)
        from_numba(got, index, make_value(got))
        assert np.array_equal(got, want)


def test_a_memory_budget_measures_the_compiled_step_not_numbas_compiler():
    # the step's probe ran the first call, which compiled: tracemalloc saw ~30 MB
    # of Numba's compiler and a 200 kB budget was refused for a 256-byte state
    name, fn, args, wrt, options = CASES[0]
    want = tc.grad(fn, wrt=wrt, checkpoint=True, memory_budget="200kB")(*args)
    got = tc.grad(fn, wrt=wrt, checkpoint=True, memory_budget="200kB", backend="numba")(*args)
    _close(got, want)


def burgers_energy(u0, nu, nt):
    # Burgers' equation as in "12 steps to Navier-Stokes": a copy of the field, the
    # interior written through a slice, the ends one element at a time
    u = u0.copy()
    dx, dt = 0.1, 0.01
    for n in range(nt):
        un = u.copy()
        u[1:-1] = (un[1:-1] - un[1:-1] * dt / dx * (un[1:-1] - un[:-2])
                   + nu * dt / dx ** 2 * (un[2:] - 2 * un[1:-1] + un[:-2]))
        u[0] = un[0] - un[0] * dt / dx * (un[0] - un[-2]) + \
            nu * dt / dx ** 2 * (un[1] - 2 * un[0] + un[-2])
        u[-1] = u[0]
    return np.sum(u ** 2)


def test_an_owned_adjoint_zeroed_in_place_keeps_the_value_adjoint_it_handed_out():
    # the adjoint step owns bu and zeroes bu[1:-1] in place after taking the written
    # value's adjoint: Numba's setitem_adjoint_value returned a view of bu there, so
    # the zeroing wiped it (a gradient off by 2.6, NumPy backend right)
    u0 = 1.0 + 0.5 * np.sin(np.linspace(0.0, 2.0 * np.pi, 41))
    want = tc.grad(burgers_energy, wrt=(0, 1))(u0, 0.07, 30)
    got = tc.grad(burgers_energy, wrt=(0, 1), checkpoint=True, snapshots=4,
                  backend="numba")(u0, 0.07, 30)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)


def _accumulated_from_a_number(x, n):
    acc = 0.0
    for t in range(n):
        acc = acc + np.tanh(x * t)
    return np.sum(acc ** 2)


def _turned_complex(V, n):
    psi = np.ones(3)
    for t in range(n):
        psi = psi * np.exp(-1j * V * 0.1)
    return np.sum(np.abs(psi + 0.3 * V) ** 2)


def _grown_to_a_batch(h, n):
    for t in range(n):
        h = np.tanh(h + np.zeros((4, 1)) + 0.1 * t)
    return np.sum(h ** 2)


@pytest.mark.parametrize("f", [_accumulated_from_a_number, _turned_complex, _grown_to_a_batch],
                         ids=lambda f: f.__name__)
def test_a_state_whose_layout_the_first_step_changes_is_swept_without_buffers(f):
    """The compiled sweep's snapshot buffers were made from the state before the
    first step: a float accumulator becoming an array, or a state growing to a
    batch, was NumPy's ValueError; a real state becoming complex was kept in real
    buffers, its imaginary part dropped (a wrong gradient, a ComplexWarning)."""
    x = np.array([0.3, 0.4, 0.5])
    want = tc.grad(f, checkpoint=True, snapshots=2)(x, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaFallbackWarning)
        got = tc.grad(f, checkpoint=True, snapshots=2, backend="numba")(x, 6)
    _close(got, want)
    np.testing.assert_allclose(want, numeric_grad(f, [x, 6], (0,))[0], rtol=1e-6)
