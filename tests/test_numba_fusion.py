"""compiler/backend/numba_fusion.py: which single-use temporaries go back into their reader
(so Numba computes a line in one loop), which must stay because a statement in
between could change what they read, and which fused lines get an elementwise
kernel.  Pure syntax: runs without Numba."""

import ast
import textwrap

import numpy as np
import pytest

from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.emit.rendering import render
from tangent_ckpt.compiler.naming import NUMPY, RUNTIME
from tangent_ckpt.compiler.backend.numba_fusion import fuse, kernel_of


def _items(statements):
    """Code items of parsed statements (``np`` and ``rt`` as the compiler names them)."""
    items = []
    for stmt in statements:
        if isinstance(stmt, ast.If):
            items.append(Block(sx.renamed(ast.If(test=stmt.test, body=[], orelse=[]),
                                          {"np": NUMPY, "rt": RUNTIME}), _items(stmt.body)))
        else:
            items.append(Line(sx.renamed(stmt, {"np": NUMPY, "rt": RUNTIME})))
    return items


def _fused_items(body):
    tree = ast.parse(textwrap.dedent(body))
    return fuse(_items(tree.body), {"t", "u", "k", "bk", "g"})


def _fused(body):
    """The statements of ``body`` after fusion, one per line, as emit prints them."""
    return [line.strip() for line in render(_fused_items(body)).splitlines()]


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
    fused = "def f_step(t, u, k, bk, g):\n" + textwrap.indent(render(_fused_items(body)), "    ")
    assert len(ast.parse(fused).body[0].body) < len(ast.parse(source).body[0].body)
    rng = np.random.default_rng(1)
    u, k = rng.standard_normal(50), rng.random(50)
    run = {}
    for name, text in (("plain", source), ("fused", fused)):
        namespace = {"np": np}
        exec(text, namespace)
        run[name] = namespace["f_step"](0, u, k, None, None)
    assert np.array_equal(run["plain"], run["fused"])


def test_an_elementwise_operation_becomes_a_kernel_of_its_operands():
    expr = sx.renamed(ast.parse("u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1])").body[0].value,
                      {"np": NUMPY})
    params, operands, element, key = kernel_of(expr)
    assert params == ["u_1", "k_1", "u_2"]
    assert [ast.unparse(o) for o in operands] == ["u[1:-1]", "k[1:-1]", "u[2:]"]
    assert ast.unparse(element) == "u_1 + k_1 * (u_2 - 2.0 * u_1)"


def test_kernels_computing_the_same_expression_share_a_key():
    a, b = (kernel_of(ast.parse(text).body[0].value)
            for text in ("bx * (h / 6.0)", "by_2 * (h / 6.0)"))
    assert a[3] == b[3]
    assert kernel_of(ast.parse("bx * (h / 7.0)").body[0].value)[3] != a[3]


def test_calls_that_are_not_ufuncs_are_operands_and_names_alone_are_no_kernel():
    expr = sx.renamed(ast.parse("x + np.roll(g, 1)").body[0].value, {"np": NUMPY})
    params, operands, element, _ = kernel_of(expr)
    assert ast.unparse(element) == "x + roll_1" and ast.unparse(operands[1]) == "<np>.roll(g, 1)"
    for text in ("u", "np.roll(u, 1)", "2.0 * 3.0"):
        assert kernel_of(sx.renamed(ast.parse(text).body[0].value, {"np": NUMPY})) is None
