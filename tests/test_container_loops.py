"""lower/container_loops.py: a ``for`` loop over a tuple or list display is
unrolled, one copy of its body per element.  Python makes the tuple before the
loop, so an element is the object its name held then: a body binding the name
again (``b = v * 100``) does not change the elements still to come (each read
the new ``b`` before: 3030.3 for 10.4)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, numeric_grad
from tangent_ckpt.errors import TangentCkptError


def tuple_item_rebound(a, b):
    s = 0.0
    for v in (a, b):
        s = s + np.sum(v * v)
        b = v * 100.0
    return s + np.sum(b)


def enumerated_item_rebound(a, b):
    s = 0.0
    for k, v in enumerate([a, b]):
        s = s + (k + 1) * np.sum(np.sin(v))
        a = v * 3.0
        b = a + 1.0
    return s + np.sum(a * b)


def zipped_item_rebound(a, b):
    s = 0.0
    for u, w in zip((a, b), (b, a)):
        s = s + np.sum(u * w)
        a, b = b * 2.0, a * 0.5
    return s


def item_written_in_place(a, b):
    c = b * 1.0
    s = 0.0
    for v in (a, c):
        s = s + np.sum(v * v)
        c[0] = 7.0 * a[1]  # the element is the same array: the next copy sees the write
    return s


@pytest.mark.parametrize("f", [tuple_item_rebound, enumerated_item_rebound,
                               zipped_item_rebound, item_written_in_place])
def test_an_element_is_what_its_name_held_when_the_loop_started(f):
    a, b = np.array([0.1, 0.2]), np.array([-0.3, 0.4])
    value, _ = tc.value_and_grad(f, wrt=(0, 1))(a, b)
    np.testing.assert_allclose(value, f(a.copy(), b.copy()), rtol=1e-12)
    check_grad(f, (a, b), wrt=(0, 1))


class _Dense:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return np.tanh(self.W @ x + self.b)


def zipped_in_a_branch_read_after(W, b, x):
    layers = [_Dense(W, b), _Dense(W.T, b)]
    if np.sum(x) > -100.0:
        for k, layer in zip(range(2), layers):
            x = layer.forward(x) * (k + 1)
    return np.sum(layer.forward(x))


def given_list_in_a_branch_read_after(layers, x):
    if np.sum(x) > -100.0:
        for layer in layers:
            x = layer.forward(x)
    return np.sum(layer.b * x)


def given_list_in_a_branch_read_there(layers, x):
    if np.sum(x) > -100.0:
        for layer in layers:
            x = layer.forward(x)
        x = x * np.sum(layer.b)
    return np.sum(x)


_RNG = np.random.default_rng(4)
_W, _B, _X = _RNG.standard_normal((3, 3)) * 0.5, _RNG.standard_normal(3), \
    _RNG.standard_normal(3)


@pytest.mark.parametrize("f, args", [
    (zipped_in_a_branch_read_after, (_W, _B, _X)),
    (given_list_in_a_branch_read_after, ([_Dense(_W, _B), _Dense(_W.T, _B)], _X)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_object_loop_variable_read_after_its_block_is_refused(f, args):
    """The loop is unrolled with its variable bound to each object in the
    compiler: read after the block holding the loop, it would be the last
    object where the block did not run (Python: UnboundLocalError) -- a
    gradient before, now refused naming the read."""
    with pytest.raises(TangentCkptError, match=r"test_container_loops.py:\d+: 'layer', the "
                                               r"variable of a loop over a list of objects"):
        tc.grad(f, wrt=(0,))(*args)


def test_an_object_loop_variable_read_in_its_block_after_the_loop_is_the_last_object():
    layers = [_Dense(_W, _B), _Dense(_W.T, _B)]
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        (got,) = tc.grad(given_list_in_a_branch_read_there, wrt=(1,), **options)(layers, _X)
        (expected,) = numeric_grad(given_list_in_a_branch_read_there, (layers, _X), (1,))
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
