"""`tangent-ckpt dump` writes a module that, imported alone in a fresh process, gives the same gradient."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.cli import main
from tangent_ckpt.emit_module import ModuleEmitError, module_source

ROOT = Path(__file__).resolve().parents[1]

HELPERS = textwrap.dedent("""\
    import numpy as np

    GAIN = 0.7

    def act(x):
        return np.tanh(x) * GAIN
""")

MODEL = textwrap.dedent("""\
    import types

    import numpy as np

    from helpers import act          # a neighbour module of this file
    import helpers

    OFFSET = np.linspace(0.0, 0.3, 4)
    CFG = types.SimpleNamespace(small=np.array([1.0, -2.0, 0.5, 0.25]))

    def step(x, w):
        return act(x * w + OFFSET) + 0.1 * x

    def loss(x, w, n, c=np.array([0.5, 1.0, 1.5, 2.0])):
        for t in range(n):
            x = step(x, w) * helpers.GAIN + CFG.small * c * 1e-3
        return np.sum(x ** 2)

    def rnn(h, W, b, n):
        for t in range(n):
            h = np.tanh(h @ W + b)
        return np.sum(h)
""")

RUNNER = textwrap.dedent("""\
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    mod = __import__(sys.argv[2])
    fn = getattr(mod, mod.__all__[0])
    args = json.loads(sys.argv[3])
    args = [np.array(a) if isinstance(a, list) else a for a in args]
    out = fn(*args)
    if not isinstance(out, tuple):
        out = (out,)
    flat = []
    for o in out:
        if isinstance(o, tuple):
            flat.extend(np.asarray(v).tolist() for v in o)
        else:
            flat.append(np.asarray(o).tolist())
    assert "tangent_ckpt.compiler" not in sys.modules, "the dumped module imported the compiler"
    print(json.dumps(flat))
""")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def dump(project, target, *options, name="dumped"):
    out = project / "out" / f"{name}.py"
    out.parent.mkdir(exist_ok=True)
    status = main(["dump", f"{project / 'model.py'}:{target}", *options, "-o", str(out)])
    assert status == 0
    return out


def run_fresh(project, out, args):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(project), str(ROOT)])
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(out.parent), out.stem,
                           json.dumps(args)], capture_output=True, text=True, env=env,
                          timeout=60, stdin=subprocess.DEVNULL, cwd=str(out.parent))
    assert proc.returncode == 0, proc.stderr
    return [np.asarray(v) for v in json.loads(proc.stdout)]


def in_process(project, name, wrt, args, **options):
    sys.path.insert(0, str(project))
    try:
        import importlib
        for m in ("model", "helpers"):
            sys.modules.pop(m, None)
        model = importlib.import_module("model")
        return model, getattr(model, name)
    finally:
        sys.path.remove(str(project))


def expected(project, name, wrt, args, value=False, **options):
    model, fn = in_process(project, name, wrt, args)
    arrays = [np.array(a) if isinstance(a, list) else a for a in args]
    df = (tc.value_and_grad if value else tc.grad)(fn, wrt=wrt, **options)
    out = df(*arrays)
    if value:
        v, g = out
        g = g if isinstance(g, tuple) else (g,)
        return [np.asarray(v), *map(np.asarray, g)]
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


X = [0.1, -0.2, 0.3, 0.05]
Wv = [0.9, 1.1, -0.7, 0.4]


@pytest.mark.parametrize("options,tc_options", [
    (["--snapshots", "3"], dict(checkpoint=True, snapshots=3)),
    (["--no-checkpoint"], {}),
    (["--memory-budget", "64000"], dict(checkpoint=True, memory_budget=64000)),
    (["--schedule", "uniform", "--snapshots", "4"],
     dict(checkpoint=True, schedule="uniform", snapshots=4)),
])
def test_dumped_module_gives_same_gradient(project, options, tc_options):
    out = dump(project, "loss", "--wrt", "0,1", *options)
    text = out.read_text()
    assert "from model import OFFSET" in text      # a user constant, imported by name
    assert "inspect.signature(_user_function).parameters['c'].default" in text
    assert "np.array([1.0, -2.0, 0.5, 0.25]" in text   # attribute of an object: inlined
    args = [X, Wv, 9]
    got = run_fresh(project, out, args)
    want = expected(project, "loss", (0, 1), args, **tc_options)
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=0)


def test_dumped_rnn_checkpointed_matches_taped(project):
    out = dump(project, "rnn", "--wrt", "1,2", "--snapshots", "2")
    rng = np.random.default_rng(0)
    h = rng.standard_normal((2, 3)).tolist()
    W = (0.5 * rng.standard_normal((3, 3))).tolist()
    b = rng.standard_normal(3).tolist()
    got = run_fresh(project, out, [h, W, b, 7])
    want = expected(project, "rnn", (1, 2), [h, W, b, 7])   # taped
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_dumped_value_and_grad(project):
    out = dump(project, "rnn", "--wrt", "1", "--value", "--snapshots", "2")
    rng = np.random.default_rng(1)
    h, W, b = (rng.standard_normal((2, 3)).tolist(), (0.5 * rng.standard_normal((3, 3))).tolist(),
               rng.standard_normal(3).tolist())
    got = run_fresh(project, out, [h, W, b, 5])
    want = expected(project, "rnn", 1, [h, W, b, 5], value=True)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-13)


def test_dump_of_the_rnn_example(tmp_path):
    out = tmp_path / "drnn.py"
    assert main(["dump", str(ROOT / "examples" / "rnn.py") + ":loss", "--wrt", "1,2",
                 "--snapshots", "10", "-o", str(out)]) == 0
    text = out.read_text()
    assert "def dloss(h, W, b, n, bloss=1.0):" in text
    assert "from rnn import" not in text   # nothing of the user's module is needed


def test_decorated_function_is_differentiated(tmp_path, capsys):
    (tmp_path / "deco.py").write_text(textwrap.dedent("""\
        import numpy as np
        import tangent_ckpt as tc

        @tc.grad_with_checkpointing(wrt=0, snapshots=2)
        def f(x, n):
            for t in range(n):
                x = np.sin(x)
            return np.sum(x)
    """))
    assert main(["dump", f"{tmp_path / 'deco.py'}:f", "--snapshots", "2"]) == 0
    assert "def df(x, n, bf=1.0):" in capsys.readouterr().out


FIELDS = textwrap.dedent("""\
    import numpy as np

    def laplacian(Z):
        return Z[:-2, 1:-1] + Z[1:-1, :-2] - 4 * Z[1:-1, 1:-1] + Z[1:-1, 2:] + Z[2:, 1:-1]

    def fields(n, F):
        U = np.ones((6, 6))
        V = np.zeros((6, 6))
        u = U[1:-1, 1:-1]
        for i in range(n):
            u += 0.1 * (laplacian(U) + F * (1 - u))
            for Z in (U, V):
                Z[0, :] = Z[1, :]
        return np.sum(U ** 2)

    def aliased(x):
        pair = [x, x * 2.0]
        b = pair[0]
        b += 1.0
        return np.sum(x * b)
""")


def test_desugar_stage_prints_the_writes_made_explicit(tmp_path, capsys):
    (tmp_path / "fields.py").write_text(FIELDS)
    assert main(["dump", f"{tmp_path / 'fields.py'}:fields", "--stage", "desugar"]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines()]
    assert "U[1:-1, 1:-1] = u" in lines  # the write through the view, carried to its root
    assert "U[0, :] = U[1, :]" in lines and "V[0, :] = V[1, :]" in lines  # for Z in (U, V)
    assert not any(line.startswith("for Z in") for line in lines)
    # laplacian(U) inside the expression: inlined before the statement, in Python's order
    assert "laplacian_result = U[:-2, 1:-1] + U[1:-1, :-2] - 4 * U[1:-1, 1:-1] + " \
        "U[1:-1, 2:] + U[2:, 1:-1]" in lines
    assert not any("laplacian(" in line for line in lines)
    compile(out, "desugared", "exec")  # plain Python a person can read and run


def test_desugar_stage_refusal_names_the_users_line(tmp_path, capsys):
    (tmp_path / "fields.py").write_text(FIELDS)
    assert main(["dump", f"{tmp_path / 'fields.py'}:aliased", "--stage", "desugar"]) == 2
    err = capsys.readouterr().err
    assert "fields.py:19:" in err and "'b'" in err


def test_large_unnamed_array_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "big.py").write_text(textwrap.dedent("""\
        import types
        import numpy as np

        CFG = types.SimpleNamespace(w=np.ones(20_000))

        def f(x):
            return np.sum(x * CFG.w)
    """))
    status = main(["dump", f"{tmp_path / 'big.py'}:f"])
    err = capsys.readouterr().err
    assert status == 2
    assert len(err.strip().splitlines()) == 1
    assert "cannot be imported by name" in err and "module-level name" in err


def test_module_source_api():
    def local_f(x):
        return np.sum(np.sin(x) * 2.0)
    text = module_source(tc.grad(local_f))
    namespace = {}
    exec(compile(text, "m.py", "exec"), namespace)
    x = np.array([0.3, 0.4])
    np.testing.assert_allclose(namespace["dlocal_f"](x), 2 * np.cos(x))
    assert issubclass(ModuleEmitError, tc.TangentCkptError)


def test_library_ufunc_without_a_module_name_is_imported_from_its_library():
    """scipy.special's ufuncs have no __module__: the dump finds them by identity."""
    special = pytest.importorskip("scipy.special")

    def uses_erf(x):
        return np.sum(special.erf(x) * x)
    text = module_source(tc.grad(uses_erf))
    assert "from scipy.special import erf" in text
    namespace = {}
    exec(compile(text, "m.py", "exec"), namespace)
    x = np.array([0.3, -0.7])
    want = tc.grad(uses_erf)(x)
    np.testing.assert_allclose(namespace["duses_erf"](x), want, rtol=1e-14)
