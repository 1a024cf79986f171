"""desugar/keyed_lists.py: a dict of constant keys whose items the code changes
through their methods (a log of lists) is one name per key."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared as desugared_with_helpers
from tangent_ckpt.errors import TransformError

W0 = np.array([0.1, 0.2, -0.3])
X = np.array([0.3, -0.2, 0.5])
MODES = [{}, {"checkpoint": True, "snapshots": 2}]


def desugared(fn):
    return desugared_with_helpers(fn).split("\n\n\n")[0]


def logged_descent(w, x, n):
    # a solver keeping its history in a dict (POT's log['err'], history['loss'])
    log = {"loss": [], "gnorm": [], "best": 0.0}
    for t in range(n):
        r = np.tanh(w * x) - 0.5
        g = np.sum(r * x)
        w = w - 0.1 * g
        log["loss"].append(np.sum(r ** 2))
        log["gnorm"].append(abs(g))
        log["best"] = log["best"] + log["loss"][-1]
    log["best"] += 1.0
    return np.sum(w ** 2) + 0.1 * log["loss"][-1] * log["best"] + sum(log["gnorm"])


def state_dict(w, x):
    state = {"w": w.copy(), "hist": []}
    for t in range(3):
        state["w"] -= 0.1 * np.tanh(state["w"] * x)
        state["hist"].append(state["w"].copy())
    return np.sum(state["hist"][-1] * state["hist"][0])


def handed_to_a_helper(w, x):
    # the helper is inlined first, its parameter standing for the dict
    log = {"a": []}
    log["a"].append(np.sum(w))
    return _total(log)


def _total(d):
    return sum(d["a"])


@pytest.mark.parametrize("options", MODES)
@pytest.mark.parametrize("f, args", [(logged_descent, (W0, X, 4)), (state_dict, (W0, X)),
                                     (handed_to_a_helper, (W0, X))],
                         ids=["log_of_lists", "state_of_an_array_and_a_list", "helper"])
def test_a_dict_of_lists_appended_to_is_exact(f, args, options):
    value, _ = tc.value_and_grad(f, **options)(*args)
    assert np.isclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, df=tc.grad(f, **options))


def test_each_key_is_a_name_bound_where_the_dict_was_made():
    text = desugared(logged_descent)
    assert "log[" not in text and "log = {" not in text
    assert text.index("log_loss = []") < text.index("log_gnorm = []") < \
        text.index("log_best = 0.0") < text.index("for t in range(n)")
    assert "log_loss.append(" in text


def shared_list(w, x):
    acc = []
    log = {"a": acc, "b": acc}
    for t in range(2):
        log["a"].append(np.sum(w * x * t))
    return sum(log["b"]) + np.sum(w)


def test_items_that_are_one_list_are_refused_by_the_fence_naming_the_items():
    with pytest.raises(TransformError) as error:
        tc.grad(shared_list)(W0, X)
    assert "log['a']" in str(error.value) and "log['b']" in str(error.value)


def iterated(w, x):
    log = {"a": [], "b": []}
    log["a"].append(np.sum(w))
    log["b"].append(np.sum(w * x))
    return sum(sum(v) for v in log.values())


def bound_twice(w, x):
    log = {"a": []}
    log["a"].append(np.sum(w))
    if np.sum(x) > 0:
        log = {"a": [np.sum(x)]}
    return sum(log["a"])


def computed_key(w, x):
    log = {"a": [], "b": []}
    for k in ("a", "b"):
        log[k].append(np.sum(w))
    return sum(log["a"])


def only_read(w, x):
    p = {"scale": 2.0}
    return np.sum(w * p["scale"])


@pytest.mark.parametrize("f", [iterated, bound_twice, computed_key, only_read])
def test_a_dict_used_as_a_dict_or_never_changed_through_an_item_stays_a_dict(f):
    assert "= {" in desugared(f)
