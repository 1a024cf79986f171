"""compiler/next_state.py: adjoint steps that start from the states before and after
their step re-run only what the reverse sweep reads."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.compiler.package.next_state import prune_recording, use_next_state

from code_items import block as Block, line as Line, lines, texts
from gradcheck import check_grad


def test_last_assignment_of_the_state_takes_the_next_state_and_the_rest_is_dropped():
    primal = lines("h_matmul = h @ W", "h_add = h_matmul + b", "h_old = h", "h = np.tanh(h_add)")
    adjoint = lines("bh_add = bh * (1.0 - h * h)", "h = h_old",
                    "bh_matmul = rt.unbroadcast(bh_add, h_matmul)",
                    "bb += rt.unbroadcast(bh_add, b)",
                    "bh = rt.matmul_adjoint_x1(bh_matmul, h, W)",
                    "bW += rt.matmul_adjoint_x2(bh_matmul, h, W)")
    out, after = use_next_state(primal, adjoint, Line("return bh, bW, bb"), ["h"])
    assert after == {"h": "h_next"}
    assert texts(out) == ["h_matmul = rt.matmul_shape(h, W)", "h_old = h", "h = h_next"]


def test_a_later_write_through_a_subscript_or_a_branch_keeps_the_recording():
    ret = Line("return bu")
    primal = lines("u = u * 2", "u = u.copy()", "u[0] = 1.0")
    assert use_next_state(primal, lines("bu = bu * u"), ret, ["u"]) == (primal, {})
    primal = [Line("u = u * 2"), Block("if c:", lines("u = u + 1", "print(u)"))]
    assert use_next_state(primal, lines("bu = bu * u"), ret, ["u"]) == (primal, {})


def test_values_the_reverse_sweep_never_reads_are_not_recorded():
    primal = [Line("y = x * w"), Line("x_old = x"), Line("x = np.sin(y)"),
              Line("cond = (np.sum(x) > 1.0)"), Block("if cond:", lines("stop = True")),
              Block("else:", lines("k = k + 1"))]
    adjoint = lines("by = bx * np.cos(y)", "x = x_old", "bw += rt.unbroadcast(by * x, w)")
    out, after = use_next_state(primal, adjoint, Line("return bx, bw"), ["x", "stop", "k"])
    # sin's adjoint reads its argument, not its result: nothing needs the state after
    assert after == {} and texts(out) == ["y = x * w", "x_old = x"]


def test_a_call_with_effects_is_never_replaced_or_dropped():
    primal = lines("loop4 = rt.CheckpointedLoop(range(m), name='loop4')",
                   "x = loop4.forward(loop4_step, x, w)")
    out, after = use_next_state(primal, lines("bx = loop4.reverse(a, bx, w)"),
                                Line("return bx"), ["x"])
    assert after == {} and texts(out) == texts(primal)
    kept = prune_recording(lines("r = np.random.normal(size=3)", "y = x.sum()",
                                 "tape.append(y)"), lines("return 0"))
    assert texts(kept) == ["r = np.random.normal(size=3)", "y = x.sum()", "tape.append(y)"]


def test_values_read_for_their_shape_get_a_shape_rule_where_one_exists():
    primal = lines("a = x * w", "s = np.sin(a)", "t = np.sum(a)", "m = -a", "c = a @ w")
    after = lines("g1 = rt.unbroadcast(g, s)", "g2 = rt.unbroadcast(g, t)",
                  "g3 = rt.unbroadcast(g, m)", "g4 = rt.unbroadcast(g, c)")
    assert texts(prune_recording(primal, after)) == [
        "a = x * w",                       # np.sum needs the value of a
        "s = rt.broadcast_shape(a)",
        "t = np.sum(a)",                   # no shape rule for a reduction: kept
        "m = rt.broadcast_shape(a)",
        "c = rt.matmul_shape(a, w)"]


def test_new_parameter_names_avoid_every_name_in_use():
    primal = lines("h_next = h + 1", "h = h_next * 2")
    out, after = use_next_state(primal, lines("bh = bh * h"), Line("return bh"), ["h"],
                                reserved={"h_next_2"})
    assert after == {"h": "h_next_3"}


# --- end to end: gradients with and without the next state ------------------------------

def lstm_like(h, c, W, n):
    for t in range(n):
        f = 1 / (1 + np.exp(-(h @ W)))
        c = f * c + (1 - f) * np.tanh(h)
        h = np.tanh(c) * f
    return np.sum(h) + np.sum(c * c)


def running_sum(x, w, n):
    cost = 0.0
    for t in range(n):
        x = np.sin(x * w) + 0.5 * x
        cost = cost + np.sum(x ** 2)
    return cost


def state_read_after_update(x, w, n):
    for t in range(n):
        x = np.tanh(x * w)
        y = x * x  # reads the new state: the next state must stand in for it
        x = x + 0.1 * y
    return np.sum(x)


def rnn_step_then_shift(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
        h = h * 0.9 + 0.1  # tanh's adjoint reads the value before this line
    return np.sum(h * h)


CASES = [  # (function, inputs, wrt, whether the adjoint step reads the next state)
    (lstm_like, lambda r: (r.normal(size=(3, 4)), r.normal(size=(3, 4)),
                           0.5 * r.normal(size=(4, 4)), 7), (0, 1, 2), True),
    (running_sum, lambda r: (r.normal(size=5), 0.5 * r.normal(size=5), 9), (0, 1), True),
    (state_read_after_update, lambda r: (r.normal(size=5), r.normal(size=5), 6), (0, 1), False),
    (rnn_step_then_shift, lambda r: (r.normal(size=(2, 4)), 0.5 * r.normal(size=(4, 4)), 6),
     (0, 1), False),
]


@pytest.mark.parametrize("fn,make,wrt,uses_next", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("schedule", ["revolve", "uniform", "online"])
def test_next_state_gradient_equals_taped_and_finite_differences(fn, make, wrt, uses_next,
                                                                 schedule):
    args = make(np.random.default_rng(3))
    df = tc.grad(fn, wrt=wrt, checkpoint=True, snapshots=3 if schedule != "uniform" else 6,
                 schedule=schedule)
    assert ("next_state=True" in df.source) == uses_next
    got = df(*args)
    taped = tc.grad(fn, wrt=wrt)(*args)
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
    check_grad(fn, args, wrt, df=df)  # central differences; inputs never changed


def while_with_break(x, w):
    k = 0
    while k < 40:
        x = np.tanh(x * w) + 0.5 * x
        if np.sum(x * x) > 30.0:
            break
        k = k + 1
    return np.sum(x * x)


def test_while_loop_with_break_records_only_what_its_adjoint_reads():
    x, w = np.array([0.3, -0.2, 0.9]), np.array([1.5, 0.7, 1.1])
    df = tc.grad(while_with_break, wrt=(0, 1), checkpoint=True, snapshots=2)
    assert "forward_while" in df.source
    adjoint_step = df.source.split("_adjoint(")[1].split("\ndef ")[0]
    assert "np.sum(x * x) > 30.0" not in adjoint_step  # the break test is not re-run
    got = df(x, w)
    for g, t in zip(got, tc.grad(while_with_break, wrt=(0, 1))(x, w)):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
    check_grad(while_with_break, (x, w), (0, 1), df=df)
