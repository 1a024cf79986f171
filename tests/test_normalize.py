"""A-normal form: one primitive per assignment, user line numbers, names after targets."""

import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.lower.normalize import normalize


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
