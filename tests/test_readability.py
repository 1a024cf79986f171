"""The generated gradient reads like hand-written code; the exact text is pinned
so that readability changes are seen in review."""

import inspect
import re

import numpy as np

import tangent_ckpt as tc


def rnn_step(h, W, b):
    h = np.tanh(h @ W + b)
    return np.sum(h)


def simple(x, y):
    z = x * y
    return np.sum(np.sin(z))


def recurrence(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


FIRST = inspect.getsourcelines(rnn_step)[1]

EXPECTED = f'''\
def drnn_step(h, W, b, brnn_step=1.0):
    # gradient of rnn_step() (test_readability.py:{FIRST}) with respect to W, b
    # line {FIRST + 1}: h = np.tanh(h @ W + b)
    h_matmul = h @ W
    h_add = h_matmul + b
    h_old = h
    h = np.tanh(h_add)
    # only the shapes of these are read back: their memory is freed
    h_matmul = rt.stand_in(h_matmul)

    # reverse sweep
    # adjoint of line {FIRST + 2}: return np.sum(h)
    bh = rt.repeat_to_match(brnn_step, h, None, False)
    # adjoint of line {FIRST + 1}: h = np.tanh(h @ W + b)
    bh_add = bh * (1.0 - h * h)
    h = h_old
    bh_matmul = rt.unbroadcast(bh_add, h_matmul)
    bb = rt.unbroadcast(bh_add, b)
    bW = rt.matmul_adjoint_x2(bh_matmul, h, W)
    return bW, bb
'''


def test_pinned_source():
    assert tc.grad(rnn_step, wrt=(1, 2)).source == EXPECTED


def test_adjoints_named_after_user_variables():
    source = tc.grad(rnn_step, wrt=(1, 2)).source
    for name in ("bW", "bb", "bh"):
        assert re.search(rf"^\s+{name} = ", source, re.M), name


def test_comments_carry_user_line_numbers():
    first = inspect.getsourcelines(recurrence)[1]
    source = tc.grad(recurrence, wrt=(0, 1)).source
    assert f"# line {first + 1}: for t in range(n):" in source
    assert f"# line {first + 2}: h = np.tanh(h @ W)" in source
    assert f"# adjoint of line {first + 2}: h = np.tanh(h @ W)" in source


def _assigned_and_read(source):
    import ast
    tree = ast.parse(source)
    assigned, read = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (assigned.append(node.id) if isinstance(node.ctx, ast.Store) else read.add(node.id))
    return assigned, read


def test_no_dead_statements_in_simple_functions():
    for fn, wrt in ((simple, (0, 1)), (simple, (0,)), (rnn_step, (1, 2)), (rnn_step, (0,))):
        source = tc.grad(fn, wrt=wrt).source
        assigned, read = _assigned_and_read(source)
        dead = [n for n in assigned if n not in read and n != fn.__name__]
        assert not dead, f"never read: {dead}\n{source}"
        assert "pass" not in source.split()


def test_no_unused_save_when_value_not_overwritten():
    source = tc.grad(simple, wrt=(0, 1)).source
    assert "_old" not in source and "tape" not in source
    assert source.count("\n") < 25


def collected(x):
    ys = []
    for w in [1.0, 2.0, 3.0]:
        ys.append(x * w)
    return ys[0] * ys[2] + ys[1]


APPEND_LINE = inspect.getsourcelines(collected)[1] + 3

COLLECTED_FORWARD = f'''\
    # line {APPEND_LINE}: ys.append(x * w)
    ys_mul = x * 1.0
    ys_mul_2 = x * 2.0
    ys_mul_3 = x * 3.0
    # line {APPEND_LINE + 1}: return ys[0] * ys[2] + ys[1]
'''


def test_append_to_a_list_of_static_structure_binds_only_the_new_item():
    """An unrolled append loop names each item once: the earlier items keep their
    variables (no ``ys_0_2 = ys_0`` copies of the whole list per append), and an
    item the append computes is the list's in the variable it was computed in (no
    ``ys_0 = ys_mul``)."""
    g = tc.grad(collected)
    assert COLLECTED_FORWARD in g.source
    assert not re.search(r"ys_\d+_\d+", g.source) and not re.search(r"ys_\d+ = ", g.source)
    assert np.isclose(g(1.5), 3.0 * 2 * 1.5 + 2.0)
    assert np.isclose(tc.grad(collected, checkpoint=True, snapshots=2)(1.5), 3.0 * 2 * 1.5 + 2.0)


def stored_by_key(x):
    d = {}
    for k, w in zip("abc", [1.0, 2.0, 3.0]):
        d[k] = x * w
    return d['a'] * d['c'] + d['b']


STORE_LINE = inspect.getsourcelines(stored_by_key)[1] + 3

STORED_FORWARD = f'''\
    # line {STORE_LINE}: d[k] = x * w
    d_a_mul = x * 1.0
    d_b_mul = x * 2.0
    d_c_mul = x * 3.0
    # line {STORE_LINE + 1}: return d['a'] * d['c'] + d['b']
'''


def test_a_new_key_stored_into_a_dict_of_static_structure_binds_only_its_item():
    """The dict twin of the append: ``d[k] = v`` at a new key binds the new item
    only (no ``d_a_2 = d_a`` copies of the other keys per store: O(n^2) copies for
    a dict filled in an unrolled loop), in the variable the store computed it in."""
    g = tc.grad(stored_by_key)
    assert STORED_FORWARD in g.source, g.source
    assert not re.search(r"d_[abc]_\d+ = |d_[abc] = ", g.source), g.source
    assert np.isclose(g(1.5), 3.0 * 2 * 1.5 + 2.0)
    assert np.isclose(tc.grad(stored_by_key, checkpoint=True, snapshots=2)(1.5),
                      3.0 * 2 * 1.5 + 2.0)
