"""desugar/dict_keys.py: ``for key in d.keys()`` over a name surely bound to a dict
is ``for key in d``; over anything else it stays as written."""

import numpy as np

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared


def decayed_in_a_loop(W0, b0):
    params = {"W": W0 * 1.0, "b": b0 * 1.0}
    for i in range(3):
        for key in params.keys():          # a dict the loop carries
            params[key] = params[key] * 0.9 + np.tanh(params[key])
    return np.sum(params["W"] ** 2) + np.sum(params["b"])


def test_the_keys_of_a_dict_the_loop_carries_are_iterated_directly():
    """Refused before: "unsupported method .keys()" on the dict kept at run time
    (outside program o19, an Adam over a dict of parameters)."""
    text = desugared(decayed_in_a_loop)
    # (iterated directly, then unrolled by static_loops.py: the dict keeps its keys)
    assert ".keys()" not in text and \
        "params['b'] = params['b'] * 0.9 + np.tanh(params['b'])" in text, text
    args = (np.array([[0.3, -0.2], [0.1, 0.5]]), np.array([0.4, -0.6]))
    check_grad(decayed_in_a_loop, args, wrt=(0, 1))
    check_grad(decayed_in_a_loop, args, wrt=(0, 1),
               df=tc.grad(decayed_in_a_loop, wrt=(0, 1), checkpoint=True, snapshots=2))


def keys_of_a_parameter(x, table):
    total = 0.0
    for key in table.keys():               # table may be any object with a keys()
        total = total + x * key
    return np.sum(total)


def test_the_keys_of_what_may_not_be_a_dict_stay_a_call():
    assert "for key in table.keys():" in desugared(keys_of_a_parameter)
