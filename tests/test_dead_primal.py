"""package/dead_primal.py: tc.grad leaves out the primal values nobody reads
(a running cost), and a checkpointed step the state parts nobody reads; what
is read, observed, impure or returned stays.  Checked against finite
differences and against value_and_grad."""

import ast

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.naming import NUMPY
from tangent_ckpt.compiler.package.dead_primal import drop_dead_primal

from gradcheck import check_grad

def running_cost(x, w, n):
    cost = 0.0
    for t in range(n):
        x = np.tanh(x * w)
        cost = cost + np.sum(x ** 2)
    return cost


def cost_read_in_the_loop(x, w, n):
    cost = 0.0
    for t in range(n):
        x = np.tanh(x * w) + 0.01 * cost   # the cost feeds back: it is live
        cost = cost + np.sum(x ** 2)
    return np.sum(x)


def noisy(x, w):
    y = np.sum(x * w)
    print("loss", y)
    return np.sum(np.sin(x) * w)


def _code(source):
    return "\n".join(line.split("#")[0] for line in source.splitlines())


def test_a_running_cost_nobody_reads_is_left_out_of_the_gradient():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=5), rng.normal(size=5), 4)
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        df = tc.grad(running_cost, wrt=(0, 1), **options)
        check_grad(running_cost, args, wrt=(0, 1), df=df)
        assert "np.sum(" not in _code(df.source) and " cost_add =" not in df.source, df.source
        vg = tc.value_and_grad(running_cost, wrt=(0, 1), **options)
        value, grads = vg(*args)
        assert value == running_cost(*args)
        for g, h in zip(grads, df(*args)):
            np.testing.assert_array_equal(g, h)
        assert "np.sum(" in _code(vg.source)


def test_a_value_the_next_iteration_reads_stays():
    rng = np.random.default_rng(1)
    args = (rng.normal(size=4), rng.normal(size=4), 3)
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        df = tc.grad(cost_read_in_the_loop, wrt=(0, 1), **options)
        check_grad(cost_read_in_the_loop, args, wrt=(0, 1), df=df)
        assert "np.sum(" in _code(df.source), df.source


def test_an_observed_value_stays(capsys):
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=3), rng.normal(size=3)
    check_grad(noisy, (x, w), wrt=(0, 1))
    assert "loss" in capsys.readouterr().out


def _loop(body, head="for t in range(n): pass"):
    return Block(ast.parse(head).body[0], body)


def _lines(text):
    """Generated lines: NumPy is spelled as the compiler spells it (naming.NUMPY)."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "np":
            node.id = NUMPY
    return [Line(stmt) for stmt in tree.body]


def _text(items):
    out = []
    for item in items:
        if isinstance(item, Line):
            out.append(ast.unparse(item.stmt).replace(NUMPY, "np"))
        else:
            out.append(ast.unparse(item.head).split(":")[0] + ":")
            out += ["    " + t for t in _text(item.body)]
    return out


def test_liveness_follows_loops_branches_and_breaks():
    # c is read after the loop only where the break leaves it: it stays
    items = _lines("a = x + 1") + [_loop(
        _lines("c = a * 2") + [Block(ast.parse("if f: pass").body[0], _lines("break"))] +
        _lines("c = a * 3\nd = c + 1\ne = d * 2"))] + _lines("y = c + 0")
    kept = _text(drop_dead_primal(items, {"y"}))
    assert kept == ["a = x + 1", "for t in range(n):", "    c = a * 2", "    if f:",
                    "        break", "    c = a * 3", "y = c + 0"], kept
    # a value the next iteration reads stays; one only overwritten goes
    items = [_loop(_lines("s = s + x\nu = x * 2\nu = x * 3"))] + _lines("y = s")
    kept = _text(drop_dead_primal(items, {"y"}))
    assert kept == ["for t in range(n):", "    s = s + x", "y = s"], kept


def test_only_pure_assignments_go():
    items = _lines("a = np.random.rand(3)\nb = f(x)\nc = x[0]\nd = np.add(x, 1, out=z)\n"
                   "e = np.tanh(x)\ng = np.sum(x, axis=0)\nh = -x")
    kept = _text(drop_dead_primal(items, set()))
    assert kept == ["a = np.random.rand(3)", "b = f(x)", "c = x[0]", "d = np.add(x, 1, out=z)"]


def clock_in_the_state(x, w, n):
    t = 0.0
    total = 0.0
    for k in range(n):
        drive = 0.0 if t < 0.05 or t > 0.1 else 2.0   # the carried clock steers the step
        x = x + 0.01 * (drive - w * x ** 3)
        t = t + 0.01
        total = total + np.sum(x)
    return total / n


def test_a_state_part_the_step_itself_reads_stays_in_the_step():
    """Neither the adjoint step nor the code after the loop reads the clock ``t``,
    but the next step does (a Hodgkin-Huxley stimulus window): dropping its update
    froze the clock, a wrong checkpointed gradient."""
    x, w = np.array([0.3, -0.2, 0.5]), np.array([1.0, 0.5, 2.0])
    taped = tc.grad(clock_in_the_state, wrt=(0, 1))(x, w, 30)
    for options in ({"checkpoint": True}, {"checkpoint": True, "snapshots": 3}):
        df = tc.grad(clock_in_the_state, wrt=(0, 1), **options)
        check_grad(clock_in_the_state, (x, w, 30), wrt=(0, 1), df=df)
        for got, want in zip(df(x, w, 30), taped):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
        assert "t_add = t + 0.01" in df.source.split("_adjoint")[0]


def loop_counter_read_after(x, m):
    total = 0.0
    for k in range(m):
        total = total + np.sum(x ** 2) * (k + 1)
    return total + k          # (k: no derivative; unbound where no trip ran)


def branch_value_read_after(x, c):
    total = np.sum(np.sin(x))
    if c > 0:
        extra = c * 2
    return total + extra      # (unbound where the branch did not run)


def test_a_dropped_read_of_a_name_a_path_leaves_unbound_still_raises():
    """No gradient needs ``total + k``, so the sum goes from the primal sweep;
    its read of ``k`` stays as ``rt.check_bound(k, 'k')``: where the loop made no
    trip (or the branch did not run) the gradient raises Python's
    UnboundLocalError as the function does, and elsewhere it is the gradient."""
    x = np.array([0.3, -0.2, 0.5])
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        df = tc.grad(loop_counter_read_after, **options)
        assert "rt.check_bound(k, 'k')" in df.source or options, df.source
        with pytest.raises(UnboundLocalError):
            df(x, 0)
        check_grad(loop_counter_read_after, (x, 3), df=df)
        dg = tc.grad(branch_value_read_after, **options)
        with pytest.raises(UnboundLocalError):
            dg(x, -1.0)
        check_grad(branch_value_read_after, (x, 1.5), df=dg)
    with pytest.raises(UnboundLocalError):
        loop_counter_read_after(x, 0)
    with pytest.raises(UnboundLocalError):
        branch_value_read_after(x, -1.0)


def test_a_read_that_stays_raises_by_itself_and_has_no_check():
    """Where the read of a possibly unbound name stays in the primal sweep, it
    raises by itself: no check is added before it."""
    def kept(x, m):
        total = 0.0
        for k in range(m):
            total = total + np.sum(x ** 2)
        return np.sin(total * k)    # the adjoint of sin reads the product: it stays
    assert "check_bound" not in tc.grad(kept).source
    with pytest.raises(UnboundLocalError):
        tc.grad(kept)(np.array([0.3, -0.2]), 0)
