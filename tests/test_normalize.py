"""A-normal form: one primitive per assignment, user line numbers, names after targets."""

import numpy as np
import pytest

import tangent_ckpt as tc
from source_lines import line_of
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.lower.normalize import normalize
from tangent_ckpt.errors import TransformError


def step(h, W, b):
    h = np.tanh(h @ W + b)
    return np.sum(h)


def control(x, n):
    s = 0.0
    for t in range(n):
        if t > 2:
            break
        s += np.sum(x)
    return s


def pair(x):
    a, b = x, x * 2.0
    a, b = b, a
    return np.sum(a - b)


def norm(fn):
    function, bindings, namer = normalize(parse_function(fn))
    return function


def test_one_primitive_per_assignment_named_after_the_target():
    f = norm(step)
    assigns = [s for s in f.body if isinstance(s, ir.Assign)]
    assert [s.target for s in assigns] == ["h_matmul", "h_add", "h", "step"]
    assert all(isinstance(s.expr, ir.Prim) for s in assigns)
    first = step.__code__.co_firstlineno
    assert [s.line for s in assigns] == [first + 1] * 3 + [first + 2]


def test_break_becomes_a_flag_and_loop_keeps_its_header():
    f = norm(control)
    loop = next(s for s in f.body if isinstance(s, ir.For))
    assert loop.header == "for t in range(n)"
    assert loop.break_flag is not None
    assert isinstance(loop.body[-1], ir.Break)


def test_tuple_swap_copies_before_overwriting():
    f = norm(pair)
    text = [(s.target, s.expr) for s in f.body if isinstance(s, ir.Assign)]
    targets = [t for t, _ in text]
    assert any(t.endswith("_old") for t in targets)  # a, b = b, a


class _Layer:
    def __init__(self, W, b):
        self.W, self.b = W, b


def layer_read_before_its_loop_in_a_later_trip(x, W):
    layers = [_Layer(W, 0.5 * W[0]), _Layer(W.T, W[1])]
    for t in range(2):
        if t > 0:
            x = x * np.sum(layer.b)  # the last layer of the trip before
        for layer in layers:
            x = np.tanh(layer.W @ x + layer.b)
        x = x + layers[0].b   # (the list read after the loop: the lowering's)
    return np.sum(x)


def test_a_name_read_where_only_an_earlier_trip_bound_an_object_to_it_is_refused():
    """The lowering follows an object where it is bound; read before its loop in a
    later trip of an outer loop, the generated code raised NameError when it ran.
    (Where nothing reads the list after the loop, ``layer.b`` is desugar's:
    ``object_lists.py`` binds the last item's fields after the loop.)"""
    x, W = np.array([0.3, -0.2]), np.array([[0.5, 0.1], [-0.3, 0.8]])
    with pytest.raises(TransformError, match="'layer' read where it holds what an earlier "
                                             "trip of a loop bound it to") as info:
        tc.grad(layer_read_before_its_loop_in_a_later_trip)(x, W)
    line = line_of(layer_read_before_its_loop_in_a_later_trip, "x = x * np.sum(layer.b)")
    assert f"test_normalize.py:{line}:" in str(info.value)
