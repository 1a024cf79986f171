"""desugar/spread_arguments.py: ``g(*(a, b), **{"k": v})`` and spreads of a name
bound once to such a display are the plain arguments ``g(a, b, k=v)``, which the
inliner then writes out; other spreads are left for the lowering."""

import numpy as np

from construct_check import check_construct
from tangent_ckpt.compiler.pipeline import desugared

RNG = np.random.default_rng(32)
X = RNG.standard_normal(4)
Y = RNG.standard_normal(4)


def weighted(x, y, scale=1.0, shift=0.0):
    return scale * np.sin(x) * y + shift


def spread_displays(x, y):
    return np.sum(weighted(*(x, y), **{"scale": 2.0, "shift": y}))


def test_a_spread_display_is_its_items():
    text = desugared(spread_displays)
    assert "weighted(" not in text and "2.0 * np.sin(x) * y + y" in text, text
    check_construct(spread_displays, (X, Y), (0, 1))


def spread_names(x, y):
    pair = (x, y)
    options = {"scale": 0.5}
    total = 0.0
    for _ in range(3):
        total = total + np.sum(weighted(*pair, **options))
    return total


def test_a_name_bound_once_to_a_display_is_its_items_in_a_loop_too():
    text = desugared(spread_names)
    assert "pair" not in text and "options" not in text, text
    check_construct(spread_names, (X, Y), (0, 1))


def rebound_item(x, y):
    pair = (x, y)
    x = x * 2.0
    return np.sum(weighted(*pair))


def test_a_display_of_a_rebound_name_is_left():
    assert "weighted(*pair)" in desugared(rebound_item)
    check_construct(rebound_item, (X, Y), (0, 1))


def spread_list_also_read(x, y):
    items = [x, y]
    first = items[0]
    return np.sum(weighted(*items)) + np.sum(first)


def test_a_list_something_else_reads_is_left():
    assert "weighted(*items)" in desugared(spread_list_also_read)
    check_construct(spread_list_also_read, (X, Y), (0, 1))


def writes_out(x, out, scale=1.0):
    out[0] = out[0] + scale * np.sin(x[0])
    return x * 2.0


def hands_keywords_on(x, **kw):
    return writes_out(x, **kw)


def keywords_handed_to_a_writer(x):
    buf = np.zeros(3) + x
    y = hands_keywords_on(x, out=buf, scale=2.0)
    return np.sum(y * buf)


def test_keywords_handed_on_to_a_helper_writing_into_one_are_followed():
    """``**kw`` handed on is the dict of the call's keywords (inlining), whose
    spread is the keywords: the helper's write into ``buf`` is the caller's."""
    text = desugared(keywords_handed_to_a_writer)
    assert "**" not in text and "buf[0] = buf[0] + 2.0 * np.sin(x[0])" in text, text
    check_construct(keywords_handed_to_a_writer, (X[:3],))
