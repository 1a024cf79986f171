"""compiler/desugar/checkpoint_calls.py: ``tc.checkpoint(fn, *args)`` is ``fn``'s call
inside ``with checkpointed_segment(...)``, its arguments evaluated before it by the
caller; ``tc.checkpointed_loop(step, x0, n, s)`` is ``for k in range(n): state =
step(state)`` inside ``with checkpointed_steps(...)``; a call where it cannot be
written before its statement is a call of a ``def`` of that form.  The lowering
turns the markers into a segment and a checkpointed loop: the gradients equal
central finite differences, taped and checkpointed, and a bad use is refused at
its line."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared

RNG = np.random.default_rng(11)
X = RNG.standard_normal((3, 4))
W = RNG.standard_normal((4, 4)) * 0.5
RUNS = [{}, {"checkpoint": True, "snapshots": 2}]


def block(x, W):
    a = np.tanh(x @ W)
    return x + a * 0.5


def step(h):
    return np.tanh(h) * 0.9 + 0.1


def segments(x, W, V):
    h = tc.checkpoint(block, x, W)
    g = np.sum(h * h) + np.sum(tc.checkpoint(block, h @ V, W, min_bytes=10))
    return g


def loop(x, n):
    h, _ = tc.checkpointed_loop(step, x, n, 2)
    return np.sum(h * h)


def ternary(x, W, c):
    y = x if c > 3 else tc.checkpoint(block, x, W)
    return np.sum(y * y)


def aliased(x, W):
    ck = tc.checkpoint
    y = ck(block, x, W)
    return np.sum(y * y)


def test_desugar_writes_the_segments_and_the_loop():
    assert desugared(segments) == '''\
def segments(x, W, V):
    with checkpointed_segment('block', 'tc.checkpoint(block, x, W)', None):
        a = np.tanh(x @ W)
        h = x + a * 0.5
    operand = np.sum(h * h)
    x_2 = h @ V
    with checkpointed_segment('block', 'tc.checkpoint(block, h @ V, W, min_bytes=10)', 10):
        a_2 = np.tanh(x_2 @ W)
        block_result = x_2 + a_2 * 0.5
    g = operand + np.sum(block_result)
    return g
'''
    assert desugared(loop) == '''\
def loop(x, n):
    state = x
    with checkpointed_steps(2, 'for k in range(...): state = step(state)'):
        for k in range(n):
            state = np.tanh(state) * 0.9 + 0.1
    h = state
    _ = None
    return np.sum(h * h)
'''


def in_a_while_test(x, W):
    k = 0
    while np.sum(tc.checkpoint(block, x, W)) > 0.1 * k and k < 4:
        x = x * 0.9
        k = k + 1
    return np.sum(x * x)


def in_a_short_circuit(x, W, c):
    t = c > 2 or np.sum(tc.checkpoint(block, x, W)) > 0.0
    return np.sum(x * x) * (2.0 if t else 1.0)


def in_a_conditional_test(x, W):
    y = x * 2.0 if np.sum(tc.checkpoint(block, x, W)) > 0 else x * 3.0
    return np.sum(y * y)


def test_a_call_in_a_branch_of_a_conditional_is_a_def_inlined_in_an_if_statement():
    """The call is a call of a ``def`` of the segment's form, which
    ``inline_functions.py`` inlines in the ``if`` statement the conditional
    expression is: the segment runs only where Python runs the call."""
    assert desugared(ternary) == '''\
def ternary(x, W, c):
    if c > 3:
        y = x
    else:
        with checkpointed_segment('block', 'tc.checkpoint(block, x, W)', None):
            a = np.tanh(x @ W)
            fn_result_2 = x + a * 0.5
        y = fn_result_2
    return np.sum(y * y)
'''


def test_a_call_in_a_while_test_or_a_short_circuit_is_a_segment_where_python_runs_it():
    """Refused before ("a nested function used in a condition"): the ``def``
    ``checkpoint_calls.py`` writes for a call in a ``while`` test, an
    ``and``/``or`` or a conditional expression's test is inlined where the test
    runs (``while True:`` / the test / ``if not ...: break``)."""
    text = desugared(in_a_while_test)
    assert "    while True:\n        with checkpointed_segment(" in text, text
    assert "        if not either:\n            break\n" in text, text
    text = desugared(in_a_short_circuit)
    assert "    either = c > 2\n    if not either:\n        with checkpointed_segment(" in text
    assert "def checkpoint_block" not in desugared(in_a_conditional_test)


@pytest.mark.parametrize("options", RUNS, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("fn, args, wrt", [
    (segments, (X, W, W.T), (0, 1, 2)), (loop, (X, 5), (0,)), (ternary, (X, W, 1), (0, 1)),
    (ternary, (X, W, 5), (0, 1)), (aliased, (X, W), (0, 1)),
    (in_a_while_test, (X, W), (0, 1)), (in_a_short_circuit, (X, W, 1), (0, 1)),
    (in_a_short_circuit, (X, W, 3), (0, 1)), (in_a_conditional_test, (X, W), (0, 1)),
    (in_a_conditional_test, (-X, W), (0, 1)),
], ids=["segments", "loop", "ternary-segment", "ternary-plain", "aliased", "while-test",
        "or-segment", "or-plain", "conditional-test", "conditional-test-negative"])
def test_gradients_equal_finite_differences(fn, args, wrt, options):
    check_grad(fn, args, wrt=wrt, df=tc.grad(fn, wrt=wrt, **options))
    value, _ = tc.value_and_grad(fn, wrt=wrt, **options)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_the_segments_are_in_the_generated_code():
    src = tc.grad(segments, wrt=1).source
    first = segments.__code__.co_firstlineno
    assert f"segment{first + 1} = rt.Segment(" in src
    assert f"segment{first + 2} = rt.Segment(" in src
    assert "# checkpointed segment at line" in src and "`tc.checkpoint(block, x, W)`" in src
    assert "h = segment" in src  # the segment's output is the user's variable
    src = tc.grad(loop).source
    assert "snapshots=2" in src and "state = step(state)` is checkpointed" in src


def no_function(x):
    return np.sum(tc.checkpoint())


def unknown_keyword(x):
    return np.sum(tc.checkpoint(block, x, W, mode=1))


def computed_snapshots(h, n, s):
    out, _ = tc.checkpointed_loop(step, h, n, s)
    return np.sum(out)


@pytest.mark.parametrize("fn, args, message", [
    (no_function, (X,), "checkpoint() needs the function to run"),
    (unknown_keyword, (X,), "checkpoint() got keyword 'mode'"),
    (computed_snapshots, (X, 3, 2), "num_checkpoints must be a constant int"),
])
def test_a_bad_use_is_refused_at_its_line(fn, args, message):
    with pytest.raises(tc.UnsupportedSyntaxError) as info:
        tc.grad(fn)(*args)
    assert message in str(info.value)
    assert f"test_checkpoint_calls.py:{fn.__code__.co_firstlineno + 1}:" in str(info.value)


def _dropout_step_maker(W, rng):
    mask = rng.random(3) > 0.3  # one mask for the whole sequence
    def step(h):
        return np.tanh(W @ h) * mask
    return step


def steps_from_a_factory(x, W):
    rng = np.random.default_rng(3)
    h, _ = tc.checkpointed_loop(_dropout_step_maker(W, rng), x, 4, 2)
    return np.sum(h * h)


def _noisy_block_maker(rng):
    z = rng.standard_normal(3)
    def block(h):
        return np.tanh(h) + z
    return block


def segment_from_a_factory(x):
    rng = np.random.default_rng(5)
    h = tc.checkpoint(_noisy_block_maker(rng), x + rng.standard_normal(3))
    return np.sum(h * h)


@pytest.mark.parametrize("f, args", [
    (steps_from_a_factory, (np.array([0.3, -0.2, 0.5]), np.eye(3) * 0.9 + 0.1)),
    (segment_from_a_factory, (np.array([0.3, -0.2, 0.5]),)),
])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_computed_function_runs_once_before_the_arguments(f, args, options):
    """``make(W, rng)`` in ``tc.checkpointed_loop(make(W, rng), x, n)`` ran at every
    trip (a new mask per step), and in ``tc.checkpoint(make(rng), x + draw)`` after
    the argument's draw (the draws swapped): both are bound first now, as Python
    evaluates a call's arguments."""
    value, _ = tc.value_and_grad(f, **options)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, df=tc.grad(f, **options))
