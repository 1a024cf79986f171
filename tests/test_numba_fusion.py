"""runtime/numba_fusion.py: which single-use temporaries go back into their reader
(so Numba fuses the arithmetic), and which must stay because a statement in
between could change what they read.  Pure syntax: runs without Numba."""

import ast
import textwrap

import numpy as np
import pytest

from tangent_ckpt.runtime.numba_backend import numba_source


def _fused(body):
    """The body of ``f_step`` after the numba backend's rewrite, without decorators."""
    source = "def f_step(t, u, k, bk, g):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    text = numba_source(source)
    return [line.strip() for line in text.splitlines()
            if line.startswith("    ") and not line.strip().startswith("#")]


def test_a_chain_of_single_use_temporaries_becomes_one_expression():
    assert _fused("""\
        a = u[1:] * 2.0
        b = a - np.tanh(k[1:])
        c = -b + 1.0
        return c
        """) == ["return -(u[1:] * 2.0 - np.tanh(k[1:])) + 1.0"]


@pytest.mark.parametrize("between", [
    "u = u.copy()",                               # rebinds a name it reads
    "u[0] = 1.0",                                 # writes into an array it reads
    "bk += g",                                    # in place
    "bk = rt.accumulate_at(bk, k, np.s_[1:], g)",  # writes into its first argument
    "k.sort()",                                   # a method may write
])
def test_a_temporary_stays_when_a_statement_in_between_may_change_what_it_reads(between):
    lines = _fused(f"""\
        a = u[1:] + bk[1:] + k[1:]
        {between}
        return a
        """)
    assert lines[0] == "a = u[1:] + bk[1:] + k[1:]"


def test_a_temporary_read_twice_or_by_a_non_elementwise_call_stays():
    lines = _fused("""\
        a = u * 2.0
        b = np.roll(u, 1)
        c = a + a
        return c + b
        """)
    assert "a = u * 2.0" in lines and "b = np.roll(u, 1)" in lines
    assert lines[-1] == "return a + a + b"


def test_a_temporary_read_inside_a_later_branch_stays():
    lines = _fused("""\
        a = u * 2.0
        if t > 0:
            u = a
        return u
        """)
    assert lines[0] == "a = u * 2.0"


def test_fused_code_computes_the_same_bits():
    body = """\
        u_item = u[1:-1]
        u_item_2 = k[1:-1]
        u_mul = 2.0 * u[1:-1]
        u_sub = u[2:] - u_mul
        u_add = u_sub + u[:-2]
        u_mul_2 = u_item_2 * u_add
        u_value_add = u_item + u_mul_2
        u = u.copy()
        u[1:-1] = u_value_add
        return u
        """
    source = "def f_step(t, u, k, bk, g):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    fused = numba_source(source).replace("@njit(cache=True)\n", "")
    assert len(ast.parse(fused).body[0].body) < len(ast.parse(source).body[0].body)
    rng = np.random.default_rng(1)
    u, k = rng.standard_normal(50), rng.random(50)
    run = {}
    for name, text in (("plain", source), ("fused", fused)):
        namespace = {"np": np}
        exec(text, namespace)
        run[name] = namespace["f_step"](0, u, k, None, None)
    assert np.array_equal(run["plain"], run["fused"])
