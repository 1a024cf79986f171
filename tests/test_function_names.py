"""desugar/function_names.py: a local name that surely denotes one function of
the user's is called by that function's own name, so that inlining writes the
call out; a local that may denote two functions keeps its calls."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError


def pendulum(t, y):
    return np.array([y[1], -np.sin(y[0])])


def damped(t, y):
    return np.array([y[1], -np.sin(y[0]) - 0.3 * y[1]])


class _Stepper:
    def __init__(self, f, dt):
        self.f = f
        self.dt = dt
        self.t = 0.0

    def step(self, y):
        dt, f = self.dt, self.f          # a local bound to the attribute's function
        k1 = f(self.t, y)
        k2 = f(self.t + dt, y + dt * k1)
        self.t += dt
        return y + dt / 2 * (k1 + k2)


def stepped_by_an_object(y0):
    stepper = _Stepper(pendulum, 0.1)
    y = y0
    for _ in range(8):
        y = stepper.step(y)
    return y[0] ** 2 + stepper.t * y[1]


def test_a_function_held_by_an_object_and_unpacked_is_called_by_its_name():
    text = desugared(stepped_by_an_object)
    assert "f(" not in text.replace("def ", "") and "-np.sin(y[0])" in text, text
    check_value_and_grad(stepped_by_an_object, (np.array([0.5, 0.1]),))


def chosen_in_a_branch(y0, c):
    rhs = pendulum
    if c > 0:
        rhs = damped                      # two functions: the name keeps its calls
    y = y0
    for _ in range(4):
        y = y + 0.1 * rhs(0.0, y)
    return np.sum(y ** 2)


def test_a_local_that_may_denote_two_functions_keeps_its_calls():
    """Which function runs is decided when the code runs: the call stays, and the
    lowering refuses it with the line (never the first function silently)."""
    assert "rhs(0.0, y)" in desugared(chosen_in_a_branch)
    with pytest.raises(TangentCkptError, match=r"test_function_names.py:\d+: cannot resolve "
                                               r"the function rhs"):
        tc.grad(chosen_in_a_branch)(np.array([0.5, 0.1]), 1.0)


def _negated(y):
    return -y


def _squared(y):
    return y * y


def with_a_nested_def_of_its_own_f(x):
    f = _negated
    def twice(f, v):                      # this f is twice's parameter
        return f(f(v))
    return np.sum(f(x)) + np.sum(twice(_squared, x))


def test_a_nested_defs_own_name_is_not_taken_for_the_local():
    """``twice``'s parameter ``f`` is ``_squared`` where it is inlined, never the
    caller's ``f = _negated``."""
    text = desugared(with_a_nested_def_of_its_own_f).split("\n\n\n")[0]
    assert "twice_result = y * y" in text and "-y" not in text, text
    check_value_and_grad(with_a_nested_def_of_its_own_f, (np.array([0.3, 0.5]),))


def numpy_under_a_local_name(x, c):
    m = np
    return np.sum(np.tanh(x)) * m.max(c) + m.sum(x * m.sin(x))


class _Sampler:
    """racecar's HMC: NumPy kept on the object (self.np = np)."""

    def __init__(self, scale):
        self.np = np
        self.scale = scale

    def energy(self, q):
        return self.np.sum(q * q) * self.scale + self.np.log(1.0 + self.np.sum(q ** 4))


def numpy_held_by_an_object(q, scale):
    sampler = _Sampler(scale)
    return sampler.energy(q)


@pytest.mark.parametrize("f, args", [
    (numpy_under_a_local_name, (np.array([0.3, 0.5]), np.array([1.0, 2.0]))),
    (numpy_held_by_an_object, (np.array([0.3, -0.5]), 0.7)),
])
def test_numpy_under_another_local_name_is_read_as_numpy(f, args):
    """m = np; m.max(c) is np.max(c): it was taken for the method of an array m,
    np.max(m, c), which raised a TypeError in the generated code."""
    text = desugared(f)
    assert "m.max" not in text and "m.sin" not in text and "sampler_np." not in text, text
    check_value_and_grad(f, args, wrt=(0,))
