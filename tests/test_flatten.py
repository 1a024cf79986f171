"""tc.ravel: nested parameters <-> one flat float64 vector, and back."""

from collections import namedtuple

import numpy as np
import pytest

import tangent_ckpt as tc

rng = np.random.default_rng(3)


def test_layout_is_traversal_order_and_c_order():
    W = np.arange(6.0).reshape(2, 3)
    b = np.array([10.0, 11.0])
    flat, _ = tc.ravel([(W, b), {"s": 7.0, "v": np.array([20.0])}])
    np.testing.assert_array_equal(flat, [0, 1, 2, 3, 4, 5, 10, 11, 7, 20])
    assert flat.dtype == np.float64 and flat.ndim == 1


def test_fortran_ordered_leaf_is_laid_out_in_c_order():
    W = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    flat, unravel = tc.ravel((W,))
    np.testing.assert_array_equal(flat, np.arange(6.0))
    np.testing.assert_array_equal(unravel(flat)[0], W)


def test_unravel_rebuilds_the_structure_in_float64():
    Point = namedtuple("Point", "x y")
    params = {"layers": [(rng.standard_normal((3, 2)), rng.standard_normal(3))],
              "scale": 2.5, "p": Point(np.float32(1.5), np.arange(3)), "empty": []}
    flat, unravel = tc.ravel(params)
    back = unravel(flat)
    assert list(back) == list(params)
    assert isinstance(back["layers"], list) and isinstance(back["layers"][0], tuple)
    assert isinstance(back["p"], Point) and isinstance(back["p"].x, float)
    assert back["scale"] == 2.5 and isinstance(back["scale"], float)
    assert back["p"].y.dtype == np.float64
    np.testing.assert_array_equal(back["p"].y, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(back["layers"][0][0], params["layers"][0][0])
    assert back["empty"] == []


def test_round_trip_does_not_share_or_mutate_memory():
    W = rng.standard_normal((2, 2))
    kept = W.copy()
    flat, unravel = tc.ravel([W])
    flat[0] = 99.0
    assert np.array_equal(W, kept)          # flat is a copy of the inputs
    v = np.zeros(4)
    out = unravel(v)
    out[0][0, 0] = 5.0
    assert v[0] == 0.0                      # unravel's arrays are copies of v


def test_unravel_refuses_a_vector_of_another_size():
    _, unravel = tc.ravel([np.ones(3)])
    with pytest.raises(tc.TangentCkptError, match=r"shape \(3,\), got shape \(4,\)"):
        unravel(np.ones(4))


@pytest.mark.parametrize("leaf, words", [("text", "str"), (None, "NoneType"),
                                         (np.array([1j]), "complex"), (True, "bool")])
def test_non_numeric_leaves_are_refused_by_path(leaf, words):
    with pytest.raises(tc.TangentCkptError, match=r"params\[1\]\['a'\]") as info:
        tc.ravel([np.ones(2), {"a": leaf}])
    assert words in str(info.value)


def test_flat_gradient_matches_ravel_of_the_gradients():
    def loss(W1, b1, W2, x):
        return np.sum(np.tanh(W1 @ x + b1) * W2)
    W1, b1, W2, x = (rng.standard_normal((3, 2)), rng.standard_normal(3),
                     rng.standard_normal(3), rng.standard_normal(2))
    value, flat_grad = tc.value_and_grad(loss, wrt=(0, 1, 2), flat=True)(W1, b1, W2, x)
    grads = tc.grad(loss, wrt=(0, 1, 2))(W1, b1, W2, x)
    assert value == pytest.approx(loss(W1, b1, W2, x))
    np.testing.assert_array_equal(flat_grad, tc.ravel(grads)[0])
    assert flat_grad.shape == (W1.size + b1.size + W2.size,)
    np.testing.assert_array_equal(tc.grad(loss, wrt=(0, 1, 2), flat=True)(W1, b1, W2, x),
                                  flat_grad)


def test_flat_value_and_grad_drives_scipy_minimize():
    minimize = pytest.importorskip("scipy.optimize").minimize

    def quadratic(A, b, target):
        return np.sum((A @ b - target) ** 2) + 0.1 * np.sum(A ** 2)
    A0, b0, target = np.eye(2), np.ones(2), np.array([1.0, -2.0])
    x0, unravel = tc.ravel((A0, b0))
    vg = tc.value_and_grad(quadratic, wrt=(0, 1), flat=True)
    res = minimize(lambda v: vg(*unravel(v), target), x0, jac=True, method="L-BFGS-B",
                   tol=1e-14)
    assert res.success and res.fun < quadratic(A0, b0, target)
    A, b = unravel(res.x)
    assert np.linalg.norm(vg(A, b, target)[1]) < 1e-4
