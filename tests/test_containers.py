"""Containers of static structure (lower/containers.py) and containers given as
``wrt`` arguments (container_args.py): lists, tuples and dicts of parameters
anywhere in the body, each gradient checked against central finite differences
(and autograd where autograd runs the same code); a container gradient has its
argument's structure; refusals name file:line and the construct as spelled."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tangent_ckpt as tc
from autograd_oracle import autograd_gradient
from gradcheck import check_grad, check_structured_leaves, check_value_and_grad, numeric_grad
from source_lines import line_of
from tangent_ckpt.container_args import leaves_of, structure_of
from tangent_ckpt.errors import TransformError, UnsupportedSyntaxError, WrtError

HERE = os.path.basename(__file__)
rng = np.random.default_rng(18)


def vec(*shape):
    return rng.standard_normal(shape)


def check_container_grad(f, args, wrt=(0,), **options):
    """tc.grad(f, wrt) for container arguments: the gradient has each argument's
    structure, its leaves match finite differences (and autograd, when it runs f)."""
    got = tc.grad(f, wrt=wrt, **options)(*args)
    check_structured_leaves(f, args, wrt, got)
    oracle = autograd_gradient(f, args, wrt)
    if oracle is not None:
        for g, o in zip(got, oracle):
            for a, b in zip(leaves_of(g), leaves_of(o)):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    return got


# --- parameters in containers inside the body ---------------------------------------
def two_layer_net(W1, b1, W2, b2, x):
    params = [(W1, b1), (W2, b2)]
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h ** 2)


def test_list_of_weight_pairs_built_in_the_body():
    check_grad(two_layer_net, (vec(3, 4), vec(4), vec(4, 2), vec(2), vec(5, 3)),
               wrt=(0, 1, 2, 3))


def head_and_rest(W1, b1, W2, b2, x):
    params = [(W1, b1), (W2, b2)]
    (W, b), rest = params[0], params[1:]
    h = np.tanh(x @ W + b)
    for V, c in rest:
        h = h @ V + c
    return np.sum(h)


def layers_with_continue(a, b, x):
    outs = []
    h = x
    for k, W in enumerate([a, b, a.T]):
        if k == 2:
            continue  # a condition of the unrolled loop's constant: decided when lowering
        h = np.tanh(h @ W)
        outs.append(h)
    return np.sum(outs[0]) + np.sum(outs[-1] ** 2) + len(outs)


def test_continue_in_a_loop_over_a_list():
    check_grad(layers_with_continue, (vec(3, 4), vec(4, 2), vec(2, 3)), wrt=(0, 1, 2))


def test_unpacking_the_head_and_slicing_the_rest():
    check_grad(head_and_rest, (vec(3, 4), vec(4), vec(4, 2), vec(2), vec(5, 3)),
               wrt=(0, 1, 2, 3))


def nested_tuples(x, y):
    t = ((x, y), x * y)
    (a, b), c = t
    pair = t[0]
    return np.sum(a * b * c + pair[1])


def test_nested_tuples():
    check_grad(nested_tuples, (vec(3), vec(3)), wrt=(0, 1))


def dict_literal(w, b, x):
    d = {'w': w, 'b': b}
    e = dict(d, scale=2.0)
    g = dict(w=w * 2.0)
    return np.sum((x @ d['w'] + d.get('b')) * e['scale'] + g['w'].sum() * d.get('c', 0.5))


def test_dict_literal_dict_call_and_get():
    check_grad(dict_literal, (vec(3, 2), vec(2), vec(4, 3)), wrt=(0, 1, 2))


def dict_methods(w, b):
    d = {'w': w, 'b': b}
    total = 0.0
    for k, v in d.items():
        total = total + np.sum(v ** 2)
    for k in d.keys():
        total = total + np.sum(d[k])
    for v in d.values():
        total = total + np.sum(np.sin(v))
    return total


def test_dict_items_keys_values():
    check_grad(dict_methods, (vec(3), vec(2)), wrt=(0, 1))


def dict_updated(w, x):
    d = {}
    d['h'] = x
    d['h'] = np.tanh(d['h'] * w)
    d['y'] = d['h'] * 2.0
    return np.sum(d['y'])


def test_dict_written_with_constant_keys():
    check_grad(dict_updated, (vec(3), vec(3)), wrt=(0, 1))


def one_item_written(x):
    S = [x * 1.0, x * 2.0]
    S[1] = 2.0 * x
    return np.sum(np.array(S) ** 2) + np.sum(S[0])


def one_item_written_in_a_loop(x, n):
    S = [x * 1.0, x * 2.0]
    for t in range(n):
        S[1] = np.sin(S[1]) + S[0]
    return np.sum(S[0] ** 2) + np.sum(S[1])


def last_item_written_while_its_name_is_read(x):
    S = [x * 1.0, x * 2.0]
    v = S[-1]
    S[-1] = 2.0 * v
    return np.sum(np.array(S)) + np.sum(v * v)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True,
                                                                "snapshots": 1}])
def test_writing_one_item_keeps_the_gradient_of_the_others(options):
    """``S[1] = v`` keeps ``S[0]`` (the lowering writes ``S_0 = S_0``): its adjoint
    once dropped the adjoint of ``S[0]``, a wrong gradient without an error."""
    check_grad(one_item_written, (vec(3),), df=tc.grad(one_item_written))
    df = tc.grad(one_item_written_in_a_loop, **options)
    check_grad(one_item_written_in_a_loop, (vec(3), 3), df=df)


def test_an_item_written_at_a_negative_index_and_read_under_another_name():
    """``v = S[-1]; S[-1] = 2.0 * v``: the list gets a new object, ``v`` keeps the
    old one (was generated as a variable named ``S_-1``, which did not compile)."""
    check_grad(last_item_written_while_its_name_is_read, (vec(3),))


def state_in_loop(h, W, n):
    state = {'h': h, 'c': h * 0.5}
    for t in range(n):
        h_new = np.tanh(W @ state['h'] + state['c'])
        state = {'h': h_new, 'c': 0.9 * state['c'] + 0.1 * h_new}
    return np.sum(state['h'])


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_dict_as_loop_state_taped_and_checkpointed(options):
    args = (vec(3), vec(3, 3) * 0.5, 7)
    df = tc.grad(state_in_loop, wrt=(0, 1), **options)
    check_grad(state_in_loop, args, wrt=(0, 1), df=df)
    if options:
        assert "CheckpointedLoop" in df.source  # the snapshot holds state_h and state_c


def tuple_state_in_loop(h, c, W, n):
    hc = (h, (c, c * 0.0))
    for t in range(n):
        h, (c, acc) = hc
        c = 0.8 * c + 0.2 * np.tanh(W @ h)
        hc = (np.tanh(c), (c, acc + c))
    return np.sum(hc[0]) + np.sum(hc[1][1])


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 3}])
def test_nested_tuple_as_loop_state(options):
    check_grad(tuple_state_in_loop, (vec(3), vec(3), vec(3, 3) * 0.5, 9), wrt=(0, 1, 2),
               df=tc.grad(tuple_state_in_loop, wrt=(0, 1, 2), **options))


def containers_through_a_helper(W1, W2, x):
    layers = {'first': W1, 'second': W2}
    out = apply_layers(layers, x)
    return np.sum(out['y']) + np.sum(out['h'])


def apply_layers(layers, x):
    h = np.tanh(x @ layers['first'])
    return {'h': h, 'y': h @ layers['second']}


def test_dicts_passed_to_and_returned_from_helpers():
    check_grad(containers_through_a_helper, (vec(3, 4), vec(4, 2), vec(5, 3)), wrt=(0, 1))


def lists_joined(a, b):
    xs = [a] + [b, a * b]
    ys = [b] * 2
    zs = xs + ys
    return np.sum(np.stack(zs)) + np.sum(zs[-1]) + len(zs)


def test_list_concatenation_and_repetition():
    check_grad(lists_joined, (vec(3), vec(3)), wrt=(0, 1))


# --- containers as wrt --------------------------------------------------------
def net_over_params(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h)


def test_wrt_a_list_of_pairs_has_its_structure():
    params = [(vec(3, 4), vec(4)), (vec(4, 2), vec(2))]
    got = check_container_grad(net_over_params, (params, vec(5, 3)), wrt=(0, 1))
    assert isinstance(got[0], list) and all(isinstance(p, tuple) for p in got[0])


def loss_of_dict(p, x):
    return np.sum(np.tanh(x @ p['W'] + p['b'])) * p['scale']


def test_wrt_a_dict_with_float_leaves():
    got = check_container_grad(loss_of_dict, ({'W': vec(3, 2), 'b': vec(2), 'scale': 1.5},
                                              vec(4, 3)))
    assert list(got[0]) == ['W', 'b', 'scale']


def nested_params(p, x):
    (W, b), extra = p['layer'], p['extra']
    return np.sum((x @ W + b) * extra[0]) + np.sum(extra[1] ** 2)


def test_wrt_nested_dict_list_tuple():
    p = {'layer': (vec(3, 2), vec(2)), 'extra': [vec(2), vec(4)]}
    check_container_grad(nested_params, (p, vec(4, 3)))


def rnn_over_params(params, h, n):
    for t in range(n):
        h = np.tanh(params['W'] @ h + params['b'])
    return np.sum(h)


@pytest.mark.parametrize("snapshots", [1, 3])
def test_wrt_a_dict_through_a_checkpointed_loop(snapshots):
    params, h = {'W': vec(3, 3) * 0.5, 'b': vec(3)}, vec(3)
    df = tc.grad(rnn_over_params, wrt=(0, 1), checkpoint=True, snapshots=snapshots)
    got = df(params, h, 12)
    assert "CheckpointedLoop" in df.source
    taped = tc.grad(rnn_over_params, wrt=(0, 1))(params, h, 12)
    for a, b in zip(leaves_of(got), leaves_of(taped)):  # the same operations
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    check_container_grad(rnn_over_params, (params, vec(3), 12), wrt=(0, 1),
                         checkpoint=True, snapshots=snapshots)


def net_over_indices(params, x):
    h = x
    for l in range(len(params)):
        W, b = params[l]
        h = np.tanh(h @ W + b)
        if l < len(params) - 1:
            h = h * 1.5
    return np.sum(h ** 2)


def test_range_of_a_containers_length_indexing_it():
    params = [(vec(3, 4), vec(4)), (vec(4, 2), vec(2))]
    check_container_grad(net_over_indices, (params, vec(5, 3)), wrt=(0, 1))


def test_another_structure_compiles_another_gradient():
    df = tc.grad(net_over_params)
    one = df([(vec(3, 2), vec(2))], vec(4, 3))
    two = df([(vec(3, 4), vec(4)), (vec(4, 2), vec(2))], vec(4, 3))
    assert len(one) == 1 and len(two) == 2
    assert "params_1_0" in df.source  # the source of the last call's structure


def test_structures_of_concurrent_calls_do_not_mix():
    df = tc.grad(net_over_params)
    calls = [([(vec(3, 2), vec(2))], vec(4, 3)),
             ([(vec(3, 4), vec(4)), (vec(4, 2), vec(2))], vec(4, 3))] * 4
    serial = [df(*args) for args in calls]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda args: df(*args), calls))
    for a, b in zip(serial, threaded):
        assert structure_of(a) == structure_of(b)
        for x, y in zip(leaves_of(a), leaves_of(b)):
            np.testing.assert_array_equal(x, y)


def test_flat_gradient_of_a_container():
    params = [(vec(3, 2), vec(2))]
    flat = tc.grad(net_over_params, flat=True)(params, vec(4, 3))
    assert flat.shape == (8,)


def test_wrt_a_container_with_an_integer_leaf_is_refused():
    with pytest.raises(WrtError, match=r"params\[0\]\[1\]"):
        tc.grad(net_over_params)([(vec(3, 2), 2)], vec(4, 3))


# --- dicts written at run-time keys (runtime/keyed.py) -------------------------------
def rnn_with_dicts(h0, Wxh, Whh, Why, inputs, targets):
    """The shape of min-char-rnn's loss: dicts of states keyed by the step."""
    xs, hs, ys = {}, {}, {}
    hs[-1] = h0
    loss = 0.0
    for t in range(len(inputs)):
        xs[t] = inputs[t]
        hs[t] = np.tanh(Wxh @ xs[t] + Whh @ hs[t - 1])
        ys[t] = Why @ hs[t]
        loss = loss + np.sum((ys[t] - targets[t]) ** 2)
    return loss + 0.1 * np.sum(hs[len(inputs) - 1])


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_dict_of_states_indexed_by_the_step(options):
    args = (vec(4), vec(4, 3) * 0.5, vec(4, 4) * 0.5, vec(2, 4) * 0.5, vec(6, 3), vec(6, 2))
    df = tc.grad(rnn_with_dicts, wrt=(0, 1, 2, 3, 4), **options)
    check_grad(rnn_with_dicts, args, wrt=(0, 1, 2, 3, 4), df=df)
    assert "rt.dict_set(hs, t, " in df.source
    if options:
        assert "CheckpointedLoop" in df.source  # the snapshot holds the dicts


def dict_read_backwards(h0, W, n):
    hs = {}
    hs[0] = h0
    for t in range(1, n):
        hs[t] = np.sin(W @ hs[t - 1])
    total = 0.0
    for k in range(n):
        t = n - 1 - k
        total = total + np.sum(hs[t] * (t + 1))
    return total


def test_dict_written_forward_and_read_backward():
    check_grad(dict_read_backwards, (vec(3), vec(3, 3), 5), wrt=(0, 1))


# --- refusals: file:line and the construct as spelled ------------------------------
def dict_items_at_run_time(h0, n):
    hs = {}
    for t in range(n):
        hs[t] = h0 * t
    return sum(np.sum(v) for k, v in hs.items())


def list_indexed_by_a_variable(a, b, k):
    xs = [a, b]
    return np.sum(xs[k])


def list_changing_length_in_a_loop(x, n):
    pair = (x,)
    for t in range(n):
        pair = (x, pair[0])
    return np.sum(pair[0])


def dict_key_not_constant(x, name):
    d = {name: x}
    return np.sum(d[name])


def list_repeated_at_run_time(x, n):
    hs = [x, x * 2.0] * len(n)  # an int: repeated (`* n` could be an array: checked as it runs)
    return np.sum(hs[0])


def structure_per_branch(x, c):
    p = (x,)
    if c > 0:
        p = (x, x * 2.0)
    return np.sum(p[0])


def same_structure_per_branch(x, c):
    if c > 0:
        p = {'a': x, 'b': x * 2.0}
    else:
        p = {'a': x * 3.0, 'b': x}
    return np.sum(p['a'] * p['b'])


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_container_bound_in_both_branches(c):
    check_grad(same_structure_per_branch, (vec(3), c))


def appended_on_both_paths(x, c):
    xs = [x]
    if c > 0:
        xs.append(x * 2.0)
    else:
        xs.append(xs[0] * len(xs))  # the else path reads the list as it was before the if
    return np.sum(xs[0] * xs[1])


def grown_on_one_path_rebound_on_the_other(x, c):
    xs = [x]
    if c > 0:
        xs.extend([x * 3.0, np.sin(x)])
    else:
        xs = [np.cos(x), x * 2.0, x]
    return np.sum(xs[0] * xs[1] + xs[2])


def key_added_on_both_paths_in_a_loop(x, c):
    s = 0.0
    for t in range(3):
        d = {"a": x * (t + 1.0)}
        if c - t > 0:
            d["b"] = x * 2.0
        else:
            d["b"] = x * 3.0
        s = s + np.sum(d["a"] * d["b"])
    return s


def length_read_on_the_other_path(x, c):
    xs = [x]
    if c > 0:
        xs.append(x * 2.0)
    else:
        n = len(xs)  # 1: the body's append is not on this path
        xs = [x * n, x]
    return np.sum(xs[0] * xs[1])


@pytest.mark.parametrize("f", [appended_on_both_paths, grown_on_one_path_rebound_on_the_other,
                               key_added_on_both_paths_in_a_loop,
                               length_read_on_the_other_path])
@pytest.mark.parametrize("c", [1.5, -1.0])
def test_a_container_grown_on_both_paths_of_an_if_is_one_container_after_it(f, c):
    """The else path starts from the container there was before the ``if`` (it
    once started from the one the body's path grew: ``xs.append`` on both paths
    was refused as two lengths, and a dict given a key on both paths in a loop
    read the key's variable of the trip before, 21.36 for Python's 26.7, and
    ``len(xs)`` there counted the body's append, 3.56 for 1.78); the paths then
    share the element variables of the same structure."""
    check_value_and_grad(f, (vec(3), c), rel=1e-12)
    np.testing.assert_allclose(tc.grad(f, checkpoint=True, snapshots=2)(np.full(3, 0.3), c),
                               tc.grad(f)(np.full(3, 0.3), c), rtol=1e-12)


def grown_on_one_path_only(x, c):
    xs = [x]
    if c > 0:
        xs.append(x * 2.0)
    return np.sum(xs[0])


def test_a_container_of_two_lengths_after_an_if_is_still_refused():
    with pytest.raises(UnsupportedSyntaxError, match="of a different length or keys on the two"):
        tc.grad(grown_on_one_path_only)(vec(3), 1.0)


class _Layer:
    def __init__(self, W):
        self.W = W

    def __call__(self, h):
        return np.tanh(self.W * h)


def layers_rebound_on_one_path(x, c):
    layers = [_Layer(x * 1.0)]
    if c > 0:
        layers = [_Layer(x * 2.0)]
    return np.sum(layers[0](x))


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_list_of_other_objects_on_the_two_paths_is_refused(c):
    """One structure, but other objects -- whose attributes are other variables --
    on the two paths: no one variable per item after the ``if``.  It crashed on
    main on the path that kept the old object (UnboundLocalError), and would have
    read the old object's weights on the other once the else path started from
    the list there was before the ``if``."""
    with pytest.raises(UnsupportedSyntaxError, match=r"test_containers.py:\d+: 'layers' holds "
                                                     "other objects on the two paths"):
        tc.grad(layers_rebound_on_one_path)(vec(3), c)


def grown_on_one_path_rebuilt_in_a_loop_on_the_other(x, c):
    xs = [x]
    if c > 0:
        xs.append(x * 2.0)
    else:
        for t in range(3):
            xs = [xs[0] * 2.0, x * t]  # the first trip reads the list of one item
    return np.sum(xs[0] * xs[1])


def test_a_list_given_another_length_in_a_loop_on_the_other_path_is_refused():
    """As the same loop is without the ``if`` ("changes its length ... inside a
    loop").  It compiled before only because the else path started from the
    list the body's path grew (which gave ``len(xs)`` there the wrong count)."""
    with pytest.raises(UnsupportedSyntaxError, match=r"test_containers.py:\d+: 'xs' is made "
                                                     "again inside this loop with other keys"):
        tc.grad(grown_on_one_path_rebuilt_in_a_loop_on_the_other)(vec(3), -1.0)


def missing_key(x):
    d = {'a': x}
    return np.sum(d['b'])


@pytest.mark.parametrize("fn, marker, construct", [
    (dict_items_at_run_time, "hs.items()", ".items()"),
    (list_indexed_by_a_variable, "xs[k]", "xs[k]"),
    (list_changing_length_in_a_loop, "pair = (x, pair[0])", "pair"),
    (dict_key_not_constant, "{name: x}", "{name: x}"),
    (list_repeated_at_run_time, "[x, x * 2.0] * len(n)", "[x, x * 2.0] * len(n)"),
    (missing_key, "d['b']", "d['b']"),
    (structure_per_branch, "if c > 0", "if (p)"),
])
def test_refusals_name_the_line_and_the_construct(fn, marker, construct):
    with pytest.raises(TransformError) as info:
        tc.grad(fn).compile()
    err = info.value
    assert HERE in str(err) and f":{line_of(fn, marker)}:" in str(err), str(err)
    assert construct in str(err) or construct in (err.construct or ""), str(err)


# --- a dict of known keys written at run-time keys inside a helper -------------------
def scale_each(p, lr, n):
    for i in range(n):
        key = "W" + str(i)
        p[key] = p[key] * lr
    return p


def scaled_by_a_helper_then_read_at_constant_keys(W0, W1, n):
    """The outside hunt's crash: the helper turns p into a dict written at run-time
    keys and returns it; p["W0"] afterwards was read as an array subscript, whose
    adjoint failed inside np.add.at."""
    p = {"W0": W0, "W1": W1}
    p = scale_each(p, 0.5, n)
    return np.sum(p["W0"] ** 2) + 3.0 * np.sum(p["W1"])


def scale_each_in_place(p, lr, n):
    for i in range(n):
        key = "W" + str(i)
        p[key] = p[key] * lr


def scaled_in_place_by_a_procedure(W0, W1, n):
    """The helper returns nothing: its writes are the caller's dict's (the caller's
    p was left as it was: a silent wrong gradient)."""
    p = {"W0": W0, "W1": W1}
    scale_each_in_place(p, 0.5, n)
    return np.sum(p["W0"] ** 2) + 3.0 * np.sum(p["W1"])


def old_name_after_the_helper(W0, W1, n):
    p = {"W0": W0, "W1": W1}
    q = scale_each(p, 0.5, n)  # p is q: the helper wrote into the caller's dict
    return np.sum(p["W0"] ** 2) + 3.0 * np.sum(q["W1"])


def returned_as_a_tuple_item(W0, W1, n):
    p = {"W0": W0, "W1": W1}
    s = (scale_each(p, 0.5, n), 2.0)
    return np.sum(s[0]["W0"] ** 2) * s[1] + 3.0 * np.sum(s[0]["W1"])


def scaled_unless(W0, W1, c, n):
    p = {"W0": W0, "W1": W1}
    if c > 0:
        return np.sum(scale_each(p, 0.5, n)["W0"])
    return np.sum(p["W0"] * p["W1"])


def scale_all(p, lr):
    n = len(p)
    for i in range(n):
        key = "W" + str(i)
        p[key] = p[key] * lr
    return p


def crash_form_of_the_outside_hunt(W0, W1):
    """repros3/crash_dict_runtime_keys_after_helper.py as found: n = len(p) is a
    constant, so the loop (whose key is computed from its counter) is unrolled."""
    p = {"W0": W0, "W1": W1}
    p = scale_all(p, 0.5)
    return np.sum(p["W0"] ** 2) + 3 * np.sum(p["W1"])


def test_the_crash_form_of_a_dict_written_by_a_helper_is_exact():
    check_container_grad(crash_form_of_the_outside_hunt, (vec(2), vec(2)), wrt=(0, 1))


def nested_helper_sharing_a_name(a, s, n):
    """The helper's i and key are its own: the caller's i (bound again in a loop)
    does not keep them from being the unrolled loop's constants (the fuzzer's
    run_time_containers family found the refusal)."""
    def scale(q, m):
        for i in range(m):
            key = "k" + str(i % 2)
            q[key] = np.tanh(q[key] * s + q["k" + str(1 - i % 2)])
        return q
    p = {"k0": np.sin(a), "k1": np.cos(a)}
    p = scale(p, len(p))
    v = p["k0"] + p["k1"]
    for t in range(n):
        i = np.sum(a)
        v = v * i
    return np.sum(v)


def key_bound_on_one_path(a, s):
    def scale(q, m):
        key = "k0"
        for i in range(m):
            if s > 0:
                key = "k" + str(i % 2)  # bound twice: no constant
            q[key] = np.tanh(q[key] * s)
        return q
    p = {"k0": np.sin(a), "k1": np.cos(a)}
    p = scale(p, 2)
    return np.sum(p["k0"] + 2.0 * p["k1"])


def test_a_nested_helpers_counter_is_a_constant_beside_a_callers_name():
    check_grad(nested_helper_sharing_a_name, (vec(3), 0.7, 2), wrt=(0, 1))


def test_a_key_bound_twice_is_no_constant():
    # (scale() is inlined by desugar: its q is the caller's p there)
    with pytest.raises(TransformError, match=r"indexed by a value known only at run time "
                                             r"\([pq]\[key\]\)"):
        tc.grad(key_bound_on_one_path).compile()


def indexed_every_other_step(x):
    ws = [x, 2.0 * x]
    for t in range(1000):
        x = np.sin(x) * ws[t % 2][0]
    return np.sum(x)


def test_a_long_constant_loop_indexing_by_its_counters_arithmetic_stays_a_loop():
    """ws[t % 2] over range(1000) would be 1000 copies of the body: the loop stays a
    loop, and the index known only at run time is refused (not unrolled silently,
    losing the loop's checkpointing)."""
    with pytest.raises(TransformError, match=r"indexed by a value known only at run time "
                                             r"\(ws\[t % 2\]\)"):
        tc.grad(indexed_every_other_step).compile()


@pytest.mark.parametrize("f", [scaled_by_a_helper_then_read_at_constant_keys,
                               scaled_in_place_by_a_procedure, old_name_after_the_helper,
                               returned_as_a_tuple_item])
@pytest.mark.parametrize("n", [1, 2])
def test_a_dict_a_helper_writes_at_run_time_keys_is_the_callers(f, n):
    check_grad(f, (vec(2), vec(2), n), wrt=(0, 1))


def halved_in_its_own_dict(x, n):
    d = {"W0": x, "W1": 2.0 * x}
    for i in range(n):
        d["W" + str(i % 2)] = d["W" + str(i % 2)] * 0.5
    return d["W0"] + d["W1"]


def helper_with_a_dict_of_its_own(x, n):
    return np.sum(halved_in_its_own_dict(x, n) ** 2)


def test_a_helpers_own_dict_written_at_run_time_keys_is_no_callers():
    check_grad(helper_with_a_dict_of_its_own, (vec(2), 3))


@pytest.mark.parametrize("c", [1.0, -1.0])
def test_a_helper_writing_a_dict_on_one_path_that_returns(c):
    check_grad(scaled_unless, (vec(2), vec(2), c, 2), wrt=(0, 1))


def scaled_on_one_path(W0, W1, c, n):
    p = {"W0": W0, "W1": W1}
    if c > 0:
        scale_each_in_place(p, 0.5, n)
    return np.sum(p["W0"] ** 2)


def scaled_in_a_loop(W0, W1, n):
    p = {"W0": W0, "W1": W1}
    for t in range(3):
        p = scale_each(p, 0.5, n)
    return np.sum(p["W0"] ** 2)


def array_on_one_path(x, c):
    p = (x, x * 3.0)
    if c > 0:
        p = x * 2.0
    return np.sum(p[0])


def test_a_dict_written_at_run_time_keys_by_a_helper_in_a_loop_is_followed():
    """``p = scale_each(p, 0.5, n)`` in a loop: refused while the lowering inlined
    the helper (the loop body was lowered with the dict's keys known); inlined by
    desugar, the dict is the caller's, made a run-time dict before the loop."""
    check_grad(scaled_in_a_loop, (vec(3, 2), vec(3, 1), 2), wrt=(0, 1))


@pytest.mark.parametrize("fn, marker, construct", [
    (scaled_on_one_path, "if c > 0", "if (p)"),
    (array_on_one_path, "if c > 0", "if (p)"),
])
def test_a_dict_made_run_time_where_the_caller_cannot_follow_is_refused(fn, marker, construct):
    """One path of an if (the other path's reads met an unbound variable), or a
    loop whose body was lowered with the dict's keys known (a wrong gradient)."""
    with pytest.raises(TransformError) as info:
        tc.grad(fn).compile()
    err = info.value
    assert HERE in str(err) and f":{line_of(fn, marker)}:" in str(err), str(err)
    assert construct in str(err) or construct in (err.construct or ""), str(err)


def test_a_dict_read_as_an_array_in_the_adjoint_is_a_clear_error():
    """The runtime's safety net: were a dict ever read as an array subscript, its
    adjoint refuses (placed at the user's line) instead of failing in np.add.at."""
    from tangent_ckpt.errors import TangentCkptError
    from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import getitem_adjoint
    with pytest.raises(TangentCkptError, match="a dict read at key 'W0'"):
        getitem_adjoint(np.ones(2), {"W0": np.zeros(2)}, "W0")


# --- loops over a constant range indexing a container: unrolled --------------------
def halved_over_a_length(W0, W1):
    ps = [W0, W1]
    n = len(ps)  # bound once to a constant: range(n) is a constant range
    for i in range(n):
        ps[i] = ps[i] * 0.5
    for i in range(len(ps)):
        ps[i] = ps[i] + 1.0
    return np.sum(ps[0] ** 2) + 3.0 * np.sum(ps[1])


def test_a_loop_over_the_length_of_a_static_list_is_unrolled():
    check_container_grad(halved_over_a_length, (vec(2), vec(3)), wrt=(0, 1))


def init_velocity(parameters):
    L = len(parameters) // 2
    v = {}
    for l in range(L):
        v["dW" + str(l + 1)] = np.zeros(parameters["W" + str(l + 1)].shape)
        v["db" + str(l + 1)] = np.zeros(parameters["b" + str(l + 1)].shape)
    return v


def momentum_update(parameters, grads, v, beta, learning_rate):
    L = len(parameters) // 2
    for l in range(L):
        v["dW" + str(l + 1)] = beta * v["dW" + str(l + 1)] + (1 - beta) * grads["dW" + str(l + 1)]
        v["db" + str(l + 1)] = beta * v["db" + str(l + 1)] + (1 - beta) * grads["db" + str(l + 1)]
        parameters["W" + str(l + 1)] = parameters["W" + str(l + 1)] - learning_rate * v["dW" + str(l + 1)]
        parameters["b" + str(l + 1)] = parameters["b" + str(l + 1)] - learning_rate * v["db" + str(l + 1)]
    return parameters, v


def momentum_on_string_keys(W1, b1, W2, b2, beta, n):
    """The outside hunt's q35 (a momentum optimiser over a dict keyed "W" + str(l + 1),
    l over range(len(parameters) // 2), in helpers): the key loops have a constant
    trip count, so they are unrolled and every key is a constant."""
    parameters = {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
    v = init_velocity(parameters)
    for it in range(n):
        grads = {"dW1": parameters["W1"] + 1.0, "db1": np.sin(parameters["b1"]),
                 "dW2": parameters["W2"] * parameters["W2"], "db2": parameters["b2"]}
        parameters, v = momentum_update(parameters, grads, v, beta, 0.1)
    return sum(np.sum(p ** 2) for p in parameters.values())


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_string_keys_built_in_a_constant_loop_are_constants(options):
    args = (vec(3, 2), vec(3, 1), vec(1, 3), vec(1, 1), 0.9, 4)
    check_container_grad(momentum_on_string_keys, args, wrt=(0, 1, 2, 3, 4), **options)
    if options:
        taped = tc.grad(momentum_on_string_keys, wrt=(0, 1, 2, 3, 4))(*args)
        ckpt = tc.grad(momentum_on_string_keys, wrt=(0, 1, 2, 3, 4), **options)(*args)
        for t, c in zip(taped, ckpt):
            np.testing.assert_allclose(c, t, rtol=1e-12, atol=1e-14)


def length_rebound_on_one_path(a, b, c, n):
    ps = [a, b, a * b]
    if c > 0:
        n = 2  # a parameter bound again on one path: n is no constant
    total = 0.0
    for i in range(n):
        total = total + np.sum(ps[i])
    return total


def count_bound_twice(a, b, c):
    ps = [a, b, a * b]
    n = 3
    if c > 0:
        n = 2
    total = 0.0
    for i in range(n):
        total = total + np.sum(ps[i])
    return total


@pytest.mark.parametrize("fn", [length_rebound_on_one_path, count_bound_twice])
def test_a_name_bound_more_than_once_is_no_constant_range(fn):
    with pytest.raises(TransformError, match=r"indexed by a value known only at run time "
                                             r"\(ps\[i\]\)"):
        tc.grad(fn).compile()


# --- a container held by an attribute of an object made in the function ------------

class DictModel:
    def __init__(self, W, b):
        self.params = {'W': W, 'b': b}

    def step(self, h):
        return np.tanh(self.params['W'] @ h + self.params['b'])

    def decay(self, s):
        self.params['W'] = s * self.params['W']


def decayed_recurrence(W, b, h, n):
    m = DictModel(W, b)
    for t in range(n):
        h = np.tanh(m.params['W'] @ h + m.params['b'])
        m.decay(0.9)  # a method called for its effect: inlined, it rebinds self.params['W']
    return np.sum(h ** 2) + np.sum(m.params['W'])


def decayed_recurrence_through_a_method(W, b, h, n):
    m = DictModel(W, b)
    for t in range(n):
        h = m.step(h)
        m.decay(0.9)  # h is step's new array, nothing m holds (the fence reads step)
    return np.sum(h ** 2)


class ScaledModel(DictModel):
    def weights(self):
        return self.params['W']

    def scale(self, s):
        self.params['W'] *= s


def scaled_weights_kept(W, b, h, n):
    m = ScaledModel(W, b)
    for t in range(n):
        V = m.weights()
        m.scale(0.9)  # V is the array m holds: the in-place scale changes it
        h = np.tanh(V @ h)
    return np.sum(h ** 2)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_method_writing_an_attribute_beside_a_new_result_is_differentiated(checkpoint):
    args = (0.5 * vec(3, 3), vec(3), vec(3), 3)
    df = tc.grad(decayed_recurrence_through_a_method, wrt=(0, 1, 2), checkpoint=checkpoint)
    check_grad(decayed_recurrence_through_a_method, args, wrt=(0, 1, 2), df=df)


def test_a_method_writing_what_another_method_returned_is_refused():
    with pytest.raises(TransformError, match=rf"{HERE}:\d+: a write into 'm.params' may also "
                                             r"change 'V'.*\(in scale\(\), called at line"):
        tc.grad(scaled_weights_kept)(0.5 * vec(3, 3), vec(3), vec(3), 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed", "snapshots2"])
def test_a_dict_in_an_attribute_written_by_a_method_in_a_loop(options):
    args = (0.5 * vec(3, 3), vec(3), vec(3), 4)
    df = tc.grad(decayed_recurrence, wrt=(0, 1, 2), **options)
    got = check_grad(decayed_recurrence, args, wrt=(0, 1, 2), df=df)
    for g, t in zip(got, tc.grad(decayed_recurrence, wrt=(0, 1, 2))(*args)):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


class Holder:
    def __init__(self, p):
        self.p = p


def written_through_the_attribute(x):
    m = Holder({'a': x, 'b': 2 * x})
    m.p['a'] = 3 * x
    return np.sum(m.p['a']) + np.sum(m.p['b'])


def test_an_item_written_through_the_attribute_is_read_back():
    check_grad(written_through_the_attribute, (vec(2),))


def written_under_the_other_name(x):
    p = {'a': x}
    m = Holder(p)
    p['a'] = 3 * x  # Python: m.p is p, so m.p['a'] changes too
    return np.sum(m.p['a'])


def written_through_the_attribute_read_by_name(x):
    p = {'a': x}
    m = Holder(p)
    m.p['a'] = 3 * x
    return np.sum(p['a'])


def written_through_a_name_of_the_attribute(x):
    m = Holder({'a': x})
    q = m.p
    q['a'] = 3 * x
    return np.sum(m.p['a'])


@pytest.mark.parametrize("fn", [written_under_the_other_name,
                                written_through_the_attribute_read_by_name,
                                written_through_a_name_of_the_attribute])
def test_a_container_shared_by_an_attribute_and_a_name_is_written_exactly_or_refused(fn):
    """One dict under two names (an attribute and a variable): a write under one
    is seen under the other, or the aliasing fence refuses the write."""
    try:
        got = tc.grad(fn)(np.ones(2))
    except tc.TangentCkptError as error:
        assert f"{HERE}:" in str(error) and "may also change" in str(error)
    else:
        np.testing.assert_allclose(got, 3.0 * np.ones(2))


# --- xs[t][i] = v on a dict written at run-time keys --------------------------------

def one_hot_rows_written_in_place(W, n):
    xs = {}
    s = 0.0
    for t in range(n):
        xs[t] = np.tanh(W[0] * t)
        xs[t][0] = W[1, 1] ** 2
        xs[t][1] *= 3.0
        s = s + np.sum(W @ xs[t])
    return s


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}], ids=["taped", "checkpointed"])
def test_an_array_in_a_run_time_dict_written_in_place(options):
    df = tc.grad(one_hot_rows_written_in_place, **options)
    check_grad(one_hot_rows_written_in_place, (vec(3, 3), 3), df=df)


def one_array_under_two_keys_written(W, n):
    xs = {}
    s = 0.0
    for t in range(n):
        x = W[0] * 1.0
        xs[t] = x
        xs[-t - 1] = x
        xs[t][0] = 5.0  # Python: xs[-t - 1][0] is 5.0 as well
        s = s + np.sum(W @ xs[-t - 1])
    return s


def test_an_array_under_two_keys_written_in_place_is_refused_when_it_runs():
    line = line_of(one_array_under_two_keys_written, "xs[t][0] = 5.0")
    with pytest.raises(TransformError, match=rf"{HERE}:{line}: the array written in place at "
                                             r"key 0 is also the entry at key -1"):
        tc.grad(one_array_under_two_keys_written)(vec(3, 3), 2)


def array_written_through_the_dict_read_by_name(W, n):
    xs = {}
    s = 0.0
    for t in range(n):
        x = np.zeros(3)
        xs[t] = x
        xs[t][t % 3] = 1.0  # Python: x changes too
        s = s + np.sum(W @ x)
    return s


def test_an_array_written_through_a_run_time_dict_and_read_by_name_is_refused():
    with pytest.raises(TransformError, match=rf"{HERE}:\d+: a write into 'xs' may also change 'x'"):
        tc.grad(array_written_through_the_dict_read_by_name)(vec(3, 3), 2)


# --- a list held by an attribute, grown by append --------------------------------------

class StateRecorder:
    def __init__(self, W):
        self.W = W
        self.hs = []

    def run(self, h, k):
        for j in range(k):  # the list grows in this loop: its rows are built at run time
            h = np.tanh(self.W @ h)
            self.hs.append(h)

    def record(self, v):
        self.hs.append(v)


def recorded_states(W, h, n):
    rec = StateRecorder(W)
    rec.run(h, n)
    rec.run(2.0 * h, 2)  # appends after the rows of the first call
    rec.record(np.sin(h) * 3.0)
    return sum(np.sum(s ** 2) for s in rec.hs)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed", "snapshots2"])
def test_a_list_in_an_attribute_grown_by_a_methods_loop(options):
    df = tc.grad(recorded_states, wrt=(0, 1), **options)
    check_grad(recorded_states, (0.5 * vec(3, 3), vec(3), 4), wrt=(0, 1), df=df)


def recorded_in_the_callers_loop(W, h, n):
    rec = StateRecorder(W)
    for i in range(n):
        rec.record(np.sin(h) * i)  # one lowered body cannot append n items to a static list
    return sum(np.sum(s) for s in rec.hs)


def recorded_by_loops_in_the_callers_loop(W, h, n):
    rec = StateRecorder(W)
    for i in range(n):
        rec.run(h * i, 2)  # the rows made in run's loop would start again each trip
    return sum(np.sum(s) for s in rec.hs)


@pytest.mark.parametrize("fn", [recorded_in_the_callers_loop,
                                recorded_by_loops_in_the_callers_loop])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "snapshots2"])
def test_a_list_in_an_attribute_grown_across_a_callers_loop(fn, options):
    """Refused while the object was the lowering's ("the list or dict rec.hs changes
    its length or keys inside a loop": one static list per attribute); desugar
    writes ``rec.hs`` as the local list ``rec_hs``, which grows at run time."""
    check_grad(fn, (0.5 * vec(3, 3), vec(3), 3), wrt=(0, 1),
               df=tc.grad(fn, wrt=(0, 1), **options))


# --- nested container arguments and lists of (W, b) pairs rebuilt (#28) ------------------
def layer_pairs(sizes):
    return [(0.5 * vec(m, n), 0.1 * vec(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp(params, x):
    for W, b in params:
        x = np.tanh(x @ W + b)
    return x


def vae_like(params, x):
    encoder, decoder = params
    return np.sum(mlp(decoder, mlp(encoder, x)) ** 2)


def nested_layers(params, x):
    for layer in params:
        for W, b in layer:
            x = np.tanh(x @ W + b)
    return np.sum(x)


def dict_of_nested(p, x):
    h = mlp(p["enc"], x)
    return np.sum(h * p["scale"][0]) + np.sum(p["extra"]["w"] ** 2)


OPTIONS = [{}, {"checkpoint": True}, {"checkpoint": True, "snapshots": 2},
           {"checkpoint": True, "memory_budget": "1MB"}]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("kind", [list, tuple])
def test_nested_container_gradient_keeps_every_level(kind, options):
    params = kind([layer_pairs([3, 4, 2]), layer_pairs([2, 3])])
    x = vec(2, 3)
    for f in (vae_like, nested_layers):
        got = check_container_grad(f, (params, x), wrt=(0, 1), **options)
        assert structure_of(got[0]) == structure_of(params)
        assert type(got[0]) is kind and type(got[0][0]) is list and type(got[0][0][0]) is tuple


def test_dict_holding_lists_of_pairs_and_dicts_keeps_its_structure():
    p = {"enc": layer_pairs([3, 3]), "scale": [vec(3)], "extra": {"w": vec(2)}}
    got = check_container_grad(dict_of_nested, (p, vec(2, 3)))
    assert structure_of(got[0]) == structure_of(p)


def rebuilt_pairs(params, x):
    params = [(W * 1.0, b) for W, b in params]
    return np.sum(mlp(params, x))


def rebuilt_as_lists(params, x):
    params = [[W, b * 2.0] for W, b in params]
    return np.sum(mlp(params, x) ** 2)


def rebuilt_by_appends(params, x):
    new = []
    for W, b in params:
        new.append((W * 0.5, b))
    return np.sum(mlp(new, x))


def rebuilt_in_a_loop(params, x, n):
    for t in range(n):
        params = [(W * 0.9, b) for W, b in params]
        x = mlp(params, x)
    return np.sum(x)


def helper_rebinding_its_list(params, x):
    def forward(params, x):
        params = list(params)
        for W, b in params:
            x = np.tanh(x @ W + b)
        return x
    return np.sum(forward([(W, b + 0.0) for W, b in params], x))


REBUILT = [rebuilt_pairs, rebuilt_as_lists, rebuilt_by_appends, helper_rebinding_its_list]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("f", REBUILT)
@pytest.mark.parametrize("wrt", [(0,), (1,), (0, 1)])
def test_helper_looping_over_a_rebuilt_list_of_pairs(f, wrt, options):
    params, x = layer_pairs([3, 3, 3]), vec(2, 3)
    df = tc.grad(f, wrt=wrt, **options)
    got = df(params, x)
    for k, g in zip(wrt, got):
        if k == 0:
            check_structured_leaves(f, (params, x), (0,), (g,))
        else:
            np.testing.assert_allclose(g, numeric_grad(f, [params, x], (1,))[0], rtol=1e-6,
                                       atol=1e-8)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("container", [list, tuple])
def test_list_of_pairs_rebuilt_in_a_loop_taped_and_checkpointed(container, options):
    params, x = container(layer_pairs([3, 3])), vec(2, 3)
    for wrt in ((0, 1), (1,)):
        got = tc.grad(rebuilt_in_a_loop, wrt=wrt, **options)(params, x, 3)
        taped = tc.grad(rebuilt_in_a_loop, wrt=wrt)(params, x, 3)
        if wrt == (1,):  # a 1-tuple
            np.testing.assert_allclose(got[0], numeric_grad(rebuilt_in_a_loop, [params, x, 3],
                                                            (1,))[0], rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(got[0], taped[0], rtol=1e-12)
        else:
            check_structured_leaves(rebuilt_in_a_loop, (params, x, 3), (0,), (got[0],))
            for a, b in zip(leaves_of(got), leaves_of(taped)):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def loop_over_data_pairs(W, pairs):
    total = 0.0
    for i, j in pairs:
        total = total + W[i] @ W[j]
    return total


def test_a_list_of_data_pairs_outside_wrt_stays_a_checkpointed_loop():
    W, pairs = vec(4, 3), [(0, 1), (2, 3), (1, 2)]
    df = tc.grad(loop_over_data_pairs, checkpoint=True, snapshots=2)
    check_grad(loop_over_data_pairs, (W, pairs), df=df)
    assert "CheckpointedLoop(" in df.source


def layers_by_key(M, a):
    layers = {"enc": [(M, a), (M.T * 0.5, a * 0.1)], "dec": [(M * 0.5, a)]}
    x = a
    for name in ("enc", "dec"):
        for W, b in layers[name]:
            x = np.tanh(x @ W + b)
    return np.sum(x)


def layers_by_index(M, a):
    layers = [[(M, a)], [(M * 0.5, a), (M.T, a * 0.3)]]
    x = a
    for k in range(2):
        for W, b in layers[k]:
            x = np.tanh(x @ W + b)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [layers_by_key, layers_by_index])
def test_loop_over_an_item_chosen_by_an_unrolled_constant(f):
    # found by the nested_containers fuzz family: `for W, b in layers[name]` inside
    # `for name in ('enc', 'dec')` was refused as a run-time loop over a list
    check_grad(f, (0.5 * vec(3, 3), vec(3)), wrt=(0, 1))


# --- lists and tuples where NumPy takes an array ------------------------------------
def tuple_stored_into_rows(s, v, n):
    xyz = np.empty((n + 1, 3))
    xyz[0] = (5, 5, 5)  # Python ints into a float array: cast on store
    for i in range(n):
        xyz[i + 1] = (xyz[i, 1] * s, xyz[i, 2] - s, 0.5 * xyz[i, 0])
    pair = np.zeros((3, 3))
    pair[1:] = [v, 2.0 * v]  # same-shape arrays: np.asarray makes rows of them
    pair[0] = [np.sum(v), s, np.float64(1.0)]  # a 0-d result, a number and a NumPy scalar
    return np.sum(np.tanh(xyz)) + np.sum(pair * pair)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_tuple_or_list_stored_into_an_array_is_its_array(options):
    """``a[0] = (5, 5, 5)`` stores np.asarray of the tuple (cast to a's dtype): the
    checkpointed loop stores a tuple of numbers each step; equal to the taped gradient."""
    args = (0.3, vec(3), 4)
    df = tc.grad(tuple_stored_into_rows, wrt=(0, 1), **options)
    got = check_grad(tuple_stored_into_rows, args, wrt=(0, 1), df=df)
    taped = tc.grad(tuple_stored_into_rows, wrt=(0, 1))(*args)
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)
    if options:
        assert "CheckpointedLoop(" in df.source
    assert "np.array((5, 5, 5))" in df.source  # numbers stay a constant NumPy converts


def list_into_an_int_array(x):
    k = np.zeros(3, dtype=int)
    k[:] = [1.7, -2.2, 3.9]  # NumPy truncates on store
    return np.sum(k * x)


def test_a_list_stored_into_an_int_array_is_cast_as_numpy_casts_it():
    got, = check_grad(list_into_an_int_array, (vec(3),))
    np.testing.assert_array_equal(got, [1.0, -2.0, 3.0])


def arithmetic_with_lists(x, w):
    a = w + [1, 2, 3]          # Python ints added to a float array
    b = [x, 2.0 * x, 0.5] * a  # the list on the left
    c = (x, 1.0, -x) - b / [2.0, x, 4.0]
    d = np.abs(w) ** [1.0, 2.0, 0.5]
    return np.sum(c * d) + np.sum(w @ [x, 1.0, 2.0])


def test_an_operator_between_an_array_and_a_list_is_numpys():
    check_grad(arithmetic_with_lists, (0.7, vec(3)), wrt=(0, 1))


def added_in_place_per_row(x, n):
    a = np.zeros((n, 3))
    for i in range(n):
        a[i] += [x, 2 * x, 3 * x]
        if i > 0:
            a[i] *= (1.0, a[i - 1, 0], 0.5)
    return np.sum(a * a)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_list_added_into_an_array_row_in_a_loop(options):
    """p23's ``a[i] += [-temp_x / mass[i], ...]``: taped and checkpointed (the list
    op inside the checkpointed loop), equal to the taped gradient."""
    df = tc.grad(added_in_place_per_row, **options)
    got = check_grad(added_in_place_per_row, (0.9, 5), df=df)
    np.testing.assert_allclose(got[0], tc.grad(added_in_place_per_row)(0.9, 5), rtol=1e-12)
    if options:
        assert "CheckpointedLoop(" in df.source


def lists_joined_and_repeated(x, y):
    z = [x, y] + [x]  # both lists: concatenation, never arithmetic
    r = (x,) * 2
    return np.sum(np.array(z) * np.array([1.0, 2.0, 3.0])) + np.sum(np.array(r + tuple(z)) ** 2)


def test_an_operator_between_two_lists_keeps_its_python_meaning():
    check_grad(lists_joined_and_repeated, (0.4, -1.1), wrt=(0, 1))


def list_plus_a_list_argument(x, xs):
    return np.sum(np.array(xs + [x]))


def list_times_an_int_argument(x, k):
    return np.sum(np.array([x, 2.0 * x] * k))


def list_added_to_a_float(x, y):
    return np.sum([x, 1.0] + y)


@pytest.mark.parametrize("f, args, operator", [
    (list_plus_a_list_argument, (0.5, [1.0, 2.0]), r"\+"),
    (list_times_an_int_argument, (0.5, 2), r"\*"),
    (list_added_to_a_float, (0.5, 2.0), r"\+"),
])
def test_a_list_meeting_no_numpy_array_is_refused_when_it_runs(f, args, operator):
    """Python concatenates a list argument, repeats for an int and raises for a
    float: never read as NumPy arithmetic."""
    line = line_of(f, "return")
    with pytest.raises(tc.errors.TangentCkptError,
                       match=rf"a list or tuple at line {line} meets an? (list|int|float) in "
                             rf"`x {operator} \[\.\.\.\]`"):
        tc.grad(f)(*args)


def list_times_a_loop_counter(x, n):
    s = 0.0
    for t in range(n):
        s = s + np.sum(np.array([x, x] * t))
    return s


def list_times_a_float(x):
    return np.sum(2.0 * [x, x])


def dict_plus_an_array(x):
    return np.sum(x + {"a": x})


@pytest.mark.parametrize("f, message", [
    (list_times_a_loop_counter, "a list repeated a number of times known only at run time"),
    (list_times_a_float, r"a list or tuple in arithmetic \(2.0 \* \[x, x\]\)"),
    (dict_plus_an_array, "a dict used where an array is expected"),
])
def test_lists_that_are_no_arrays_stay_refused(f, message):
    with pytest.raises(TransformError, match=rf"{HERE}:\d+: {message}"):
        tc.grad(f)(*((0.5, 3) if f is list_times_a_loop_counter else (vec(2),)))


def arrays_of_two_shapes(x):
    a = np.zeros((2, 3))
    a[0] = (x, x[:2])  # NumPy: an inhomogeneous shape
    return np.sum(a)


def test_a_tuple_of_arrays_of_different_shapes_fails_as_numpy_does():
    with pytest.raises(ValueError):
        arrays_of_two_shapes(vec(3))
    with pytest.raises(ValueError):
        tc.grad(arrays_of_two_shapes)(vec(3))


def lists_read_as_arrays_in_every_mode(w, x):
    a = np.zeros((3, 3))
    a[0] = (1, 2, 0.5)
    for i in range(3):
        a[i] += [x * w[i], 0.5, w[i] * w[i]]
    return np.sum(a * a) + np.sum(w * [1.0, x, 2.0]) ** 2 + np.sum([x, 1.0, w[0]] * np.tanh(w))


def test_lists_read_as_arrays_in_forward_mode_and_hessian_vector_products():
    w, x, v = vec(3), 0.7, vec(3)
    grad = tc.grad(lists_read_as_arrays_in_every_mode)
    _, tangent = tc.jvp(lists_read_as_arrays_in_every_mode)(w, x, v)
    np.testing.assert_allclose(tangent, np.sum(grad(w, x) * v), rtol=1e-10)
    eps = 1e-6
    numeric = (grad(w + eps * v, x) - grad(w - eps * v, x)) / (2 * eps)
    np.testing.assert_allclose(tc.hvp(lists_read_as_arrays_in_every_mode)(w, x, v), numeric,
                               rtol=1e-6, atol=1e-8)


def dtypes_as_numpy_gives_them(w, x):
    y = w + [1, 2, 3]          # float32 + Python ints: float64 (NumPy 2 promotes so)
    z = [x, 1, 2] * w
    k = np.zeros(3, dtype=np.float32)
    k[:] = (x, 0.1, 1.0 / 3.0)  # rounded to float32 on store
    return np.sum(y * z) + np.sum(k.astype(np.float64) * 1e3)


def test_a_list_read_as_an_array_has_numpys_dtype():
    """The value the gradient computes on the way is the function's, bit for bit."""
    w = np.array([0.5, 1.5, 2.5], dtype=np.float32)
    value, _ = tc.value_and_grad(dtypes_as_numpy_gives_them, wrt=1)(w, 0.7)
    assert value == dtypes_as_numpy_gives_them(w, 0.7)
    # (w's gradient only: x's passes through a float32 store, which finite
    # differences of step 1e-6 cannot resolve)
    check_grad(dtypes_as_numpy_gives_them, (w.astype(np.float64), 0.7), wrt=(0,))


def zero_d_arrays_in_lists(x, w):
    z = np.asarray(x * 2.0)  # a 0-d array
    a = np.zeros((2, 3))
    a[0] = [z, 1.0, np.reshape(w[0], ())]
    a[1] = w + [z, 1.0, 2.0]
    return np.sum(a ** 2)


def test_zero_d_arrays_in_a_list_read_as_an_array():
    check_grad(zero_d_arrays_in_lists, (np.array(0.3), vec(3)), wrt=(0, 1))


# --- xs[t][i] = v: t an integer only while it is the range counter ---------------
def counter_rebound_to_an_index_array(L, X):
    U = X * 1.0
    for t in range(3):
        t = np.array([t])               # U[t] is now a copy: the write below is lost
        U[t][0] = 0.0
    return np.sum(U * L)


def test_a_counter_rebound_in_the_body_is_no_integer_index():
    """``U[t][0] = 0.0`` was written ``U[t, 0] = 0.0`` because ``t`` had been a
    ``range`` counter, though the body rebinds it to an index array: NumPy writes
    into a copy and U keeps its ones, the gradient saw zeros (9.0 for 12.0)."""
    X = np.ones((3, 4))
    assert counter_rebound_to_an_index_array(0.5, X) == 6.0
    with pytest.raises(TransformError, match="nested subscript") as raised:
        tc.grad(counter_rebound_to_an_index_array)(0.5, X)
    assert f"{HERE}:{line_of(counter_rebound_to_an_index_array, 'U[t][0]')}:" in \
        str(raised.value)


def _set_row(U, t, v):
    U[t][0] = v                         # t: the caller's loop index, or a constant
    return U


def row_set_by_a_helper(L, X):
    U = X * 1.0
    for t in range(3):
        U = _set_row(U, t, L * t)
    U = _set_row(U, 2, U[2][0] * L)
    return np.sum(U * U)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_helpers_parameter_bound_to_the_callers_loop_index_is_an_integer_index(checkpoint):
    df = tc.grad(row_set_by_a_helper, wrt=(0, 1), checkpoint=checkpoint)
    check_grad(row_set_by_a_helper, (0.5, np.arange(12.0).reshape(3, 4) / 10), wrt=(0, 1),
               df=df)


# --- a list or tuple held by a name, used as an index -----------------------------
def assembled_stiffness(k, n):
    """A 1-D finite-element assembly: each element's degrees of freedom in a list."""
    K = np.eye(n + 1) * 1e-3
    for e in range(n):
        dofs = [e, e + 1]
        K[np.ix_(dofs, dofs)] += k[e] * np.array([[1.0, -1.0], [-1.0, 1.0]])
        K[:, dofs] *= 1.0 + 0.1 * e
    u = np.linalg.solve(K[1:, 1:], np.ones(n))
    return np.sum(u ** 2)


def indexed_by_held_lists_and_tuples(x):
    picked = [2, 0]
    corner = (1, 0)
    z = x * 1.0
    z[picked] += x[picked] * 2.0
    M = np.outer(x, z)
    return np.sum(z ** 2) + M[corner] + np.sum(M[:, picked])


@pytest.mark.parametrize("f, args", [
    (assembled_stiffness, (np.array([1.0, 2.0, 3.0]), 3)),
    (indexed_by_held_lists_and_tuples, (np.array([0.3, 0.5, 0.7]),)),
])
def test_a_list_or_tuple_held_by_a_name_indexes_as_python_indexes(f, args):
    """K[:, dofs] with dofs = [e, e + 1] is a fancy index, M[corner] with corner =
    (1, 0) one index per axis, as written in place of the name (refused: 'a
    tuple or list used where an array is expected')."""
    check_grad(f, args, rtol=1e-5, atol=1e-7)


def strided_net(X, Ws, strides):
    h = X
    for W, s in zip(Ws, strides):
        if isinstance(s, int):
            s = (s, s)
        h = h[::s[0], ::s[1]] * W
    return np.sum(h)


def strided(X, stride):
    if isinstance(stride, int):
        stride = (stride, stride)
    sh, sw = stride
    return np.sum(X[::sh, ::sw] ** 2)


def strided_else_first(X, stride):
    if isinstance(stride, tuple):
        first = stride[0]
    else:
        stride = (stride, stride)
        first = 1
    return np.sum(X[::stride[0], ::stride[1]] ** 2) * first


def strided_unread(X, pad):
    if isinstance(pad, int):
        pad = (pad, pad)
        y = X[::pad[0]]
    else:
        y = X
    return np.sum(y ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_stride_made_a_pair_on_one_path_is_unpacked_on_the_other(options):
    """``if isinstance(s, int): s = (s, s)`` with ``s`` already a pair: the other
    path binds the pair's variables from the run-time tuple (it bound nothing:
    the loop read the previous trip's pair, 240.0 for 88.0; without a loop an
    UnboundLocalError)."""
    X = np.arange(16.0).reshape(4, 4) / 10
    args = (X, [1.0, 2.0], [1, (2, 1)])
    vg = tc.value_and_grad(strided_net, **options)
    assert vg(*args)[0] == pytest.approx(strided_net(*args))
    check_grad(strided_net, args, df=tc.grad(strided_net, **options))
    for f in (strided, strided_else_first):
        for stride in ((1, 3), 2):
            assert tc.value_and_grad(f)(X, stride)[0] == pytest.approx(f(X, stride))
            check_grad(f, (X, stride))
    for pad in ("same", 2):  # read on its own path only: nothing to unpack
        check_grad(strided_unread, (X, pad))


def test_a_value_of_another_structure_on_the_other_path_is_refused_when_it_runs():
    X = np.arange(16.0).reshape(4, 4)
    with pytest.raises(TransformError, match="'stride' is read after this if as the tuple "
                                             "of 2 items.*a tuple of 3 items"):
        tc.grad(strided)(X, (1, 2, 3))
    with pytest.raises(TransformError, match="on the other path it is a list"):
        tc.grad(strided)(X, [1, 2])


def stride_normalised_in_the_loop(X, first, n):
    tot = 0.0
    stride = first
    for i in range(n):
        if isinstance(stride, int):
            stride = (stride, stride + 1)
        else:
            stride = (stride[1], stride[0])
        tot = tot + np.sum(X[::stride[0], ::stride[1]] ** 2)
    return tot


def test_a_name_a_loop_makes_a_tuple_that_the_next_trip_reads_is_refused():
    """The next trip read the value before the loop, not the tuple (15.0 in
    Python, 16.8 from the gradient's value)."""
    X = np.arange(16.0).reshape(4, 4) / 10
    with pytest.raises(UnsupportedSyntaxError, match="'stride' becomes a list, tuple or dict "
                                                     "inside this loop"):
        tc.grad(stride_normalised_in_the_loop)(X, 1, 3)


def cache_of_a_step(h, W):
    h2 = np.tanh(W @ h)
    cache = {}
    cache['h'] = h2
    return h2, cache


def steps_keeping_their_caches(h, W, n):
    for t in range(n):
        h, cache = cache_of_a_step(h, W)
    return np.sum(h) + np.sum(cache['h'])


def cache_filled_in_the_body(h, W, n):
    tot = 0.0
    for t in range(n):
        cache = {}
        cache['h'] = np.tanh(W @ h)
        cache['c'] = cache['h'] * 2.0
        h = cache['h']
        tot = tot + np.sum(cache['c'])
    return tot + np.sum(h)


def cache_counted_after_the_loop(h, W, n):
    cache = {}
    for t in range(n):
        cache = {}
        cache['h'] = np.tanh(W @ h)
        h = cache['h']
    return np.sum(h) * len(cache)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_dict_made_empty_in_each_trip_may_gain_keys_in_it(options):
    """``cache = {}; cache['h'] = h`` (cs231n layers, Karpathy's LSTM step) in a
    loop's body or a helper it calls: the dict is made afresh in each trip (was
    refused: "'cache' changes its length or keys inside a loop")."""
    args = (vec(3), vec(3, 3) * 0.5, 4)
    for f in (steps_keeping_their_caches, cache_filled_in_the_body):
        df = tc.grad(f, wrt=(0, 1), **options)
        check_grad(f, args, wrt=(0, 1), df=df)
        assert tc.value_and_grad(f, wrt=(0, 1), **options)(*args)[0] == pytest.approx(f(*args))


def test_a_dict_made_in_each_trip_with_other_keys_than_before_the_loop_is_refused():
    """After a loop of no trips ``cache`` is the empty dict made before it."""
    with pytest.raises(UnsupportedSyntaxError, match="'cache' is made again inside this loop "
                                                     "with other keys"):
        tc.grad(cache_counted_after_the_loop)(vec(3), vec(3, 3), 2)


def default_drawn_though_the_key_is_there(x):
    rng = np.random.default_rng(1)
    d = {"a": x}
    y = d.get("a", rng.standard_normal(3))  # Python draws the default all the same
    z = rng.standard_normal(3)
    return np.sum(y * z)


def test_a_default_of_dict_get_is_evaluated_even_where_the_key_is_there():
    """Once a wrong value and gradient (0.089 for Python's -0.308): the default,
    an argument, was not evaluated when the key was found, so its draw was
    skipped and every later draw read another state."""
    check_value_and_grad(default_drawn_though_the_key_is_there, (vec(3),), rel=1e-12)
    x = vec(3)
    np.testing.assert_allclose(
        tc.grad(default_drawn_though_the_key_is_there, checkpoint=True, snapshots=2)(x),
        tc.grad(default_drawn_though_the_key_is_there)(x), rtol=1e-12)


# --- an item of a dict an object's attribute holds, on an object the lowering keeps -------
class _ConstantState:
    def __init__(self, lr):
        self.lr = lr
        self.state = {"m": 0.0, "n": 1}

    def step(self, w, g):
        self.state["m"] = 0.9 * self.state["m"] + g   # STORE
        self.state["k"] = self.state["n"] * 2.0         # a new key: its own variable
        return w - self.lr * self.state["m"] * self.state["k"]


def _stepped_and_read_after_the_loop(x):
    opts = [_ConstantState(0.1), _ConstantState(0.2)]
    for o in opts:
        x = o.step(x, np.sin(x))
    return np.sum(x ** 2) * o.lr, opts   # (returned: the list stays the lowering's)


def _stepped_and_read_after_the_loop_of_a_display(x):
    opts = [_ConstantState(0.1), _ConstantState(0.2)]
    for o in opts:
        x = o.step(x, np.sin(x))
    return np.sum(x ** 2) * o.lr     # o read after the loop: the last optimiser's


def test_a_store_into_a_constant_item_of_an_attributes_dict_is_refused_naming_the_line():
    """Once an AttributeError from inside the compiler ('Const' object has no
    attribute 'id'): an item still the constant ``__init__`` wrote has no variable
    of its own, which the lowering rebinds the items through."""
    with pytest.raises(UnsupportedSyntaxError,
                       match=rf"test_containers.py:{line_of(_ConstantState.step, '# STORE')}: "
                             r"assignment into an item of a container an object's "
                             r"attribute holds, whose items include a constant"):
        tc.grad(_stepped_and_read_after_the_loop)(np.array([0.3, -0.2, 0.5]))


def test_a_store_into_an_attributes_dict_of_a_list_only_read_is_exact():
    """(desugar writes each object as names, its dict as one of its own.)"""
    x = np.array([0.3, -0.2, 0.5])
    check_value_and_grad(_stepped_and_read_after_the_loop_of_a_display, (x,), rel=1e-12)
    np.testing.assert_allclose(
        tc.grad(_stepped_and_read_after_the_loop_of_a_display, checkpoint=True, snapshots=2)(x),
        tc.grad(_stepped_and_read_after_the_loop_of_a_display)(x), rtol=1e-12)


def copy_of_a_tuple_display(a):
    t = (1.0, a).copy()  # TUPLE COPY
    return a * t[1]


def copy_of_a_list_display(a):
    t = [1.0, a].copy()
    return a * t[1]


def test_copy_of_a_tuple_display_raises_as_python_does():
    """Python raises AttributeError (a tuple has no .copy()); the gradient was
    computed as if it were a list's copy."""
    with pytest.raises(AttributeError):
        copy_of_a_tuple_display(2.0)
    with pytest.raises(TransformError) as info:
        tc.grad(copy_of_a_tuple_display)(2.0)
    message = str(info.value)
    line = line_of(copy_of_a_tuple_display, "# TUPLE COPY")
    assert f"test_containers.py:{line}:" in message, message
    assert "a tuple has no method .copy()" in message, message
    assert tc.grad(copy_of_a_list_display)(2.0) == 4.0


def dict_of_an_enumerate_from_one(ws):
    d = dict(enumerate(ws, 1))
    return np.sum(d[1]) + 2.0 * np.sum(d[2] ** 2)


def dict_of_an_enumerate_of_a_display(a, b):
    d = dict(enumerate([a, b], 3))
    return np.sum(d[3] * 2.0)


@pytest.mark.parametrize("f, args, wrt", [
    (dict_of_an_enumerate_from_one, ([np.array([1.0, 2.0]), np.array([0.5, -1.0])],), (0,)),
    (dict_of_an_enumerate_of_a_display, (np.array([1.0, 2.0]), np.array([0.5, -1.0])), (0, 1)),
], ids=["given", "display"])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
def test_a_container_enumerate_counts_from_its_start(f, args, wrt, options):
    """``dict(enumerate(ws, 1))``: the keys start at 1; the lowering counted them
    from 0, so ``d[1]`` read the second item (a silent wrong gradient)."""
    value, got = tc.value_and_grad(f, wrt=wrt, **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    if isinstance(args[0], list):
        check_structured_leaves(f, args, wrt, got)
    else:
        check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **options))
