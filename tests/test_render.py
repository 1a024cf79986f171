"""compiler/render.py: generated code is printed once, one statement per line,
from syntax trees (never wrapped mid-expression, never re-parsed)."""

import ast

import numpy as np

import tangent_ckpt as tc
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.emit.rendering import render, unparse

from gradcheck import check_grad


def a_rather_long_but_ordinary_function_name(a, base):
    return np.sum(np.exp(a) * base)


def test_a_long_function_name_compiles_and_differentiates():
    # issue 11: the old renderer wrapped long lines mid-expression and the
    # generated code did not compile
    rng = np.random.default_rng(0)
    a, base = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    df = tc.grad(a_rather_long_but_ordinary_function_name, wrt=(0, 1))
    check_grad(a_rather_long_but_ordinary_function_name, (a, base), wrt=(0, 1), df=df)
    ast.parse(df.source)
    body = [line for line in df.source.splitlines() if line.strip() and
            not line.strip().startswith("#")]
    assert all(line.startswith("    ") or line.startswith("def ") for line in body), df.source


def test_helper_calls_print_as_runtime_calls_and_keep_their_helper():
    call = sx.rt("unbroadcast", "g", "x")
    assert unparse(call) == "rt.unbroadcast(g, x)"
    assert sx.calls_helper(call, tc.runtime.unbroadcast)
    assert not sx.calls_helper(sx.call("rt.unbroadcast", "g", "x"), tc.runtime.unbroadcast)


def test_several_returned_values_and_a_received_yield_print_without_extra_parentheses():
    assert unparse(sx.return_(["bh", "bW"])) == "return bh, bW"
    assert unparse(sx.assign(["bh", "bW"], sx.yield_(sx.pack(["h", "c"])))) == \
        "bh, bW = yield (h, c)"


def test_negative_constants_keep_their_precedence():
    assert unparse(sx.binop(sx.const(-0.7), "**", sx.const(2))) == "(-0.7) ** 2"


def test_renaming_works_on_names_not_on_text():
    from tangent_ckpt.compiler.code import renamed
    item = Line(sx.assign("h_old_2", sx.call("f", "h", sx.const("h_old_2"))))
    out = renamed([item], {"h_old_2": "h_old"})
    assert unparse(out[0].stmt) == "h_old = f(h, 'h_old_2')"  # the string stays as it was


def test_blocks_print_their_header_and_line_notes():
    items = [Block(sx.for_("t", sx.call("range", "n")),
                   [Line(sx.assign("h", sx.call("np.tanh", "h")), 3)], 2)]
    assert render(items, line_texts={2: "for t in range(n):", 3: "h = np.tanh(h)"}) == (
        "# line 2: for t in range(n):\n"
        "for t in range(n):\n"
        "    # line 3: h = np.tanh(h)\n"
        "    h = np.tanh(h)")


def _decorated(decorator):
    fn = ast.FunctionDef(name="f", args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                                                      kwonlyargs=[], kw_defaults=[],
                                                      kwarg=None, defaults=[]),
                         body=[], decorator_list=[decorator], returns=None, type_params=[])
    return render([Block(fn, [Line(ast.Return(value=ast.Constant(1)))])])


def test_a_short_decorator_stays_on_one_line():
    text = _decorated(ast.parse("njit(cache=True)", mode="eval").body)
    assert text.splitlines()[0] == "@njit(cache=True)"


def test_a_long_literal_decorator_is_wrapped_and_means_the_same():
    plan = tuple(("let", f"name_{i}", ("bin", "*", 2.0, f"operand_{i}")) for i in range(12))
    call = ast.parse(f"njit(cache=True, passes={plan!r})", mode="eval").body
    text = _decorated(call)
    lines = text.splitlines()
    assert len(lines) > 12 and max(len(line) for line in lines) <= 100
    assert lines[0] == "@njit(" and lines[1] == "    cache=True,"
    parsed = ast.parse(text.replace("@njit(", "@dict(", 1)).body[0].decorator_list[0]
    assert ast.literal_eval(parsed.keywords[1].value) == plan


_PRINTED_BOTH_WAYS = '''\
def f(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
        if t == 2:
            h = h * 0.5
    return np.sum(h[:, 1:] ** 2) + np.mean(np.maximum(h, 0.0))
'''


def _source_printed(monkeypatch, trials):
    from tangent_ckpt.compiler.emit import rendering as emit
    monkeypatch.setitem(emit._TRIALS, "left", trials)
    namespace = {"np": np}
    exec(compile(_PRINTED_BOTH_WAYS, "<printed both ways>", "exec"), namespace)
    return tc.grad(namespace["f"], wrt=(1, 2), checkpoint=True, snapshots=2,
                   source=_PRINTED_BOTH_WAYS).source


def test_the_public_printer_alone_prints_what_the_accelerator_prints(monkeypatch):
    """Python 3.12+ may change or drop CPython's private ast._Unparser: emit's public
    path (ast.unparse on plain copies) prints the same source on its own."""
    from tangent_ckpt.compiler.emit import rendering as emit
    if emit._Unparser is None:
        import pytest
        pytest.skip("this Python has no ast._Unparser: the public path is the only one")
    public = _source_printed(monkeypatch, None)
    accelerated = _source_printed(monkeypatch, 0)
    assert public == accelerated


def test_an_accelerator_that_prints_otherwise_is_turned_off(monkeypatch):
    from tangent_ckpt.compiler.emit import rendering as emit
    public = _source_printed(monkeypatch, None)

    class Different:
        def __init__(self, aliases=None):
            pass

        def visit(self, node):
            return "something else"

    monkeypatch.setattr(emit, "_Printer", Different)
    assert _source_printed(monkeypatch, 5) == public
    assert emit._TRIALS["left"] is None
