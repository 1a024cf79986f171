"""desugar/held_lists.py: the lists a function makes and holds under one name,
and what may become their items.  The fence reads a loop variable over such a
list as one of those items (``view_facts.ItemOf``): ``[2 * w for w in ws]`` of
a list of arrays is NumPy arithmetic, new arrays, so the gradient step
``ws[i] -= lr * gs[i]`` shares nothing with ``gs`` -- it was refused as "a write
into 'ws' may also change 'gs'".  Where an item may be a list, or the list is
held elsewhere too, the write is still refused."""

import builtins
import textwrap

import gast
import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.desugar.held_lists import held_lists
from tangent_ckpt.errors import TangentCkptError

RUNS = [{}, {"checkpoint": True, "snapshots": 2}]
U = np.array([0.3, -0.7, 1.2])


def _held(source):
    namespace = {"np": np, "keep": lambda v: v}
    resolve = lambda name: namespace.get(name, getattr(builtins, name, None))  # noqa: E731
    fnode = gast.parse(textwrap.dedent(source)).body[0]
    return {name: sorted(str(None if v is None else type(v).__name__) for v in values)
            for name, values in held_lists(fnode, resolve).items()}


def test_a_list_made_appended_and_read_is_held_with_its_items():
    assert _held("""
        def f(x):
            ws = [x * 1.0, x ** 2]
            ws.append(np.sin(x))
            ws[0] = x * 3.0
            ws[1] += x
            ws.extend(keep(x))
            return sum(np.sum(w) for w in ws) + len(ws)
        """) == {"ws": ["BinOp", "BinOp", "BinOp", "Call", "None"]}  # None: not known


@pytest.mark.parametrize("kept", [
    "zs = ws", "d = {'a': ws}", "g = lambda: ws[0]", "keep(ws)", "ws = x",
], ids=["another name", "a container", "a closure", "a call", "a non-list binding"])
def test_a_list_kept_elsewhere_is_not_held(kept):
    assert "ws" not in _held("def f(x):\n    ws = [x * 1.0]\n    " + kept +
                             "\n    return ws[0]\n")


def sgd_from_a_comprehension(x):
    ws = [x * 1.0, x ** 2]
    for t in range(4):
        gs = [2 * w for w in ws]
        for i in range(len(ws)):
            ws[i] -= 0.1 * gs[i]
    return sum(np.sum(w ** 2) for w in ws)


def sgd_from_appends(x):
    ws = [x * 1.0, np.tanh(x)]
    for t in range(4):
        gs = []
        for w in ws:
            gs.append(2 * w)
        for i in range(len(ws)):
            ws[i] -= 0.1 * gs[i]
    return sum(np.sum(w) for w in ws)


def sgd_over_indices(x):
    ws = [x * 1.0, x ** 2]
    gs = [2 * ws[j] for j in range(2)]
    for i in range(2):
        ws[i] -= 0.1 * gs[i]
    return np.sum(ws[0] * ws[1])


@pytest.mark.parametrize("options", RUNS, ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [sgd_from_a_comprehension, sgd_from_appends, sgd_over_indices],
                         ids=lambda f: f.__name__)
def test_a_gradient_step_over_a_list_of_arrays_is_differentiated(f, options):
    check_grad(f, (U.copy(),), df=tc.grad(f, **options))


def items_that_are_lists(x):
    ws = [[x * 1.0], [x * 2.0]]
    gs = [2 * w for w in ws]  # lists repeated: gs[0] holds ws[0][0] twice
    ws[0][0] += 1.0
    return np.sum(gs[0][1]) + np.sum(ws[0][0])


def a_list_appended_to_the_list(x):
    ws = [x * 1.0]
    inner = [x * 3.0]
    ws.append(inner)
    gs = [2 * w for w in ws]
    inner[0] += 1.0
    return np.sum(gs[1][0] * x) + np.sum(gs[0])


def items_kept_as_they_are(x):
    ws = [x * 1.0, x * 2.0]
    gs = [w for w in ws]
    ws[0] += 1.0
    return np.sum(gs[0] * x)


@pytest.mark.parametrize("f", [items_that_are_lists, a_list_appended_to_the_list,
                               items_kept_as_they_are], ids=lambda f: f.__name__)
def test_items_that_share_are_still_refused(f):
    with pytest.raises(TangentCkptError, match=r"test_held_lists.py:\d+: a write into"):
        tc.grad(f)(U.copy())
