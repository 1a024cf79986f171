"""compiler/desugar/fill_calls.py: ``a.fill(v)`` on a NumPy array is the write
``a[...] = v`` (``a[...] = np.full((), v)`` for a value that is not a number
constant, which raises as ``fill`` does for an array), differentiated taped and
checkpointed against central finite differences; a ``fill`` of an object that
is not surely an array, or of a copy, is left as written."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

RUNS = [dict(), dict(checkpoint=True), dict(checkpoint=True, snapshots=2)]
RUN_IDS = ["taped", "checkpoint", "snapshots2"]


def fill_with_a_constant(s):
    a = np.zeros(3)
    a.fill(0.0)
    a[1] = s
    return np.sum(a * a)


def fill_with_a_variable_in_a_loop(x, s):
    """Each step fills a scratch array with a differentiated value."""
    h = x * 1.0
    buf = np.empty_like(x)
    for t in range(4):
        buf.fill(s * t)
        h = np.tanh(h + buf)
    return np.sum(h ** 2)


def fill_a_view(x, s):
    U = np.ones((3, 4))
    row = U[1]                          # a view: the fill writes into U
    row.fill(s)
    U[2].fill(np.pi)                    # U[2, ...] = np.pi
    return np.sum(U * x)


def fill_an_integer_array(s):
    k = np.arange(3)
    k.fill(2.7)                         # cast to int: 2, no derivative through k
    return np.sum(k * s)


def fill_a_parameter_copy(x, s):
    y = np.copy(x)                      # (y = x.copy(): x may be any object, refused)
    y.fill(s)
    return np.sum(y * x)


@pytest.mark.parametrize("options", RUNS, ids=RUN_IDS)
@pytest.mark.parametrize("fn, args, wrt", [
    (fill_with_a_constant, (2.0,), (0,)),
    (fill_with_a_variable_in_a_loop, (np.array([0.1, -0.3, 0.5]), 0.2), (0, 1)),
    (fill_a_view, (np.arange(12.0).reshape(3, 4) / 10, 0.7), (0, 1)),
    (fill_an_integer_array, (1.5,), (0,)),
    (fill_a_parameter_copy, (np.array([0.1, -0.3, 0.5]), 0.2), (0, 1)),
])
def test_fill_is_differentiated_as_a_write(fn, args, wrt, options):
    df = tc.grad(fn, wrt=wrt, **options)
    check_grad(fn, args, wrt=wrt, df=df)


def test_checkpointed_gradient_equals_taped():
    args = (np.array([0.1, -0.3, 0.5]), 0.2)
    taped = tc.grad(fill_with_a_variable_in_a_loop, wrt=(0, 1))(*args)
    checkpointed = tc.grad(fill_with_a_variable_in_a_loop, wrt=(0, 1), checkpoint=True,
                           snapshots=2)(*args)
    for c, t in zip(checkpointed, taped):
        np.testing.assert_allclose(c, t, rtol=1e-12, atol=0)


def test_desugar_writes_fill_as_a_subscript_write():
    assert "a[...] = 0.0" in desugared(fill_with_a_constant)
    assert "buf[...] = np.full((), s * t)" in desugared(fill_with_a_variable_in_a_loop)
    assert "U[2, ...] = np.pi" in desugared(fill_a_view)


def fill_with_an_array(x):
    a = np.zeros(3)
    a.fill(x)                           # x of shape (3,): fill raises, a[...] = x would not
    return np.sum(a)


def test_fill_with_an_array_raises_as_numpy_does():
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        fill_with_an_array(x)
    with pytest.raises(ValueError):
        tc.grad(fill_with_an_array)(x)


class _Tank:
    def __init__(self):
        self.level = 0.0

    def fill(self, v):
        self.level = v


def fill_a_users_object(x):
    tank = _Tank()
    tank.fill(x * 2.0)                  # FILL: the class's own fill
    return tank.level * x


def fill_of_a_copy(x):
    U = np.ones((3, 4))
    U[[0, 2]].fill(x)                   # FILL: fills a copy, U unchanged
    return np.sum(U * x)


def fill_of_a_parameter(a, x):
    a.fill(x)                           # FILL: a may be anything
    return np.sum(a) * x


def test_fill_of_what_is_not_surely_an_array_is_left_as_written():
    # the class's own fill, inlined with the object written as names: no item write
    assert "tank_level = v" in desugared(fill_a_users_object) and \
        "[...]" not in desugared(fill_a_users_object)
    assert "U[[0, 2]].fill(x)" in desugared(fill_of_a_copy)
    assert "a.fill(x)" in desugared(fill_of_a_parameter)


@pytest.mark.parametrize("fn, args", [
    (fill_of_a_copy, (0.5,)),
    (fill_of_a_parameter, (np.zeros(2), 0.5)),
])
def test_fill_not_proven_a_write_into_an_array_stays_refused(fn, args):
    with pytest.raises(TangentCkptError, match=r"\.fill\(\)") as raised:
        tc.grad(fn, wrt=(len(args) - 1,))(*args)
    assert f":{line_of(fn, '# FILL')}:" in str(raised.value)
