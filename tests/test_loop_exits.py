"""Loop exits written as flags and ``break`` (compiler/desugar/loop_exits.py):
``return`` inside a loop (a ``for`` over a range, a ``while``, nested loops, an
``if`` in the loop, several returns, an inlined helper) and ``for``/``while ...
else``.

Every program runs taped, checkpointed, with ``snapshots=2`` and on the online
schedule, on inputs where the loop ends early and where it runs to its end
(the value says which ``return`` ran: the early one adds 100): its value equals
the program's, its gradient central finite differences, the checkpointed
gradient the taped one.
"""

import ast
import inspect
import os
import subprocess
import sys
import textwrap

import gast
import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import assert_unchanged, numeric_grad
from tangent_ckpt.compiler.desugar.loop_exits import desugar_loop_exits

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

OPTIONS = {
    "taped": dict(checkpoint=False),
    "checkpointed": dict(checkpoint=True),
    "snapshots=2": dict(checkpoint=True, snapshots=2),
    "online": dict(checkpoint=True, schedule="online"),
}
W = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.2], [-0.3, 0.2, 0.6]])
X = np.array([0.9, 0.6, -0.4])
EARLY, LATE = 0.5, 1e6  # limits: the loop ends early, or runs to its end


# --- return inside a loop ---------------------------------------------------------
def return_in_range_loop(x, W, limit):
    for t in range(8):
        x = np.tanh(W @ x) + 0.9 * x
        if np.sum(x * x) > limit:
            return np.sum(x ** 2) * t + 100.0
    return np.sum(x)


def return_in_while_loop(x, W, limit):
    k = 0
    while k < 8:
        x = np.tanh(W @ x) + 0.9 * x
        k += 1
        if np.sum(x * x) > limit:
            return np.sum(x ** 3) + 100.0
    return np.sum(x) * k


def return_in_nested_loops(x, W, limit):
    for s in range(3):
        for t in range(3):
            x = np.tanh(W @ x) + 0.9 * x
            if np.sum(x * x) > limit:
                return np.sum(x ** 2) + 100.0
        x = x * 1.1
    return np.sum(x)


def return_in_while_in_for(x, W, limit):
    for s in range(3):
        k = 0
        while k < 3:
            x = np.tanh(W @ x) + 0.9 * x
            k += 1
            if np.sum(x * x) > limit:
                return np.sum(x ** 2) * (s + 1) + 100.0
        x = np.sin(x)
    return np.sum(x)


def two_returns_in_if_else(x, W, limit):
    for t in range(8):
        x = np.tanh(W @ x) + 0.9 * x
        if np.sum(x * x) > limit:
            if x[0] > 0.0:
                return np.sum(x ** 2) + 100.0
            else:
                return np.sum(np.cos(x)) + 100.0
        elif np.sum(x) > 50.0 * limit:
            return np.prod(x) + 100.0
    return np.sum(x)


def _converge(x, W, limit):
    for i in range(8):
        new = np.tanh(W @ x) + 0.9 * x
        if np.sum(new * new) > limit:
            return new
        x = new
    return x * 0.5


def inlined_helper_returns_in_loop(x, W, limit):
    y = _converge(x, W, limit)
    return np.sum(y * x) + 100.0 * (np.sum(y * y) > limit)


def helper_called_in_a_loop(x, W, limit):
    for k in range(3):
        y = _converge(x, W, limit)
        x = y * 0.7
    return np.sum(x ** 2) + 100.0 * (np.sum(y * y) > limit)


def _converge_pair(x, W, limit):
    for i in range(8):
        x = np.tanh(W @ x) + 0.9 * x
        if np.sum(x * x) > limit:
            return x, i
    return x * 0.5, -1


def helper_returns_a_pair_in_loop(x, W, limit):
    y, steps = _converge_pair(x, W, limit)
    return np.sum(y ** 2) * (steps + 2) + 100.0 * (steps >= 0)


def while_true_newton(x, W, limit):
    # x_{k+1} = (x_k + a / x_k) / 2 converges to sqrt(a): left only by the return
    a = np.sum(x * x) + 1.0
    r = a
    while True:
        new = 0.5 * (r + a / r)
        if abs(new - r) < 1e-10:
            return new * np.sum(W) + 100.0 * (limit < 1.0)
        r = new


def return_in_loop_over_rows(x, W, limit):
    for i, (r, q) in enumerate(zip(W, W.T)):
        x = np.tanh(r * x + q) + 0.9 * x
        if np.sum(x * x) > limit and i > 0:
            return np.sum(x ** 2) * i + 100.0
    return np.sum(x)


def return_after_continue(x, W, limit):
    for t in range(6):
        x = np.tanh(W @ x) + 0.9 * x
        if t % 2 == 0:
            continue
        if np.sum(x * x) > limit:
            return np.sum(x ** 2) + 100.0
    return np.sum(x)


def loop_in_an_if(x, W, limit):
    if limit > 0.0:
        for t in range(6):
            x = np.tanh(W @ x) + 0.9 * x
            if np.sum(x * x) > limit:
                return np.sum(x ** 2) + 100.0
        x = x * 2.0
    return np.sum(x)


class Iteration:
    def __init__(self, W):
        self.W = W

    def run(self, x, limit):
        for t in range(6):
            x = np.tanh(self.W @ x) + 0.9 * x
            if np.sum(x * x) > limit:
                return x * 2.0, 100.0
        return x, 0.0


def method_returns_in_loop(x, W, limit):
    y, bonus = Iteration(W).run(x, limit)
    return np.sum(y ** 2) + bonus


def local_function_returns_in_loop(x, W, limit):
    def run(y):
        for t in range(6):
            y = np.tanh(W @ y) + 0.9 * y
            if np.sum(y * y) > limit:
                return y * 2.0, 100.0
        return y, 0.0
    y, bonus = run(x)
    return np.sum(y ** 2) + bonus


def return_in_a_loop_writing_through_its_variable(x, W, limit):
    # unrolled per array first (desugar/tuple_loops.py): the return stays a return
    U = np.tanh(W @ x)
    V = x * 2.0
    for Z in (U, V):
        Z[0] = Z[1] * 3.0
        if np.sum(Z * Z) > limit:
            return np.sum(U * V) + 100.0
    return np.sum(U * V)


def return_in_a_loop_over_a_list(x, W, limit):
    for M in [W, W.T]:  # unrolled (desugar/static_loops.py): the break a flag of the copies
        x = np.tanh(M @ x) + 0.9 * x
        if np.sum(x * x) > limit:
            return np.sum(x ** 2) + 100.0  # (it was refused)
    return np.sum(x)


RETURNS = [return_in_range_loop, return_in_while_loop, return_in_nested_loops,
           return_in_while_in_for, two_returns_in_if_else, inlined_helper_returns_in_loop,
           helper_called_in_a_loop, helper_returns_a_pair_in_loop, while_true_newton,
           return_in_loop_over_rows, return_after_continue, loop_in_an_if,
           method_returns_in_loop, local_function_returns_in_loop,
           return_in_a_loop_writing_through_its_variable, return_in_a_loop_over_a_list]


def _check(f, args, wrt, options):
    """Value == f's, gradient == FD, and checkpointed == taped; returns the value."""
    args = list(args)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    value, grad = tc.value_and_grad(f, wrt=wrt, **options)(*args)
    assert_unchanged(before, args)
    assert np.isclose(value, f(*args), rtol=1e-12, atol=1e-14)
    for g, e in zip(grad, numeric_grad(f, args, wrt)):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
    if options.get("checkpoint"):
        taped = tc.grad(f, wrt=wrt)(*args)
        for g, e in zip(grad, taped):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
    return value


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", RETURNS, ids=lambda f: f.__name__)
def test_return_inside_a_loop_keeps_pythons_meaning(f, options):
    early = _check(f, (X, W, EARLY), (0, 1), OPTIONS[options])
    assert early > 50.0  # the return inside the loop ran
    late = _check(f, (X, W, LATE), (0, 1), OPTIONS[options])
    assert late < 50.0  # it ran to its end (while True: to the return that ends it)


def test_a_loop_with_a_return_is_checkpointed_as_a_while_like_loop():
    """``break`` makes the loop's trip count known only as it runs: the loop is
    checkpointed on the online schedule, not taped."""
    source = tc.grad(return_in_range_loop, wrt=(0, 1), checkpoint=True).source
    assert "forward_while" in source and "CheckpointedLoop" in source


def test_forward_mode_through_a_return_inside_a_loop():
    dx = np.array([0.3, -0.2, 0.5])
    for limit in (EARLY, LATE):
        value, tangent = tc.jvp(return_in_nested_loops, wrt=(0,))(X, W, limit, (dx,))
        eps = 1e-6
        fd = (return_in_nested_loops(X + eps * dx, W, limit) -
              return_in_nested_loops(X - eps * dx, W, limit)) / (2 * eps)
        assert np.isclose(value, return_in_nested_loops(X, W, limit), rtol=1e-12)
        np.testing.assert_allclose(tangent, fd, rtol=1e-6, atol=1e-8)


def test_hessian_vector_product_through_a_return_inside_a_loop():
    v = np.array([0.2, -0.1, 0.4])
    eps = 1e-5
    for limit in (EARLY, LATE):
        def gradient(x):
            return np.asarray(tc.grad(return_in_nested_loops)(x, W, limit))
        fd = (gradient(X + eps * v) - gradient(X - eps * v)) / (2 * eps)
        for checkpoint in (False, True):
            hv = tc.hvp(return_in_nested_loops, wrt=(0,), checkpoint=checkpoint)(
                X, W, limit, (v,))
            np.testing.assert_allclose(np.asarray(hv).ravel(), fd, rtol=1e-5, atol=1e-7)


def test_return_with_an_aux_value_inside_a_loop():
    def steps_taken(x, W, limit):
        for t in range(6):
            x = np.tanh(W @ x) + 0.9 * x
            if np.sum(x * x) > limit:
                return np.sum(x ** 2), t
        return np.sum(x), -1
    for limit, steps in ((EARLY, 0), (10.0, 3), (LATE, -1)):
        assert steps_taken(X, W, limit)[1] == steps
        for checkpoint in (False, True):
            (dx,), aux = tc.grad(steps_taken, wrt=(0,), has_aux=True,
                                 checkpoint=checkpoint)(X, W, limit)
            assert aux == steps
            np.testing.assert_allclose(
                dx, numeric_grad(lambda *a: steps_taken(*a)[0], (X, W, limit), (0,))[0],
                rtol=1e-6, atol=1e-8)


# --- for ... else and while ... else --------------------------------------------
# (the value is below 3 plus 100 where the else body, or the marked break, ran)
def for_else_with_break(x, W, limit):
    bonus = 0.0
    for t in range(6):
        x = np.tanh(W @ x) + 0.9 * x
        if np.sum(x * x) > limit:
            break
    else:
        x = x * 3.0
        bonus = 100.0
    return np.sum(np.tanh(x)) + bonus


def for_else_without_break(x, W, limit):
    for t in range(4):
        x = np.tanh(W @ x) + 0.5 * x
    else:
        x = x * 3.0 + 100.0 * (limit > 1.0)
    return np.sum(np.tanh(x)) + np.max(x)


def while_else_with_break(x, W, limit):
    k = 0
    bonus = 0.0
    while k < 6:
        x = np.tanh(W @ x) + 0.9 * x
        k += 1
        if np.sum(x * x) > limit:
            break
    else:
        x = np.sin(x)
        bonus = 100.0
    return np.sum(np.tanh(x)) + bonus


def break_out_of_two_loops(x, W, limit):
    # the inner loop's else continues the outer loop; a break in the inner loop
    # skips it and reaches the outer loop's break
    bonus = 0.0
    for s in range(3):
        for t in range(3):
            x = np.tanh(W @ x) + 0.9 * x
            if np.sum(x * x) > limit:
                break
        else:
            x = x * 1.1
            continue
        bonus = 100.0
        break
    return np.sum(np.tanh(x)) + bonus


def return_in_an_inner_loops_else(x, W, limit):
    for s in range(3):
        for t in range(3):
            x = np.tanh(W @ x) + 0.9 * x
            if np.sum(x * x) < limit:
                break
        else:
            return np.sum(np.tanh(x) ** 3) + 100.0
        x = x * 1.1
    return np.sum(np.tanh(x))


def return_skips_the_else(x, W, limit):
    for t in range(6):
        x = np.tanh(W @ x) + 0.9 * x
        if np.sum(x * x) > limit:
            return np.sum(np.tanh(x)) + 100.0
    else:
        x = x * 3.0
    return np.sum(np.tanh(x))


ELSES = [for_else_with_break, for_else_without_break, while_else_with_break,
         break_out_of_two_loops, return_in_an_inner_loops_else, return_skips_the_else]


@pytest.mark.parametrize("options", sorted(OPTIONS))
@pytest.mark.parametrize("f", ELSES, ids=lambda f: f.__name__)
def test_loop_else_runs_when_the_loop_ends_without_break(f, options):
    values = [_check(f, (X, W, limit), (0, 1), OPTIONS[options]) for limit in (EARLY, LATE)]
    assert (values[0] > 50.0) != (values[1] > 50.0)  # one of them took the else (or break)


# --- what the desugared function reads like ---------------------------------------
def _desugared(name):
    out = subprocess.run(
        [sys.executable, "-m", "tangent_ckpt", "dump", f"{__file__}:{name}", "--stage",
         "desugar"], capture_output=True, text=True, cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + HERE), check=True)
    return out.stdout


def test_dump_desugar_shows_the_flag_and_the_result():
    assert _desugared("return_in_nested_loops").strip() == '''\
def return_in_nested_loops(x, W, limit):
    returned = False
    for s in range(3):
        for t in range(3):
            x = np.tanh(W @ x) + 0.9 * x
            if np.sum(x * x) > limit:
                result = np.sum(x ** 2) + 100.0
                returned = True
                break
        if returned:
            break
        x = x * 1.1
    if returned:
        return result
    return np.sum(x)'''


def test_dump_desugar_shows_the_else_after_the_loop():
    assert _desugared("while_else_with_break").strip() == '''\
def while_else_with_break(x, W, limit):
    k = 0
    bonus = 0.0
    broke_out = False
    while k < 6:
        x = np.tanh(W @ x) + 0.9 * x
        k += 1
        if np.sum(x * x) > limit:
            broke_out = True
            break
    if not broke_out:
        x = np.sin(x)
        bonus = 100.0
    return np.sum(np.tanh(x)) + bonus'''


def test_a_while_true_loop_left_by_return_needs_no_flag():
    """The function still ends in a return: every way out of the loop is one."""
    text = _desugared("while_true_newton")
    assert "returned" not in text
    assert text.rstrip().endswith("        r = new\n    return result")


# --- the rewrite alone keeps Python's meaning (plain Python, no gradient) ----------
# Each function logs the path it takes into `trace`; the desugared function, run by
# CPython, must return the same value and log the same path for every input.
def _paths_nested(n, key, trace):
    for i in range(n):
        for j in range(n):
            trace.append((i, j))
            if i * n + j == key:
                return i * 10 + j
            if j == (i + key) % 3:
                break
        else:
            trace.append("inner else")
            if i == key - 2:
                return -1
            continue
        trace.append("after break")
        if (i + key) % 4 == 3:
            break
    else:
        trace.append("outer else")
        return -2
    trace.append("end")
    return -3


def _paths_while(n, key, trace):
    k = 0
    while k < n:
        k += 1
        while True:
            trace.append(k)
            if k % 4 == key % 4:
                return k
            break
        if k == key:
            break
    else:
        trace.append("else")
        return -1
    return -k


def _paths_generator(n, key, trace):
    for i in range(n):
        if i == key:
            trace.append("stop")
            return
        yield i
    trace.append("exhausted")


def _paths_bare_and_valued(n, key, trace):
    for i in range(n):
        trace.append(i)
        if key % 3 == 0 and i == key // 3:
            return
        if key % 3 == 1 and i == key // 3:
            return i * n
    return -1


@pytest.mark.parametrize("f", [_paths_nested, _paths_while, _paths_generator,
                               _paths_bare_and_valued], ids=lambda f: f.__name__)
def test_desugared_function_takes_the_same_paths(f):
    tree = gast.parse(textwrap.dedent(inspect.getsource(f)))
    desugar_loop_exits(tree.body[0])
    loops = [n for n in gast.walk(tree) if isinstance(n, (gast.For, gast.While))]
    assert loops and not any(loop.orelse for loop in loops)
    assert not any(isinstance(n, gast.Return) for loop in loops for n in gast.walk(loop))
    namespace = {}
    exec(compile(ast.fix_missing_locations(gast.gast_to_ast(tree)), "<desugared>", "exec"),
         namespace)
    g = namespace[f.__name__]
    values = set()
    for n in range(6):
        for key in range(12):
            want, got = [], []
            a, b = f(n, key, want), g(n, key, got)
            if inspect.isgenerator(a):
                a, b = list(a), list(b)
            assert (a, want) == (b, got), (n, key, ast.unparse(gast.gast_to_ast(tree)))
            values.add(repr(a))
    assert len(values) >= 4, values  # the inputs take the loops' several ways out
