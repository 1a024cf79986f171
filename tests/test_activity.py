"""compiler/analyze/activity.py: activity is per name, but whether an index (or
another argument a rule takes no derivative for) holds a differentiated value is
asked where it is read (``varied_on_entry``): a name that is an integer counter
at the read and is rebound to a differentiated value only afterwards is exact,
and still refused where any path may bring a differentiated value to the read.
Each accepted case is checked against finite differences, taped and
checkpointed, and against plain Python's value."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad

MODES = [pytest.param({}, id="taped"),
         pytest.param({"checkpoint": True, "snapshots": 2}, id="checkpointed")]


def rebound_after_read(x, b):
    j = 1
    y = x[j]
    j = x[0] * b        # j is active from here on; x[j] above read the counter
    return y * j


def update_system(pop, beta, i):
    # the helper's parameter ``i`` (the caller's counter) indexes, then is rebound
    # to a differentiated number (a SIR model written as its author wrote it)
    current = pop[i]
    s = current[0]
    i = current[1]
    new = np.array([[s - beta * s * i, i + beta * s * i, current[2]]])
    return np.concatenate((pop, new))


def sir_steps(pop, beta):
    for i in range(4):
        pop = update_system(pop, beta, i)
    return np.sum(pop ** 2)


@pytest.mark.parametrize("options", MODES)
def test_a_counter_rebound_to_a_differentiated_value_after_the_read(options):
    args = (np.array([1.5, 2.0, 0.5]), 0.7)
    df = tc.grad(rebound_after_read, wrt=(0, 1), **options)
    check_grad(rebound_after_read, args, wrt=(0, 1), df=df)


@pytest.mark.parametrize("options", MODES)
def test_a_helper_parameter_indexing_then_rebound_in_a_loop(options):
    args = (np.array([[0.9, 0.1, 0.0]]), 0.4)
    df = tc.grad(sir_steps, wrt=(0, 1), **options)
    got = check_grad(sir_steps, args, wrt=(0, 1), df=df)
    value, _ = tc.value_and_grad(sir_steps, wrt=(0, 1), **options)(*args)
    assert value == sir_steps(*args)
    if options:
        assert "CheckpointedLoop(" in df.source
        for g, t in zip(got, tc.grad(sir_steps, wrt=(0, 1))(*args)):
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=0)


def varied_from_the_previous_iteration(x, a):
    j = 0
    s = 0.0
    for k in range(3):
        s = s + a[j]
        j = x * 0.0      # a float index (raises in NumPy); differentiated from here
    return s


def varied_on_one_branch(x, a, flag):
    j = 1
    if flag:
        j = x * 1.0
    return a[j] * x


@pytest.mark.parametrize("f, args", [
    (varied_from_the_previous_iteration, (0.5, np.arange(3.0))),
    (varied_on_one_branch, (0.5, np.arange(3.0), False)),
])
def test_an_index_that_a_path_brings_a_differentiated_value_to_stays_refused(f, args):
    with pytest.raises(tc.UnsupportedFunctionError, match="an index depends on the "
                                                         "differentiated input"):
        tc.grad(f, wrt=(0,))(*args)
