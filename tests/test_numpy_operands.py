"""The run-time checks of lists read as NumPy arrays (rt.require_numpy_operand) that
the analysis proves pass are left out (compiler/analyze/numpy_operands.py); the
others stay, and stop a gradient whose operand is no NumPy array."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad

CHECK = "rt.require_numpy_operand("


def stored_into_a_new_array(x):
    a = np.zeros((2, 3))
    a[0] = (x, 2.0 * x, 1)
    return np.sum(a ** 2)


def added_into_rows_of_a_new_array(x, n):
    a = np.ones((3, 3))
    for t in range(n):
        a[t % 3] += [x, 0.5, -x]
        a[t % 3] = a[t % 3] - (0.1, x, 0.2)
    return np.sum(np.tanh(a))


def an_array_argument_times_a_list(w, x):
    return np.sum(w * [x, 1.0, 2.0]) + np.sum([x, x, 3.0] * np.tanh(w))


@pytest.mark.parametrize("f, args", [
    (stored_into_a_new_array, (0.3,)),
    (added_into_rows_of_a_new_array, (0.4, 5)),
    (an_array_argument_times_a_list, (np.array([0.1, 0.2, 0.3]), 0.6)),
])
def test_a_check_proved_to_pass_is_left_out(f, args):
    df = tc.grad(f, wrt=(len(args) - 1 if f is an_array_argument_times_a_list else 0,))
    check_grad(f, args, wrt=(len(args) - 1 if f is an_array_argument_times_a_list else 0,),
               df=df)
    assert CHECK not in df.source, df.source


def times_an_item(w, x):
    a = np.tanh(w)
    return np.sum([x, 1.0, 2.0] * a[0])  # a[0] of a 2-d array: a row; of an int array: repeats


def test_an_item_times_a_list_keeps_its_check():
    df = tc.grad(times_an_item, wrt=(0, 1))
    check_grad(times_an_item, (np.eye(3) * 0.5, 0.7), wrt=(0, 1), df=df)
    assert CHECK in df.source and "'*', line=" in df.source


def plus_a_list(w, x):
    return np.sum(np.asarray(w + [x, 1.0]))


def test_an_argument_not_known_to_be_an_array_is_checked_when_it_runs():
    """Compiled for a list argument, w + [x, 1.0] joins the lists in Python."""
    df = tc.grad(plus_a_list, wrt=1)
    assert df(np.array([0.5, 0.5]), 2.0) == 1.0
    with pytest.raises(tc.errors.TangentCkptError, match=r"meets a list in `x \+ \[\.\.\.\]`"):
        df([0.5, 0.5], 2.0)


OFFSETS = np.arange(3.0)


def plus_a_module_array(x):
    return np.sum((OFFSETS + [x, 1.0, 2.0]) ** 2)


def test_a_module_level_array_needs_no_check_and_a_rebound_list_is_refused(monkeypatch):
    df = tc.grad(plus_a_module_array)
    check_grad(plus_a_module_array, (0.5,), df=df)
    assert CHECK not in df.source
    monkeypatch.setitem(globals(), "OFFSETS", [0.0, 1.0, 2.0])  # the gradient compiles again
    with pytest.raises(tc.errors.TangentCkptError, match=r"meets a list in `x \+ \[\.\.\.\]`"):
        df(0.5)


def shape_named_then_joined(x, k):
    s = np.shape(x)
    return np.sum(np.ones(s + (k,))) * np.sum(x)


def test_a_shape_tuple_is_no_numpy_value():
    """``np.shape(x)`` makes a new value, but a tuple: the check of ``s + (k,)``
    stays, and stops the gradient where Python joins the tuples (it was proved
    to pass and left out: ``np.ones`` of the elementwise sum, 14.7 for 25.2)."""
    df = tc.grad(shape_named_then_joined)
    with pytest.raises(tc.TangentCkptError, match="Python joins the two sequences"):
        df(np.array([0.5, -0.3, 1.2, 0.7]), 3)
    assert CHECK in df.source


class _Recorder:
    pass


RECORDER = _Recorder()
RECORDER.hist = []


def history_on_an_outside_object(x):
    RECORDER.hist = RECORDER.hist + [x]
    return x * 2.0


def test_joining_a_list_read_from_outside_says_what_to_write_instead():
    """``CELL.hist = CELL.hist + [x]`` was told to 'pass a NumPy array, or write
    np.array([...])', which is not what it means; the hint now says which lists
    are followed and how to build one; a list argument differentiated joins."""
    with pytest.raises(tc.TangentCkptError, match="Python joins the two sequences") as info:
        tc.grad(history_on_an_outside_object)(2.0)
    message = str(info.value)
    assert "an attribute of an object made outside" in message, message
    assert "build the list in the function (xs = []; xs.append(v))" in message, message
    assert RECORDER.hist == []
    assert tc.grad(plus_a_list, wrt=(0, 1))([0.5, 0.5], 2.0)[1] == 1.0
