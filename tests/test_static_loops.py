"""desugar/static_loops.py: a ``for`` loop over a tuple or list display in its
header (``enumerate`` and ``zip`` of displays, strings and constant ranges too),
or over a list, tuple or dict the call gives and the function only reads, is its
body once per item, a constant loop variable folded into its copy."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError


def keys_then_rebound(x, y):
    d = {"enc": x, "dec": y}
    s = 0.0
    for k in ("enc", "dec"):
        s = s + np.sum(d[k] ** 2)
    k = 3.0  # bound elsewhere too: the loop's copies still read their keys
    return s * k


def counter_decides_a_branch(a, b):
    s = 1.0
    for k, v in enumerate([a, b], 1):
        if k == 1:
            s = s + np.sum(np.sin(v))
        else:
            s = s * np.sum(v * v)
    return s * k  # the last counter after the loop, as in Python


def zipped_key_and_weight(x):
    d = {}
    for k, w in zip("abc", [1.0, 2.0, 3.0]):
        d[k] = x * w
    return np.sum(d["a"] * d["c"]) + np.sum(d["b"])


def item_rebound_by_the_loop_variable(a, b):
    s = 0.0
    for a in (b, a):  # the second item is the a of before the loop
        s = s + np.sum(a * a) * s + np.sum(a)
    return s


def nested_pairs(W1, b1, W2, b2):
    h = np.array([0.3, -0.2])
    for W, b in ((W1, b1), (W2, b2)):
        h = np.tanh(W @ h + b)
    return np.sum(h)


FUNCTIONS = [keys_then_rebound, counter_decides_a_branch, zipped_key_and_weight,
             item_rebound_by_the_loop_variable]


@pytest.mark.parametrize("f", FUNCTIONS)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_unrolled_copies_compute_what_python_does(f, options):
    rng = np.random.default_rng(0)
    args = tuple(rng.normal(size=2) for _ in range(f.__code__.co_argcount))
    wrt = tuple(range(len(args)))
    value, _ = tc.value_and_grad(f, wrt=wrt, **options)(*args)
    np.testing.assert_allclose(value, f(*(a.copy() for a in args)), rtol=1e-12)
    check_grad(f, args, wrt=wrt)


def test_pairs_unpacked_per_copy():
    rng = np.random.default_rng(1)
    args = (rng.normal(size=(2, 2)), rng.normal(size=2), rng.normal(size=(2, 2)),
            rng.normal(size=2))
    check_grad(nested_pairs, args, wrt=(0, 1, 2, 3))


def test_the_loop_is_gone_and_a_key_read_is_a_constant():
    text = desugared(keys_then_rebound)
    assert "for k in" not in text
    assert "d['enc']" in text and "d['dec']" in text


def left_early(a, b, c):
    s = 0.0
    for k, v in enumerate((a, b, c)):
        s = s + np.sum(v * v) * (s + 1.0)
        if np.sum(v) > 0.0:
            break  # the later copies run under `if not stop:`
        s = s * 0.5
    return s + k  # the counter of the copy that broke, as in Python


def skipped_by_data(a, b, c):
    s = 1.0
    for v in (a, -b, c.T):  # -b, c.T: evaluated before the loop, as Python makes the tuple
        if np.sum(v) > 0.0:
            if np.sum(v) > 1.0:
                continue
            s = s + np.sum(np.sin(v))
            continue
        s = s * np.sum(np.cos(v)) + 1.0
    return s


def skipped_by_the_counter(a, b, c):
    s = 1.0
    for k, v in enumerate([a, b, c]):
        if k == 1:
            continue  # a condition of the copy's constant: decided when lowering
        s = s * np.sum(np.tanh(v)) + 2.0
    return s


EXITS = [left_early, skipped_by_data, skipped_by_the_counter]


@pytest.mark.parametrize("f", EXITS)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_break_and_continue_in_the_copies_compute_what_python_does(f, options):
    for seed in range(4):  # the exits taken by some items, by others
        rng = np.random.default_rng(seed)
        args = tuple(rng.normal(size=(2, 2)) for _ in range(3))
        value, _ = tc.value_and_grad(f, wrt=(0, 1, 2), **options)(*args)
        np.testing.assert_allclose(value, f(*(a.copy() for a in args)), rtol=1e-12)
        check_grad(f, args, wrt=(0, 1, 2))


def test_a_loop_with_break_or_continue_is_unrolled_with_a_flag():
    text = desugared(left_early)
    assert "for k, v in" not in text and "stop = True" in text and "if not stop:" in text
    assert "k = 2" in text  # (read after the loop: bound in each copy)
    text = desugared(skipped_by_data)
    assert "for v in" not in text and "continue" not in text
    assert "item = -b" in text and "item_2 = c.T" in text


def test_a_break_inside_a_try_keeps_the_loop():
    def inside_a_try(a, b):
        s = 0.0
        for v in (a, b):
            try:
                if s > 1.0:
                    break
            finally:
                s = s + np.sum(v)
        return s
    assert "for v in (a, b)" in desugared(inside_a_try)


def layers(params, x):
    h = x
    for W, b in params:
        h = np.tanh(W @ h + b)
    for l in range(len(params)):
        W, b = params[l]
        if l == 0:
            h = h * 2.0
        h = h + W @ b
    return np.sum(h) * np.sum(W)  # W: the last layer's, as in Python


def by_key(p, x):
    s = 0.0
    for k, v in p.items():
        s = s + np.sum(v * x) * len(k)
    for k in p.keys():
        s = s * np.sum(p[k])
    for v in p.values():
        s = s + np.sum(v)
    return s


def _params():
    rng = np.random.default_rng(2)
    return [(rng.normal(size=(2, 2)), rng.normal(size=2)) for _ in range(2)], \
        rng.normal(size=2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_loop_over_a_given_list_or_dict_is_unrolled_per_item(options):
    params, x = _params()
    value, (grads,) = tc.value_and_grad(layers, wrt=(0,), **options)(params, x)
    np.testing.assert_allclose(value, layers(params, x), rtol=1e-12)
    eps = 1e-6
    W = params[1][0].copy()
    W[0, 1] += eps
    up = layers([params[0], (W, params[1][1])], x)
    W[0, 1] -= 2 * eps
    down = layers([params[0], (W, params[1][1])], x)
    np.testing.assert_allclose(grads[1][0][0, 1], (up - down) / (2 * eps), rtol=1e-6)
    p = {"W": x * 2.0, "bias": x - 1.0}
    value, (grads,) = tc.value_and_grad(by_key, wrt=(0,), **options)(p, x)
    np.testing.assert_allclose(value, by_key(p, x), rtol=1e-12)
    q = dict(p, bias=p["bias"] + np.array([eps, 0.0]))
    r = dict(p, bias=p["bias"] - np.array([eps, 0.0]))
    np.testing.assert_allclose(grads["bias"][0], (by_key(q, x) - by_key(r, x)) / (2 * eps),
                               rtol=1e-6)


def test_a_given_list_written_into_keeps_its_loop():
    from tangent_ckpt.container_args import structure_of

    def written(params, x):
        for W, b in params:
            x = np.tanh(W @ x + b)
        params[0] = (params[0][0], x)
        return np.sum(x)
    params, x = _params()
    assert "for W, b in params" in desugared(written, {0: structure_of(params)})
    text = desugared(layers, {0: structure_of(params)})
    assert "for " not in text and "W, b = params[1]" in text


def test_after_the_loop_a_variable_holds_the_last_item_whatever_the_earlier_ones():
    def mixed(x, y):
        s = 0.0
        for v in (0.1, x):
            s = s + np.sum(v)
        return s * np.sum(v * y)  # v is x here, not 0.1
    x, y = np.array([0.3, -0.5]), np.array([1.5, 2.0])
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        value, _ = tc.value_and_grad(mixed, wrt=(0, 1), **options)(x, y)
        np.testing.assert_allclose(value, mixed(x, y), rtol=1e-12)
        check_grad(mixed, (x, y), wrt=(0, 1), df=tc.grad(mixed, wrt=(0, 1), **options))


# --- a loop over a name bound once to a display ---------------------------------
def over_a_local_list(a, b, c):
    ws = [a, b]
    s = 0.0
    for k, w in enumerate(ws):
        s = s + np.sum(w * c) * (k + 1)
    for w in ws:
        s = s * np.sum(np.sin(w))
    return s + len(ws)


def over_a_local_dict(a, b, c):
    d = {"x": a, "y": b}
    s = 1.0
    for k, v in d.items():
        s = s + np.sum(v ** 2) * (2.0 if k == "x" else 3.0)
    for k in d:
        s = s * np.sum(d[k])
    for v in d.values():
        s = s + np.sum(np.cos(v))
    return s


def names_in_a_time_loop(a, b, c):
    names = ("enc", "dec")
    p = {"enc": a, "dec": b}
    h = c[0]
    for t in range(3):
        for n in names:
            h = np.tanh(p[n] @ h)
    return np.sum(h)


def written_in_place_after_the_display(a, b, c):
    ws = [a, b]
    a[0, 0] = 3.0  # the list holds the same array: the loop sees the write
    s = 0.0
    for w in ws:
        s = s + np.sum(w * w * c)
    return s


def indexed_by_the_counter(a, b, c):
    ws = (a, b, c)
    s = 0.0
    for l in range(len(ws)):
        s = s + np.sum(ws[l]) * l
        if l == 1:
            continue
        s = s * 0.5
    return s


def displayed_in_a_time_loop(a, b, c):
    s = 0.0
    for t in range(3):
        ws = (a, b * c)  # bound in the loop's block, read after it there
        for w in ws:
            s = s + np.sum(w * w) * 0.5
            a = a * 1.5 + c  # the next copy reads the a of the display
    return s


def displayed_in_a_branch(a, b, c):
    s = 0.0
    if np.sum(c) > -100.0:
        d = {"x": a, "y": b}
        a = a * 2.0
        for k, v in d.items():
            s = s + np.sum(np.cos(v) * a)
    return s


def displayed_in_an_unrolled_loop(a, b, c):
    s = 0.0
    for k, v in enumerate([a, b]):
        ws = [v, c, k]  # k: a constant in each copy of the outer loop, held there
        for w in ws:
            s = s + np.sum(w * v)
    return s


LOCAL = [over_a_local_list, over_a_local_dict, names_in_a_time_loop,
         written_in_place_after_the_display, indexed_by_the_counter,
         displayed_in_a_time_loop, displayed_in_a_branch, displayed_in_an_unrolled_loop]


@pytest.mark.parametrize("f", LOCAL)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_loops_over_a_local_display_compute_what_python_does(f, options):
    rng = np.random.default_rng(5)
    args = tuple(rng.normal(size=(2, 2)) for _ in range(3))
    value, _ = tc.value_and_grad(f, wrt=(1, 2), **options)(*(a.copy() for a in args))
    np.testing.assert_allclose(value, f(*(a.copy() for a in args)), rtol=1e-12)
    check_grad(f, args, wrt=(1, 2))


@pytest.mark.parametrize("f", LOCAL)
def test_a_loop_over_a_local_display_is_unrolled(f):
    assert "for " not in desugared(f).replace("for t in range(3)", "")


def rebound_after_the_display(a, b, c):
    ws = [a, b * 2.0]  # b * 2.0: made here; a: the list holds the a of here
    a = a * 2.0
    s = 0.0
    for w in ws:
        s = s + np.sum(w * w * c) + np.sum(a)
    return s


def test_items_are_the_objects_the_display_made():
    text = desugared(rebound_after_the_display)
    assert "ws_0 = a\n    ws_1 = b * 2.0\n    ws = [ws_0, ws_1]\n" in text
    assert "for w in" not in text
    rng = np.random.default_rng(6)
    args = tuple(rng.normal(size=(2, 2)) for _ in range(3))
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        value, _ = tc.value_and_grad(rebound_after_the_display, wrt=(0, 1, 2), **options)(*args)
        np.testing.assert_allclose(value, rebound_after_the_display(*args), rtol=1e-12)
    check_grad(rebound_after_the_display, args, wrt=(0, 1, 2))


def test_a_loop_changing_its_variable_in_place_keeps_the_loop():
    def stepped(u, g):
        ws = [u * 1.0, u * 2.0]
        for w in ws:
            w -= 0.1 * g  # the refusal of the loop names the form that does it
        return np.sum(ws[0])
    with pytest.raises(TangentCkptError, match=r"for k in range\(len\(ws\)\): ws\[k\] -="):
        tc.grad(stepped, wrt=(1,))(np.ones(2), np.ones(2))


def rebound_by_the_target_over_a_call(a, b):
    s = 0.0
    for a in (np.tanh(b), a):  # left for the lowering; the second item is the a of before
        s = s + np.sum(a * a) * s + np.sum(a)
    return s


def rebound_by_the_body_over_calls(a, b, c):
    s = 0.0
    for k, w in enumerate([np.sin(a), b, c @ a]):
        s = s + (k + 1.0) * np.sum(w * w)
        b = b * 2.0  # the second item is the b of before the loop
    return s


def rebound_in_pairs(a, b, c):
    s = 0.0
    for u, v in ((a, np.cos(b)), (b, c)):
        s = s + np.sum(u @ v)
        a, b = b, a + c  # a and b of before the loop in the later pair
    return s


HELD = [rebound_by_the_target_over_a_call, rebound_by_the_body_over_calls, rebound_in_pairs]


@pytest.mark.parametrize("f", HELD)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_rebound_item_of_a_display_left_as_a_loop_is_the_object_of_before(f, options):
    rng = np.random.default_rng(7)
    args = tuple(rng.normal(size=(2, 2)) for _ in range(f.__code__.co_argcount))
    wrt = tuple(range(len(args)))
    value, _ = tc.value_and_grad(f, wrt=wrt, **options)(*(a.copy() for a in args))
    np.testing.assert_allclose(value, f(*(a.copy() for a in args)), rtol=1e-12)
    check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **options))


def test_a_header_display_of_calls_is_made_before_the_copies_in_its_order():
    text = desugared(rebound_by_the_body_over_calls)
    assert "for " not in text
    assert "item = np.sin(a)\n    b_item = b\n    item_2 = c @ a\n    w = item\n" in text
    text = desugared(rebound_by_the_target_over_a_call)
    assert "item = np.tanh(b)\n    a_item = a\n    a = item\n" in text
    text = desugared(rebound_in_pairs)
    assert "a_item = a\n    item = np.cos(b)\n    b_item = b\n    u = a_item\n" in text


def test_an_item_of_a_container_the_loop_only_reads_is_read_in_each_copy():
    def named(a, b):
        ws = [a * 1.0, b * 2.0]
        s = 0.0
        for k, w in (("a", ws[0]), ("b", ws[1])):
            s = s + np.sum(w) * (2.0 if k == "a" else 3.0)
        return s
    text = desugared(named)
    assert "item" not in text and "w = ws[1]" in text
    assert "item_2 = ws[1]" in desugared(items_halved_after_the_read)


def test_a_rebound_item_is_held_before_the_loop_the_lowering_unrolls():
    def rebound_in_a_try(a, b):
        s = 0.0
        for w in (np.tanh(a), b):  # (a break in a try: left as a loop)
            try:
                if s > 1.0:
                    break
            finally:
                s = s + np.sum(w)
            b = b * 2.0
        return s
    text = desugared(rebound_in_a_try)
    assert "b_item = b\n    for w in (np.tanh(a), b_item):" in text


def items_stored_over(x):
    ws = [x, 2.0 * x]
    s = 0.0
    for w in (ws[0], ws[1]):  # made before the loop: the second is the old ws[1]
        ws[1] = w * 3.0
        s = s + np.sum(w * ws[1])
    return s + np.sum(ws[1])


def items_halved_after_the_read(x):
    ws = [x * 1.0, 2.0 * x]
    s = 0.0
    for w in (ws[0], ws[1]):  # the second is the ws[1] of before the loop
        s = s + np.sum(w * ws[1])
        ws[1] = ws[1] * 0.5
    return s


def drawn_in_the_header(a):
    rng = np.random.default_rng(3)
    s = 0.0
    for k, z in enumerate([rng.normal(size=3), a * 2.0, rng.normal(size=3)]):
        s = s + np.sum(a * z) ** 2 * (k + 1.0)
    return s


@pytest.mark.parametrize("f", [items_stored_over, items_halved_after_the_read,
                               drawn_in_the_header])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_header_display_of_calls_and_items_computes_what_python_does(f, options):
    x = np.array([0.3, -0.2, 0.5])
    value, _ = tc.value_and_grad(f, **options)(x.copy())
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)
    check_grad(f, (x,), df=tc.grad(f, **options))


class _Dense:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def forward(self, x):
        return np.tanh(self.W @ x + self.b)


def test_a_header_display_of_objects_keeps_its_loop():
    def objects(W1, b1, W2, b2, x):
        for layer in [_Dense(W1, b1), _Dense(W2, b2)]:
            x = layer.forward(x)
        return np.sum(x)
    assert "for layer in [" in desugared(objects)


def appended_in_straight_code(a, b, c):
    ws = []
    ws.append(a)
    h = np.tanh(a * b)
    ws.append(h)
    ws.append(b * 2.0)  # moved to the display: no statement between
    a = a * 3.0  # the list holds the a of its append
    s = 0.0
    for w in ws:
        s = s + np.sum(w * w * c) + np.sum(a)
    return s + len(ws)


def appended_around_a_write(a, b, c):
    ws = []
    ws.append(a * 2.0)  # made before the write below: held where it is appended
    a[0, 0] = 5.0
    ws.append(a)  # the same array, written
    ws.append((c, -1.0))
    s = 0.0
    for w in ws[:2]:
        s = s + np.sum(w * b)
    for k, (m, f) in enumerate(ws[2:]):
        s = s + f * np.sum(m)
    for w in ws[:2]:
        s = s + np.sum(w * w)
    return s


def appended_in_a_time_loop(a, b, c):
    s = 0.0
    for t in range(3):
        feats = []
        feats.append(np.tanh(a))
        feats.append((b, c))
        for f in feats:
            s = s + np.sum(np.sum(f, axis=0) * a)
        a = a * 0.9
    return s


def appended_around_a_write_through_an_alias(a, b, c):
    v = a
    ws = []
    ws.append(a * 2.0)  # made before the write through v: held where it is appended
    v[0, 0] = 5.0
    ws.append(b)
    s = 0.0
    for w in ws:
        s = s + np.sum(w * w * c)
    return s


APPENDED = [appended_in_straight_code, appended_around_a_write, appended_in_a_time_loop,
            appended_around_a_write_through_an_alias]


@pytest.mark.parametrize("f", APPENDED)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_list_built_by_appends_in_straight_code_computes_what_python_does(f, options):
    rng = np.random.default_rng(8)
    args = tuple(rng.normal(size=(2, 2)) for _ in range(3))
    value, _ = tc.value_and_grad(f, wrt=(1, 2), **options)(*(a.copy() for a in args))
    np.testing.assert_allclose(value, f(*(a.copy() for a in args)), rtol=1e-12)
    check_grad(f, args, wrt=(1, 2), df=tc.grad(f, wrt=(1, 2), **options))


def test_a_list_built_by_appends_in_straight_code_is_a_display():
    text = desugared(appended_in_straight_code)
    assert ("h = np.tanh(a * b)\n    ws_0 = a\n    ws_2 = b * 2.0\n"
            "    ws = [ws_0, h, ws_2]\n") in text
    assert "for w in" not in text
    text = desugared(appended_around_a_write)
    assert "ws_0 = a * 2.0\n    a[0, 0] = 5.0\n    ws = [ws_0, a, (c, -1.0)]\n" in text


def appended_in_a_loop_over_a_given_list(params, x):
    scaled = []
    for W, b in params:
        scaled.append((W * 0.5, b + 1.0))
    outs = [np.tanh(W @ x + b) for W, b in scaled]
    for W, b in scaled:
        x = np.tanh(W @ x + b)
    return np.sum(outs[0] * outs[1]) + np.sum(x)


def appended_per_index_of_a_given_list(params, x):
    hs = []
    for i in range(len(params)):
        x = np.tanh(params[i][0] @ x)
        hs.append(x)
    x = x * 2.0  # rebound after the appends: the list holds the x of each trip
    return sum(np.sum(h * x) for h in hs)


IN_UNROLLED = [appended_in_a_loop_over_a_given_list, appended_per_index_of_a_given_list]


@pytest.mark.parametrize("f", IN_UNROLLED)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_list_appended_in_an_unrolled_loop_computes_what_python_does(f, options):
    from gradcheck import check_structured_leaves

    params, x = _params()
    value, got = tc.value_and_grad(f, wrt=(0, 1), **options)(params, x)
    np.testing.assert_allclose(value, f(params, x), rtol=1e-12)
    check_structured_leaves(f, (params, x), (0, 1), got)


def test_a_list_appended_in_an_unrolled_loop_is_a_display_its_loops_unroll():
    from tangent_ckpt.container_args import structure_of

    params, _ = _params()
    text = desugared(appended_in_a_loop_over_a_given_list, {0: structure_of(params)})
    assert "for " not in text
    assert ("scaled_1_0 = W * 0.5\n    scaled_1_1 = b + 1.0\n"
            "    scaled = [(scaled_0_0, scaled_0_1), (scaled_1_0, scaled_1_1)]\n") in text
    text = desugared(appended_per_index_of_a_given_list, {0: structure_of(params)})
    assert "for " not in text and "hs = [hs_0, hs_1]" in text


def test_a_comprehension_over_a_local_display_is_unrolled():
    def over_display(a, b, x):
        ws = [a, b]
        d = {"a": a, "b": b}
        return np.sum([np.dot(w, x) for w in ws]) + sum(np.sum(v) for v in d.values())
    text = desugared(over_display)
    assert "for " not in text and "w = a\n" in text and "v = b\n" in text


def rmsprop_over_items(W, X, y):
    params = {"W": W * 1.0}
    cache = {"W": np.zeros_like(W)}
    for t in range(3):
        grads = {"W": X.T @ (X @ params["W"] - y)}
        for name, p in params.items():  # Python reads params[name] when it gets there
            cache[name] = 0.9 * cache[name] + 0.1 * grads[name] ** 2
            params[name] = p - 0.01 * grads[name] / (np.sqrt(cache[name]) + 1e-6)
    return np.sum((X @ params["W"] - y) ** 2)


def adagrad_over_indices(W, b):
    ps = [W * 1.0, b * 1.0]
    acc = [np.zeros_like(W), np.zeros_like(b)]
    for t in range(3):
        gs = [np.sin(ps[0]), ps[1] * ps[0][0]]
        for i in range(len(ps)):
            acc[i] += gs[i] ** 2
            ps[i] -= 0.1 * gs[i] / np.sqrt(acc[i] + 1e-8)
    s = 0.0
    for p in ps:
        s = s + np.sum(p ** 2)
    return s


def momentum_over_keys(W, b, X, y):
    params = {"W": W * 1.0, "b": b * 1.0}
    vel = {"W": np.zeros_like(W), "b": np.zeros_like(b)}
    for t in range(3):
        r = X @ params["W"] + params["b"] - y
        grads = {"W": X.T @ r, "b": np.sum(r)}
        for k in params:
            vel[k] = 0.9 * vel[k] - 0.05 * grads[k]
            params[k] = params[k] + vel[k]
    return np.sum((X @ params["W"] + params["b"] - y) ** 2)


def _optimiser_args(f):
    rng = np.random.default_rng(9)
    X, y, W = rng.normal(size=(5, 3)), rng.normal(size=5), 0.1 * rng.normal(size=3)
    if f is rmsprop_over_items:
        return (W, X, y), (0, 1)
    if f is adagrad_over_indices:
        return (rng.normal(size=(3, 3)), rng.normal(size=3)), (0, 1)
    return (W, 0.2, X, y), (0, 1, 2)


WRITTEN = [rmsprop_over_items, adagrad_over_indices, momentum_over_keys]


@pytest.mark.parametrize("f", WRITTEN)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_an_optimiser_over_a_local_list_or_dict_computes_what_python_does(f, options):
    args, wrt = _optimiser_args(f)
    value, _ = tc.value_and_grad(f, wrt=wrt, **options)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **options))


def test_a_loop_over_a_local_container_of_fixed_structure_is_unrolled():
    text = desugared(momentum_over_keys)
    assert "for k in" not in text
    assert "vel['b'] = 0.9 * vel['b'] - 0.05 * grads['b']" in text
    text = desugared(adagrad_over_indices)
    assert "for i in" not in text and "for p in" not in text
    assert "ps[1] -= 0.1 * gs[1] / np.sqrt(acc[1] + 1e-08)" in text and "p = ps[1]" in text


def test_a_container_whose_structure_may_change_keeps_its_loop():
    def key_added(a, b):
        d = {"a": a, "b": b}
        d["c"] = a * b  # a new key
        s = 0.0
        for k in d:
            s = s + np.sum(d[k])
        return s

    def bound_to_another_length(a, b, c):
        ws = [a, b]
        if c > 0:
            ws = [a, b, a * b]
        s = 0.0
        for w in ws:
            s = s + np.sum(w)
        return s
    assert "for k in d" in desugared(key_added)
    assert "for w in ws" in desugared(bound_to_another_length)


def list_rebound_while_iterated(a, b):
    ws = [a, b]
    s = 0.0
    for w in ws:  # Python's iterator holds the list of before the loop
        s = s + np.sum(w * w)
        ws = [w * 2.0, w * 3.0]
    return s + np.sum(ws[0])


def dict_rebound_while_iterated(a, b):
    d = {"a": a, "b": b}
    s = 0.0
    for k, v in d.items():
        s = s + np.sum(v * v)
        d = {"a": v * 2.0, "b": v}
    return s + np.sum(d["a"])


def tuple_rebound_while_enumerated(a, b):
    ws = (a, b)
    s = 0.0
    for k, w in enumerate(ws):
        s = s + np.sum(w * w) * (k + 1)
        ws = (w * 2.0, w * 3.0)
    return s + np.sum(ws[1])


REBOUND = [list_rebound_while_iterated, dict_rebound_while_iterated,
           tuple_rebound_while_enumerated]


@pytest.mark.parametrize("f", REBOUND)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_container_rebound_by_the_loop_over_it_is_the_one_of_before(f, options):
    """(A wrong gradient before: the lowering's copies read the items of the
    container the body bound.)"""
    rng = np.random.default_rng(10)
    args = tuple(rng.normal(size=(2, 2)) for _ in range(2))
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(*(a.copy() for a in args))
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))


def test_a_container_rebound_by_the_loop_over_it_is_held_before_it():
    text = desugared(list_rebound_while_iterated)
    assert "ws_iter = ws\n    for w in ws_iter:" in text
    assert "d_iter = d\n    for k, v in d_iter.items():" in desugared(dict_rebound_while_iterated)


def test_a_given_list_rebound_by_the_loop_over_it_is_the_one_of_before():
    from gradcheck import check_structured_leaves

    def rebound(ps, x):
        for p in ps:
            x = np.tanh(p @ x)
            ps = [p * 2.0, p]
        return np.sum(x) + np.sum(ps[0])
    params, x = _params()
    ps = [W for W, _ in params]
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        value, got = tc.value_and_grad(rebound, wrt=(0, 1), **options)(ps, x)
        np.testing.assert_allclose(value, rebound(ps, x), rtol=1e-12)
        check_structured_leaves(rebound, (ps, x), (0, 1), got)


def per_layer(params, x):
    for layer in params:  # layer = params[0], then its loop over params[0]
        for W, b in layer:
            x = np.tanh(W @ x + b)
    return np.sum(x)


def unpacked_halves(params, x):
    enc, dec = params
    for W, b in enc:
        x = np.tanh(W @ x + b)
    for W, b in dec:
        x = np.tanh(W.T @ x - b)
    return np.sum(x)


def by_key_and_index(p, x):
    for name, layers in p.items():
        for l in range(len(layers)):
            for W, b in p[name][l:l + 1]:  # (a slice: left as a loop)
                x = np.tanh(W @ x + b)
    return np.sum(x)


def _nested():
    rng = np.random.default_rng(11)

    def pairs(n):
        return [(rng.normal(size=(2, 2)), rng.normal(size=2)) for _ in range(n)]
    return [pairs(1), pairs(2)], rng.normal(size=2)


@pytest.mark.parametrize("f", [per_layer, unpacked_halves, by_key_and_index])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_loops_over_containers_nested_in_a_given_one_compute_what_python_does(f, options):
    from gradcheck import check_structured_leaves

    params, x = _nested()
    if f is by_key_and_index:
        params = {"enc": params[1], "dec": params[0]}
    value, got = tc.value_and_grad(f, wrt=(0, 1), **options)(params, x)
    np.testing.assert_allclose(value, f(params, x), rtol=1e-12)
    check_structured_leaves(f, (params, x), (0, 1), got)


def test_a_loop_over_a_container_nested_in_a_given_one_is_unrolled():
    from tangent_ckpt.container_args import structure_of

    params, _ = _nested()
    text = desugared(per_layer, {0: structure_of(params)})
    assert "for " not in text and "W, b = params[1][1]" in text
    text = desugared(unpacked_halves, {0: structure_of(params)})
    assert "for " not in text and "W, b = params[1][1]" in text


def test_a_name_bound_to_a_nested_container_and_then_to_another_keeps_its_loop():
    from gradcheck import check_structured_leaves
    from tangent_ckpt.container_args import structure_of

    def grown(params, x):
        enc, dec = params
        enc = enc + [(enc[0][0] * 0.5, enc[0][1])]  # no longer the call's list
        for W, b in enc:
            x = np.tanh(W @ x + b)
        return np.sum(x)
    params, x = _nested()
    assert "for W, b in enc" in desugared(grown, {0: structure_of(params)})
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        value, got = tc.value_and_grad(grown, wrt=(0, 1), **options)(params, x)
        np.testing.assert_allclose(value, grown(params, x), rtol=1e-12)
        check_structured_leaves(grown, (params, x), (0, 1), got)


def sliced_list_rebound_while_iterated(a, b):
    ws = [a, b, a * b]
    s = 0.0
    for w in ws[1:]:  # Python slices the list of before the loop, once
        s = s + np.sum(w * w)
        ws = [w * 2.0, w * 3.0, w]
    return s + np.sum(ws[0])


def copied_list_rebound_while_iterated(a, b):
    ws = [a, b]
    s = 0.0
    for w in list(ws):
        s = s + np.sum(w * w)
        ws = [w * 2.0, w * 3.0]
    return s + np.sum(ws[1])


def enumerated_slice_rebound_while_iterated(a, b):
    ws = (a, b, a * b)
    s = 0.0
    for k, w in enumerate(ws[:2]):
        s = s + np.sum(w * w) * (k + 1)
        ws = (w * 2.0, w * 3.0, w)
    return s + np.sum(ws[2])


def zipped_slices_rebound_while_iterated(a, b):
    ws = [a, b, a * b]
    s = 0.0
    for w, v in zip(ws[1:], ws[:-1]):
        s = s + np.sum(w * v)
        ws = [w * 2.0, w * 3.0, w]
    return s + np.sum(ws[0])


def listed_items_rebound_while_iterated(a, b):
    d = {"a": a, "b": b}
    s = 0.0
    for k, v in list(d.items()):
        s = s + np.sum(v * v)
        d = {"a": v * 2.0, "b": v}
    return s + np.sum(d["a"])


REBOUND_IN_AN_EXPRESSION = [sliced_list_rebound_while_iterated, copied_list_rebound_while_iterated,
                            enumerated_slice_rebound_while_iterated,
                            zipped_slices_rebound_while_iterated,
                            listed_items_rebound_while_iterated]


@pytest.mark.parametrize("f", REBOUND_IN_AN_EXPRESSION)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_container_rebound_by_the_loop_over_an_expression_of_it_is_the_one_of_before(f, options):
    """The header evaluates ``ws[1:]``, ``list(ws)``, ``zip(ws[1:], ws[:-1])`` once,
    before the first trip.  (A wrong value and gradient before: the lowering's
    later copies evaluated it again of the list the body bound.)"""
    rng = np.random.default_rng(11)
    args = tuple(rng.normal(size=(2, 2)) for _ in range(2))
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(*(a.copy() for a in args))
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))


def test_a_given_list_rebound_by_the_loop_over_its_slice_is_the_one_of_before():
    from gradcheck import check_structured_leaves

    def rebound(ps, x):
        for p in ps[1:]:
            x = np.tanh(p @ x)
            ps = [p * 2.0, p * 3.0, p]
        return np.sum(x) + np.sum(ps[0])
    params, x = _params()
    ps = [W for W, _ in params] + [params[0][0] * 0.5]  # (two trips)
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        value, got = tc.value_and_grad(rebound, wrt=(0, 1), **options)(ps, x)
        np.testing.assert_allclose(value, rebound(ps, x), rtol=1e-12)
        check_structured_leaves(rebound, (ps, x), (0, 1), got)


def sliced_list_item_written_while_iterated(a, b):
    ws = [a, b, a * b]
    s = 0.0
    for w in ws[:2]:  # a copy: the item written below is not the one it visits
        s = s + np.sum(w * w)
        ws[1] = w * 3.0
    return s + np.sum(ws[1])


def running_sums_over_a_slice(a, b):
    xs = [a, b, a * b, a + b]
    for i, x in enumerate(xs[:-1]):  # x: the item of before the loop
        xs[i + 1] = xs[i + 1] + x
    return np.sum(xs[-1] ** 2) + np.sum(xs[2])


def tuple_copy_item_written_while_iterated(a, b):
    ws = [a, b, a * b]
    s = 0.0
    for w in tuple(ws):
        s = s + np.sum(w * w)
        ws[2] = w * 3.0
    return s + np.sum(ws[2])


def pairs_copy_item_written_while_iterated(a, b):
    ps = [(a, 1.0), (b, 2.0), (a * b, 3.0)]
    s = 0.0
    for w, c in ps[:2]:
        s = s + c * np.sum(w * w)
        ps[1] = (w * 2.0, c + 1.0)
    return s + np.sum(ps[1][0]) * ps[1][1]


def slice_item_written_in_a_time_loop(a, b):
    ws = [a, b, a * b]
    s = 0.0
    for t in range(3):
        for i, w in enumerate(ws[:-1]):
            ws[i + 1] = np.tanh(ws[i + 1] + w)
            s = s + np.sum(w)
    return s + np.sum(ws[2])


def keys_copy_of_a_dict_item_written(a, b):
    d = {"p": a, "q": b}
    s = 0.0
    for k in list(d):  # its keys: an item write changes none
        s = s + np.sum(d[k] * d[k])
        d["q"] = d[k] * 3.0
    return s + np.sum(d["q"])


COPIED_WHILE_WRITTEN = [sliced_list_item_written_while_iterated, running_sums_over_a_slice,
                        tuple_copy_item_written_while_iterated,
                        pairs_copy_item_written_while_iterated,
                        slice_item_written_in_a_time_loop, keys_copy_of_a_dict_item_written]


@pytest.mark.parametrize("f", COPIED_WHILE_WRITTEN)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_copy_the_header_makes_of_a_container_the_body_writes_holds_the_old_items(f, options):
    """``for w in ws[:2]: ws[1] = ...``: Python iterates the copy made before the
    loop.  (A wrong value and gradient before, all but the dict's: the lowering's
    later copies read the items as the body wrote them.)  The copy is made
    before the loop (``ws_iter = ws[:2]``)."""
    rng = np.random.default_rng(12)
    args = tuple(rng.normal(size=(2, 2)) for _ in range(2))
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(*(a.copy() for a in args))
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))


def test_a_copy_of_a_container_the_body_writes_is_made_before_the_loop():
    assert "ws_iter = ws[:2]\n    for w in ws_iter:" in \
        desugared(sliced_list_item_written_while_iterated)
    assert "for k in list(d):" in desugared(keys_copy_of_a_dict_item_written)


# --- comprehension conditions decided per copy; ranges of a local bound once -------
def filtered_keys(x):
    d = {str(k): x * (k + 1.0) for k in range(3) if k != 1}
    return np.sum(d["0"] * d["2"])


def other_pairs(a, b):
    ws = (a, b)
    pairs = [u * v for i, u in enumerate(ws) for j, v in enumerate(ws) if i != j]
    return np.sum(np.stack(pairs) ** 2)


def even_powers(a):
    ys = [a ** k for k in range(6) if k % 2 == 0 if k > 0]
    return np.sum(ys[0] * ys[1]) + len(ys)


def rope_sticks(g):
    n = 4
    x = np.zeros((n, 2)) + g
    sticks = np.array([[k, k + 1] for k in range(n - 1)])
    return np.sum(x[sticks[:, 0]] * x[sticks[:, 1]])


def layers_by_half(W1, b1, W2, b2, x):
    params = [W1, b1, W2, b2]
    L = len(params) // 2
    for l in range(L):
        x = np.tanh(params[2 * l] @ x + params[2 * l + 1])
    return np.sum(x)


def count_bound_in_a_branch(W0, W1, c):
    ps = [W0, W1]
    n = 2
    if c > 0:
        n = 1
    s = 0.0
    for i in range(n):
        s = s + np.sum(ps[i] ** 2)
    return s


DECIDED = [(filtered_keys, (3,)), (other_pairs, (3, 3)), (even_powers, (3,)),
           (rope_sticks, ((),)), (layers_by_half, ((3, 3), (3,), (2, 3), (2,), (3,)))]


def _arguments(shapes):
    rng = np.random.default_rng(7)
    return [rng.normal(size=s) + 1.5 if s else 0.3 for s in shapes]


@pytest.mark.parametrize("f, shapes", DECIDED)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_decided_conditions_and_local_bounds_compute_what_python_does(f, shapes, options):
    args = _arguments(shapes)
    wrt = tuple(range(len(args)))
    value, _ = tc.value_and_grad(f, wrt=wrt, **options)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **options))


def test_a_comprehension_whose_conditions_each_copy_decides_is_unrolled():
    for f in (filtered_keys, other_pairs, even_powers):
        text = desugared(f)
        assert "for " not in text and "if " not in text, text
    assert "d[d_key] = x * (2 + 1.0)" in desugared(filtered_keys)
    assert "ys.append(a ** 4)" in desugared(even_powers)


def test_a_range_of_a_local_bound_once_to_an_int_is_unrolled():
    text = desugared(rope_sticks)
    assert "for " not in text and "sticks_items.append([2, 2 + 1])" in text
    text = desugared(layers_by_half)
    assert "for " not in text and "params[2 * 1 + 1]" in text


def test_a_count_bound_again_in_a_branch_keeps_its_loop():
    assert "for i in range(n):" in desugared(count_bound_in_a_branch)
    with pytest.raises(TangentCkptError, match=r"indexed by a value known only at run time"):
        tc.grad(count_bound_in_a_branch, wrt=(0, 1))(np.ones(2), np.ones(3), 1.0)


def over_data(a, b):
    ys = [a * k for k in range(4) if np.sum(b) > k]
    return np.sum(ys[0]) + np.sum(np.stack(ys) ** 2) + len(ys)


@pytest.mark.parametrize("total", [0.5, 1.5, 2.5])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_condition_known_only_at_run_time_keeps_the_comprehensions_loop(total, options):
    """The loop stays, for the lowering, which runs it as a loop filling a list of
    run-time length (it was unrolled there and refused before)."""
    assert "if np.sum(b) > k:" in desugared(over_data)
    args = (np.array([0.3, -0.2, 0.5]), np.full(3, total / 3))
    value, _ = tc.value_and_grad(over_data, wrt=(0, 1), **options)(*args)
    np.testing.assert_allclose(value, over_data(*args), rtol=1e-12)
    check_grad(over_data, args, wrt=(0, 1), df=tc.grad(over_data, wrt=(0, 1), **options))


# --- slices of a static list in a loop's header -------------------------------------
def over_slices(a, b, c):
    ws = [a, b * 2.0, c]
    s = 0.0
    for w in ws[1:]:
        s = s + np.sum(w * w)
    for k, w in enumerate(ws[::-1]):
        s = s + (k + 1.0) * np.sum(w)
    return s


def slice_written_while_iterated(a, b, c):
    ws = [a, b, c]
    s = 0.0
    for w in ws[:2]:  # the slice is a new list: the second item is the b of before
        ws[1] = w * 2.0
        s = s + np.sum(w * ws[1])
    for w, g in zip(ws[1:], [c, a]):
        ws[2] = w * g
        s = s + np.sum(w * g)
    return s


@pytest.mark.parametrize("f", [over_slices, slice_written_while_iterated])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_loops_over_slices_of_a_list_compute_what_python_does(f, options):
    args = _arguments([(3,), (3,), (3,)])
    value, _ = tc.value_and_grad(f, wrt=(0, 1, 2), **options)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, wrt=(0, 1, 2), df=tc.grad(f, wrt=(0, 1, 2), **options))


def test_a_slice_of_a_display_only_read_is_unrolled_and_one_written_is_held():
    text = desugared(over_slices)
    assert "for " not in text and "w = ws_1\n" in text
    text = desugared(slice_written_while_iterated)
    assert "ws_iter = ws[:2]\n    for w in ws_iter:" in text
    assert "for w, g in zip(ws_iter_2, [c, a]):" in text
