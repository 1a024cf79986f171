"""lower/observers.py: statements that only observe (print, logging, a plot,
assert, raise) run in the forward sweep and are left out of the reverse sweep; a
discarded call that may change an array is refused with its line."""

import logging
import warnings

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from tangent_ckpt.errors import TangentCkptError

LOG = logging.getLogger("tangent_ckpt.tests.observers")
X = np.linspace(0.1, 0.9, 4)


def observed_loop(x, n):
    for t in range(n):
        x = np.sin(x) * 1.1
        print("step", t, np.max(x))
        LOG.info("x = %s", x)
        assert np.all(np.isfinite(x)), "diverged"
    return np.sum(x ** 2)


def test_observers_leave_the_gradient_unchanged(capsys):
    check_construct(observed_loop, (X, 5), (0,), autograd=False)


def test_print_runs_once_per_forward_step_and_not_in_the_reverse_sweep(capsys):
    tc.grad(observed_loop)(X, 5)
    assert capsys.readouterr().out.count("step") == 5
    source = tc.grad(observed_loop, checkpoint=True, snapshots=2).source
    adjoint = source.split("def loop")[2]  # the adjoint step records no observer
    assert "print(" not in adjoint and "rt.check(" not in adjoint


def observed_nested_loops(x, n):
    for t in range(n):
        for k in range(3):
            x = np.sin(x) * 1.05
        print("outer", t)
        LOG.warning("after %d", t)
    return np.sum(x ** 2)


@pytest.mark.parametrize("options", [
    {"checkpoint": True, "snapshots": 2}, {"checkpoint": True, "snapshots": 1},
    {"checkpoint": True, "snapshots": 2, "verify": True},
    {"checkpoint": True, "snapshots": 2, "nested": True},
    {"checkpoint": True, "snapshots": 2, "disk_snapshots": 1, "costs": "measure"},
    {"checkpoint": True, "memory_budget": "2kB"},
])
def test_a_print_in_a_checkpointed_step_prints_once_per_step(capsys, caplog, options):
    """The reverse sweep runs steps again from snapshots (and a cost measurement
    or a verification runs one more): their prints and log lines were printed
    again ('step 0 .. step 4, step 0, step 1').  A step's observation now runs
    only when the step first runs (rt.replaying())."""
    for f, n in ((observed_loop, 6), (observed_nested_loops, 5)):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger=LOG.name):
            g = tc.grad(f, **options)(X, n)
        out = capsys.readouterr().out
        assert out.count("step" if f is observed_loop else "outer") == n, out
        assert len(caplog.records) == n
        np.testing.assert_allclose(g, tc.grad(f)(X, n), rtol=1e-12)
        capsys.readouterr()
    assert "if not rt.replaying():" in tc.grad(observed_loop, **options).source


def failing_assert(x):
    assert np.all(x < 0), "x must be negative"
    return np.sum(x)


def test_an_assert_is_checked_in_the_forward_sweep():
    with pytest.raises(AssertionError, match="negative"):
        tc.grad(failing_assert)(X)


def checked_loop(x, n):
    for t in range(n):
        if np.any(np.abs(x) > 10.0):
            raise FloatingPointError(f"diverged at step {t}")
        x = np.sin(x) * 2.0
    return np.sum(x ** 2)


def test_a_raise_is_kept_in_the_forward_step_and_left_out_of_the_adjoint():
    source = tc.grad(checked_loop, checkpoint=True, snapshots=2).source
    step, adjoint = source.split("def loop")[1:3]
    assert "rt.raise_error(FloatingPointError(f'diverged at step {t}'))" in step
    assert "raise_error" not in adjoint
    check_construct(checked_loop, (X, 4), (0,), autograd=False)


def mutates(x):
    y = x * 2.0
    np.random.shuffle(y)
    return np.sum(y)


def test_a_call_that_may_change_an_array_is_refused():
    with pytest.raises(TangentCkptError) as info:
        tc.grad(mutates)(X)
    assert "test_observers.py:" in str(info.value)
    assert info.value.construct == "np.random.shuffle(y)"


def test_a_plotting_call_and_a_warning_are_observers():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    pyplot = pytest.importorskip("matplotlib.pyplot")
    namespace = {"np": np, "plt": pyplot, "warnings": warnings}
    source = (
        "def plotted(x):\n"
        "    y = np.sin(x)\n"
        "    plt.plot(y)\n"
        "    warnings.warn('plotted')\n"
        "    return np.sum(y)\n")
    exec(compile(source, "<plotted>", "exec"), namespace)
    f = namespace["plotted"]
    with pytest.warns(UserWarning, match="plotted"):
        g = tc.grad(f, source=source)(X)
    np.testing.assert_allclose(g, np.cos(X))
    assert "plt.plot(y)" in tc.grad(f, source=source).source
    pyplot.close("all")


def f_string_report(x, n):
    r = 0.0
    for i in range(n):
        x = np.tanh(x)
        r = r + np.sum(x)
        print(f"step {i}: r={r:.3f} max={np.max(x):.2f}")
    return r


@pytest.mark.parametrize("checkpoint", [False, True])
def test_print_of_an_f_string_with_format_specs_and_numpy_calls(capsys, checkpoint):
    """ast's unparser prints each f-string field with a fresh printer of its own
    class (an emit crash once); the fields print as written."""
    df = tc.grad(f_string_report, checkpoint=checkpoint)
    x = np.array([0.5, -1.0])
    dx = df(x, 2)
    assert 'print(f"step {i}: r={r:.3f} max={np.max(x):.2f}")' in df.source.replace("'", '"')
    assert "step 0: r=" in capsys.readouterr().out
    eps = 1e-6
    fd = [(f_string_report(x + eps * e, 2) - f_string_report(x - eps * e, 2)) / (2 * eps)
          for e in np.eye(2)]
    np.testing.assert_allclose(dx, fd, rtol=1e-6)


class _Reporting:
    def __init__(self, w):
        self.w = w

    def run(self, x):
        self.y = np.tanh(self.w * x)
        return "total {:.3f} of {}".format(np.sum(self.y), len(self.y))  # read by nobody

    def run_and_keep(self, x):
        return self.keep(np.tanh(self.w * x))  # a method storing an attribute: it runs

    def keep(self, y):
        self.y = y
        return y


def report_discarded(x, w):
    m = _Reporting(w)
    m.run(x)
    return np.sum(m.y ** 2)


def effect_in_a_discarded_return(x, w):
    m = _Reporting(w)
    m.run_and_keep(x)
    return np.sum(m.y ** 2)


@pytest.mark.parametrize("f", [report_discarded, effect_in_a_discarded_return],
                         ids=lambda f: f.__name__)
def test_the_value_a_method_called_as_a_statement_returns(f):
    """A method called as a statement whose return only computes (a report
    string: NumPy functions, builtins, ``str.format``) has its return left out
    (``.format`` was refused as an unsupported method); a return that calls the
    user's code is lowered, so what it stores is followed."""
    check_construct(f, (X, 0.7), (0, 1), autograd=False)


# --- a print whose f-string calls a function defined in the code (q28, Newton's norm) -------
def _newton(F, J, x0, n):
    print(f"0: norm = {np.linalg.norm(F(x0)):.1e}")
    for k in range(n):
        x = x0 - np.linalg.solve(J(x0), F(x0))
        print(f"{k + 1}: x = {x}, norm = {np.linalg.norm(F(x)):.1e}")
        x0 = x
    return x0


def newton_with_printed_norms(x0, p):
    def F(x):
        return np.array([x[0] ** 2 - p, x[1] ** 3 + x[0] - 2.0 * p])

    def J(x):
        return np.array([[2.0 * x[0], 0.0], [1.0, 3.0 * x[1] ** 2]])

    return np.sum(_newton(F, J, x0, 4) ** 2)


def printed_in_a_conditional_expression(x):
    def F(v):
        return v * v - 2.0
    print(f"{F(x) if x > 0 else 0.0}")
    return F(x)


def test_a_print_calling_a_function_defined_in_the_code_runs_it_in_the_forward_sweep(capsys):
    """``print(f'{norm(F(x)):.1e}')`` with ``F`` a nested def (passed down as a
    value): the call is lowered before the print, which reads its variable; it was
    refused as "a nested function used in a condition" (there is none).  Taped,
    checkpointed and central differences agree, and the forward sweep prints
    each line once."""
    x0 = np.array([1.3, 1.1])
    check_construct(newton_with_printed_norms, (x0, 2.0), (0, 1), autograd=False)
    capsys.readouterr()
    tc.grad(newton_with_printed_norms, wrt=(0, 1))(x0, 2.0)
    out = capsys.readouterr().out
    assert out.count("norm = ") == 5, out


@pytest.mark.parametrize("x", [1.5, -1.5])
def test_a_call_python_may_skip_in_a_print_runs_only_where_python_runs_it(x, capsys):
    """Refused before ("a function defined inside another, named in the
    arguments of print"): desugar writes the conditional expression as the ``if``
    statement that runs ``F(x)`` on its path only, and prints what Python prints."""
    printed_in_a_conditional_expression(x)
    expected = capsys.readouterr().out
    check_construct(printed_in_a_conditional_expression, (x,), (0,), autograd=False)
    capsys.readouterr()
    tc.grad(printed_in_a_conditional_expression)(x)
    assert capsys.readouterr().out == expected


class _PrintingStepper:
    def __init__(self, rate):
        self.rate = rate

    def step(self, w, fn):
        print("loss", fn(w))
        return w - self.rate * w


def printed_by_a_method_the_lowering_inlines(w):
    def sq(v):
        return np.sum(v * v)
    held = [_PrintingStepper(0.1)]  # (held by a list: the object stays the lowering's)
    for t in range(3):
        w = held[0].step(w, sq)
    return np.sum(w * w)


def test_a_method_the_lowering_inlines_printing_a_call_of_a_function_it_is_given(capsys):
    """The one path left to the lowering's observer (``_inlined_calls``): desugar
    writes an observer's calls of local functions as statements, but not in a
    method of an object it keeps; there the lowering inlines ``fn(w)`` before the
    print, which prints what Python prints."""
    w = np.array([0.3, 0.5])
    printed_by_a_method_the_lowering_inlines(w)
    expected = capsys.readouterr().out
    check_construct(printed_by_a_method_the_lowering_inlines, (w,), (0,), autograd=False)
    capsys.readouterr()
    tc.grad(printed_by_a_method_the_lowering_inlines)(w)
    assert capsys.readouterr().out == expected
