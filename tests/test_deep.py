"""compiler/frontend/deep.py: programs as long and as deeply nested as CPython compiles
them are differentiated (the long sums code generators write, functions of
thousands of lines); what is deeper still is refused naming the line."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import numeric_grad
from tangent_ckpt.compiler.frontend import deep
from tangent_ckpt.errors import TangentCkptError


def _function(text, name="f"):
    namespace = {"np": np}
    exec(compile(text, "<deep test>", "exec"), namespace)
    return namespace[name]


def long_sum(terms):
    """``np.sum(np.sin(x * 0.0) + np.sin(x * 1.0) + ...)``, one expression."""
    body = " + ".join(f"np.sin(x * {k}.0)" for k in range(terms))
    return f"def f(x):\n    return np.sum({body})\n"


def long_function(lines):
    """A function of ``lines`` lines, a few statements repeated, one short loop."""
    body = ["y = x * 0.5", "s = 0.0"]
    cycle = ["y = np.sin(y) * 0.5 + x * 0.25", "s = s + np.sum(y * y) * 0.001",
             "y = y * 0.99 + np.tanh(x) * 0.01"]
    while len(body) < lines - 4:
        body.append(cycle[len(body) % len(cycle)])
    body += ["for k in range(3):", "    y = np.cos(y) * 0.5", "return s + np.sum(y)"]
    return "def f(x):\n" + "".join(f"    {line}\n" for line in body)


def _check(text, x, **options):
    fn = _function(text)
    got = tc.grad(fn, source=text, **options)(x)
    np.testing.assert_allclose(got, numeric_grad(fn, [x])[0], rtol=1e-6, atol=1e-7)


def test_a_sum_of_1500_terms_is_differentiated():
    _check(long_sum(1500), np.array([0.1, 0.2, 0.3]))


def test_a_5000_line_function_is_differentiated():
    text = long_function(5000)
    assert text.count("\n") == 5000
    # checkpointed: its loop is packaged as steps, the 4 996 lines around it are taped
    _check(text, np.array([0.3, -0.2, 0.7]), checkpoint=True)


def test_an_expression_too_deep_even_for_the_deep_stack_is_refused_naming_its_line(
        monkeypatch):
    monkeypatch.setattr(deep, "RECURSION_LIMIT", 1)  # the deep stack is no deeper
    text = "def f(x):\n    y = x * 2.0\n    return np.sum(" + \
        " + ".join(f"x * {k}.0" for k in range(1500)) + ")\n"
    fn = _function(text)
    with pytest.raises(TangentCkptError) as info:
        tc.grad(fn, source=text)(np.ones(2))
    message = str(info.value)
    assert "too deep" in message and ":3" in message, message


def test_the_recursion_limit_is_restored_after_a_deep_compilation():
    import sys
    before = sys.getrecursionlimit()
    _check(long_sum(1200), np.array([0.5]))
    assert sys.getrecursionlimit() == before
