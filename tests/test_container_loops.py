"""lower/container_loops.py: a ``for`` loop over a tuple or list display is
unrolled, one copy of its body per element.  Python makes the tuple before the
loop, so an element is the object its name held then: a body binding the name
again (``b = v * 100``) does not change the elements still to come (each read
the new ``b`` before: 3030.3 for 10.4)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad


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
