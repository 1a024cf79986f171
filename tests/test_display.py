"""How gradients show in Jupyter: highlighted code under a one-line summary."""

import builtins

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt import display


def rnn(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def plain(x):
    return np.sum(x ** 2)


def test_source_is_the_same_string_with_notebook_reprs():
    df = tc.grad_with_checkpointing(rnn, wrt=(1, 2), snapshots=10)
    text = df.source
    assert isinstance(text, str) and str(text) == df.compile().source
    assert text == tc.source(df)
    html = text._repr_html_()
    assert "gradient of rnn wrt W, b; loop line" in html
    assert "Revolve schedule, 10 snapshots" in html


def test_header_names_function_wrt_and_each_loop():
    line = rnn.__code__.co_firstlineno + 1
    assert tc.grad(rnn, wrt=1).source.header == \
        f"gradient of rnn wrt W; loop line {line}: taped"
    assert tc.value_and_grad(plain).source.header == "value and gradient of plain wrt x; no loops"
    header = tc.grad(rnn, wrt=1, checkpoint=True, memory_budget="1MB").source.header
    assert f"loop line {line}: Revolve schedule, snapshots fitted to a 1000000-byte" in header


def test_html_is_highlighted_by_pygments_when_installed():
    pytest.importorskip("pygments")
    html = tc.grad(plain)._repr_html_()
    assert "<span style=" in html and "def" in html and "dplain" in html


def test_html_without_pygments_is_an_escaped_pre(monkeypatch):
    real_import = builtins.__import__

    def no_pygments(name, *args, **kwargs):
        if name.startswith("pygments"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_pygments)
    html = display.highlight_html("if a < b:\n    pass\n")
    assert html == "<pre>if a &lt; b:\n    pass\n</pre>"


def test_markdown_is_a_fenced_python_block():
    md = tc.grad(plain)._repr_markdown_()
    assert md.startswith("**gradient of plain wrt x; no loops**\n\n```python\ndef dplain(")
    assert md.endswith("```\n")


def test_ipython_pretty_shows_code_not_a_quoted_string():
    pretty = pytest.importorskip("IPython.lib.pretty")
    text = pretty.pretty(tc.grad(plain).source)
    assert text.startswith("# gradient of plain wrt x") and "\\n" not in text
