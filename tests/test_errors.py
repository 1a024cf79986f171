"""Honest errors: each names the file, the line and the construct, and says what to do."""

import os

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.errors import (SourceUnavailableError, TransformError, UnsupportedFunctionError,
                                 UnsupportedSyntaxError, WrtError)

HERE = os.path.basename(__file__)
COUNTER = 0



def expect_error(fn, marker, construct, cls=TransformError, wrt=(0,), args=None, where=None):
    with pytest.raises(cls) as info:
        df = tc.grad(fn, wrt=wrt)
        df.compile() if args is None else df(*args)
    err = info.value
    message = str(err)
    assert HERE in message, message
    assert f":{line_of(where or fn, marker)}:" in message, message
    assert construct in message, message
    return err


def f_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return np.sum(y)


def f_with(x):
    with open(__file__):
        y = x * 2.0
    return np.sum(y)


def f_yield(x):
    yield np.sum(x)


def f_global_write(x):
    global COUNTER
    COUNTER = 1
    return np.sum(x)


def f_lambda(x):
    sq = lambda v: v * v  # noqa: E731
    for k in range(2):  # a name bound to two functions: which one a call means is not known
        x = sq(x)
        sq = lambda v: v * k  # noqa: E731
    return np.sum(x)


def lambda_bound_in_a_loop(x):
    for k in range(2):
        sq = lambda v: v * v * k  # noqa: E731
    return np.sum(sq(x))


def test_a_lambda_bound_in_a_loop_is_the_last_one_made():
    """Once refused (which one a later call means); the name holds the lambda the
    last trip made, which reads ``k`` when it is called: desugar writes the call
    as the lambda's body where it stands."""
    check_grad(lambda_bound_in_a_loop, [np.array([0.3, -0.4])])


def f_listcomp(x):
    ys = [x * k for k in (1.0, 2.0) if np.sum(x) > k]
    return np.sum(ys[0])


def f_sort(x):
    y = x * 1.0
    y.sort()
    return np.sum(y)


def f_eig(A, b):
    y = np.linalg.eig(A)[0]
    return np.sum(y * b)


def f_hfft(x):
    y = np.fft.hfft(x)
    return np.sum(np.abs(y))


def f_out(x):
    y = np.zeros_like(x)
    z = np.add(x, x, out=y)   # z and y one array (y = f(x, out=y) is a write: test_effect_calls)
    return np.sum(z)


def f_resize(x):
    y = np.resize(np.sum(x), 3)
    return y * 2.0


def f_bad_call(x):
    y = np.sum(x, where=x > 0)
    return y


def mutating_helper(a):
    a[0] = 1.0
    return a * 2.0


def f_mutates_caller(x):
    y = x * 1.0
    z = mutating_helper(y) * np.sum(y)  # inside an expression that reads y: not followed
    return np.sum(z + y)


def f_no_return(x):
    if np.sum(x) > 0:
        return np.sum(x)


def f_plain(x, n):
    return np.sum(x) * n


@pytest.mark.parametrize("fn, marker, construct", [
    (f_try, "try:", "try"),
    (f_with, "with open", "with"),
    (f_yield, "yield np", "yield"),
    (f_global_write, "global COUNTER", "global"),
    (f_lambda, "sq = lambda v", "lambda"),
    (f_listcomp, "if np.sum(x) > k]", "condition known only at run time"),
    (f_sort, "y.sort()", ".sort()"),
    (f_out, "out=y", "out="),
])
def test_unsupported_construct(fn, marker, construct):
    err = expect_error(fn, marker, construct, UnsupportedSyntaxError)
    assert err.hint


def test_helper_assigning_into_callers_array_inside_an_expression_is_followed():
    # Python changes the caller's y before np.sum(y) reads it: the helper is
    # inlined before the statement (desugar/inline_functions.py), so is its write
    x = np.array([0.3, -0.5, 0.8])
    value, _ = tc.value_and_grad(f_mutates_caller)(x)
    assert value == pytest.approx(f_mutates_caller(x))
    check_grad(f_mutates_caller, [x])


def sorting_helper(a):
    b = a * 1.0
    b.sort()
    return b


def f_sorts_in_helper(x):
    return np.sum(sorting_helper(x) * x)


def test_a_refusal_inside_an_inlined_helper_points_into_the_helper():
    err = expect_error(f_sorts_in_helper, "b.sort()", ".sort()", UnsupportedSyntaxError,
                       where=sorting_helper)
    assert err.hint


@pytest.mark.parametrize("fn, marker, name, args", [
    (f_eig, "np.linalg.eig", "eig", None),
    (f_hfft, "np.fft.hfft", "hfft", None),
    (f_resize, "np.resize", "resize", None),
    (f_bad_call, "where=", "np.sum", None),
])
def test_unsupported_function_suggests_register_adjoint(fn, marker, name, args):
    err = expect_error(fn, marker, name, UnsupportedFunctionError)
    assert "register_adjoint" in str(err)


def test_missing_return():
    expect_error(f_no_return, "def f_no_return", "return")


def test_builtin_without_source():
    with pytest.raises(SourceUnavailableError, match="register_adjoint"):
        tc.grad(np.sin).compile()


def test_eval_lambda_without_source():
    fn = eval("lambda x: x * 2.0")
    with pytest.raises(SourceUnavailableError) as info:
        tc.grad(fn).compile()
    assert "source" in str(info.value)


def test_exec_function_without_source():
    namespace = {}
    exec("def g(x):\n    return x * 2.0\n", namespace)
    with pytest.raises(SourceUnavailableError) as info:
        tc.grad(namespace["g"]).compile()
    assert "g" in str(info.value)


@pytest.mark.parametrize("value, words", [
    (3, "integer"),
    (np.arange(3), "int64"),
    ({1.0, 2.0}, "set"),
    (True, "bool"),
])
def test_wrt_bad_argument_value(value, words):
    with pytest.raises(WrtError, match=words) as info:
        tc.grad(f_plain, wrt=0)(value, 2)
    assert "'x'" in str(info.value)


def test_wrt_integer_argument():
    with pytest.raises(WrtError, match="integer"):
        tc.grad(f_plain, wrt=1)(np.ones(2), 2)


@pytest.mark.parametrize("wrt", [(2,), (-3,), 5])
def test_wrt_out_of_range(wrt):
    with pytest.raises(WrtError, match="out of range"):
        tc.grad(f_plain, wrt=wrt)(np.ones(2), 2.0)


@pytest.mark.parametrize("wrt", [(), (0, 0), "x"])
def test_wrt_malformed(wrt):
    with pytest.raises(WrtError):
        tc.grad(f_plain, wrt=wrt)


# --- what a traceback shows ---------------------------------------------------------------
USER_SCRIPT = """\
import numpy as np
import tangent_ckpt as tc


def bad(x):
    y = np.linalg.eig(x)
    return np.sum(y[0])


tc.grad(bad)(np.eye(2))
"""


def _run_script(tmp_path, debug):
    import subprocess
    import sys
    script = tmp_path / "user_script.py"
    script.write_text(USER_SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    env.pop("TANGENT_CKPT_DEBUG", None)
    if debug:
        env["TANGENT_CKPT_DEBUG"] = "1"
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120).stderr


def test_traceback_ends_in_the_users_line_not_the_compiler(tmp_path):
    stderr = _run_script(tmp_path, debug=False)
    assert 'user_script.py", line 6, in bad\n    y = np.linalg.eig(x)\n' in stderr, stderr
    assert "tangent_ckpt/compiler" not in stderr and "^^^" not in stderr
    assert stderr.rstrip().endswith("user_script.py:6: no adjoint rule for np.linalg.eig "
                                    "(register one with tangent_ckpt.register_adjoint("
                                    "np.linalg.eig, rule), or compute it outside the "
                                    "differentiated path)")


def test_debug_environment_variable_keeps_the_compiler_frames(tmp_path):
    stderr = _run_script(tmp_path, debug=True)
    assert "tangent_ckpt/compiler" in stderr and "in bad\n" not in stderr


def test_cells_of_a_running_ipython_are_named_as_ipython_names_them(monkeypatch):
    import sys
    import types
    from tangent_ckpt.errors import place
    shell = types.SimpleNamespace(
        compile=types.SimpleNamespace(_filename_map={"/tmp/ipykernel_1/829720218.py": 10}))
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    assert place("/tmp/ipykernel_1/829720218.py", 2) == "Cell In[10], line 2"
    assert place("model.py", 12) == "model.py:12"
    err = TransformError("unsupported", filename="/tmp/ipykernel_1/829720218.py", lineno=2)
    assert str(err) == "Cell In[10], line 2: unsupported"
