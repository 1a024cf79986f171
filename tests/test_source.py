"""Where tc.grad finds a function's source: files, the plain prompt (which keeps
none, and says so), python -c, exec with linecache, .pyc without .py, and
``source=`` given by hand."""

import linecache
import os
import py_compile
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.errors import SourceUnavailableError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(args, stdin=None, cwd=None):
    env = dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1")
    env.pop("TANGENT_CKPT_DEBUG", None)
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True,
                          text=True, env=env, timeout=120, cwd=cwd)


REPL_SESSION = """\
import numpy as np
import tangent_ckpt as tc
def f(x):
    return np.sum(x ** 2)

try:
    tc.grad(f)(np.arange(3.0))
except tc.SourceUnavailableError as e:
    print("ERROR:", e)

print("GRAD:", tc.grad(f, source="def f(x):\\n    return np.sum(x ** 2)\\n")(np.arange(3.0)))
"""


def test_plain_prompt_explains_the_cause_and_the_ways_out():
    proc = run_python(["-q", "-i"], stdin=REPL_SESSION)
    assert "ERROR: <stdin>:" in proc.stdout, proc.stdout + proc.stderr
    error = proc.stdout.split("ERROR:", 1)[1]
    assert "typed at the plain Python prompt, which keeps no source" in error
    for way in ("a .py file", "IPython or Jupyter", "source=", "linecache.cache"):
        assert way in error, way


def test_source_given_at_the_plain_prompt_is_differentiated():
    proc = run_python(["-q", "-i"], stdin=REPL_SESSION)
    assert "GRAD: [0. 2. 4.]" in proc.stdout, proc.stdout + proc.stderr


def test_python_dash_c_names_exec_and_strings():
    proc = run_python(["-c", "import numpy as np, tangent_ckpt as tc\n"
                             "f = lambda x: np.sum(x)\n"
                             "tc.grad(f)(np.ones(2))"])
    assert "made by exec(), compile() or python -c from a string" in proc.stderr


def test_exec_with_source_registered_in_linecache_works():
    text = "def h(x, w):\n    y = np.tanh(x * w)\n    return np.sum(y ** 2)\n"
    filename = "<generated h>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(text, filename, "exec"), namespace)
    x = np.linspace(-1, 1, 5)
    dx = tc.grad(namespace["h"])(x, 0.7)
    t = np.tanh(0.7 * x)
    np.testing.assert_allclose(dx, 2 * t * (1 - t ** 2) * 0.7)
    assert "(<generated h>:1)" in tc.grad(namespace["h"]).source


def test_exec_without_source_says_so():
    namespace = {"np": np}
    exec("def g(x):\n    return np.sum(x * 2.0)\n", namespace)
    with pytest.raises(SourceUnavailableError, match="made by exec"):
        tc.grad(namespace["g"]).compile()
    source = "def g(x):\n    return np.sum(x * 2.0)\n"
    np.testing.assert_allclose(tc.grad(namespace["g"], source=source)(np.ones(3)), 2.0)
    with pytest.raises(SourceUnavailableError):  # source= is not remembered for later calls
        tc.grad(namespace["g"]).compile()


def test_source_given_for_a_lambda():
    fn = eval("lambda x: np.sum(np.sin(x))", {"np": np})
    x = np.linspace(0, 1, 4)
    np.testing.assert_allclose(tc.grad(fn, source="lambda x: np.sum(np.sin(x))")(x), np.cos(x))


def test_errors_in_given_source_name_its_lines():
    namespace = {"np": np}
    exec("def k(x):\n    y = np.linalg.eig(x)\n    return np.sum(y[0])\n", namespace)
    text = "def k(x):\n    y = np.linalg.eig(x)\n    return np.sum(y[0])\n"
    with pytest.raises(tc.UnsupportedFunctionError, match="<source of k>:2: "):
        tc.grad(namespace["k"], source=text).compile()


def test_bytecode_without_its_source_file(tmp_path):
    source = tmp_path / "only_pyc.py"
    source.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x ** 2)\n")
    py_compile.compile(str(source), cfile=str(tmp_path / "only_pyc.pyc"))
    source.unlink()
    script = textwrap.dedent("""\
        import numpy as np, tangent_ckpt as tc, only_pyc
        try:
            tc.grad(only_pyc.f)(np.ones(2))
        except tc.SourceUnavailableError as e:
            print(e)
        """)
    proc = run_python(["-c", script], cwd=str(tmp_path))
    assert "is not there (only compiled bytecode)" in proc.stdout, proc.stdout + proc.stderr


def test_without_code_positions_lambdas_are_told_apart_by_their_arguments(monkeypatch):
    """Python < 3.11 has no co_positions: the lambda with the code's argument names
    is taken, and two lambdas with the same names on one line are refused."""
    from tangent_ckpt.compiler.frontend import lambda_source as frontend
    monkeypatch.setattr(frontend, "_code_span", lambda code: None)
    first = lambda a: np.sum(a ** 2); second = lambda b: np.sum(b ** 3)  # noqa: E702,E731
    x = np.linspace(0.5, 1.5, 3)
    np.testing.assert_allclose(tc.grad(second)(x), 3 * x ** 2)
    np.testing.assert_allclose(tc.grad(first)(x), 2 * x)
    same = lambda a: np.sum(a * 2.0); other = lambda a: np.sum(a * 3.0)  # noqa: E702,E731,F841
    with pytest.raises(SourceUnavailableError, match="which lambda of this line"):
        tc.grad(other).compile()


MANY_LAMBDAS = [
    lambda x: np.sum(np.sin(x) * 1.0),
    lambda x: np.sum(np.sin(x) * 2.0), lambda x: np.sum(np.cos(x) * 3.0),
    lambda x: np.sum(x ** 2 * 4.0),
]


def test_a_file_of_many_lambdas_is_parsed_once_for_all_of_them():
    """Each lambda's gradient parsed the whole file again (quadratic in the
    number of lambdas: benchmarks/compile_time.py --lambdas)."""
    from tangent_ckpt.compiler.frontend import lambda_source as parse
    x = np.linspace(0.1, 1.0, 3)
    tc.grad(MANY_LAMBDAS[0]).compile()  # this file's text is parsed now, at the latest
    misses = parse._lambdas_by_line.cache_info().misses
    grads = [tc.grad(f)(x) for f in MANY_LAMBDAS]
    assert parse._lambdas_by_line.cache_info().misses == misses
    # each gradient is its own lambda's, also for the two lambdas of one line
    np.testing.assert_allclose(grads[0], np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(grads[1], 2.0 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(grads[2], -3.0 * np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(grads[3], 8.0 * x, rtol=1e-12)
