"""desugar/function_names.py: a local name that surely denotes one function of
the user's is called by that function's own name, so that inlining writes the
call out; a local that may denote two functions keeps its calls."""

import gast
import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_value_and_grad
from tangent_ckpt.compiler.desugar.function_names import resolve_function_names
from tangent_ckpt.compiler.frontend.parse import parse_function
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


# --- a local bound to one method of one object: an integrator given `model.rhs` ------
# (the Burgers1D class of the code search, `rk4_step(model.rhs, u, t, dt)` in its time
# loop: inlining the helper binds its parameter, `f = model.rhs`, inside the loop)

def _rk4_step(f, u, t, dt):
    k1 = f(u, t)
    k2 = f(u + 0.5 * dt * k1, t + 0.5 * dt)
    k3 = f(u + 0.5 * dt * k2, t + 0.5 * dt)
    k4 = f(u + dt * k3, t + dt)
    return u + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


class _Burgers:
    def __init__(self, nu, dx):
        self.nu = nu
        self.dx = dx

    def rhs(self, u, t):
        dudx = (np.roll(u, -1) - np.roll(u, 1)) / (2 * self.dx)
        d2udx2 = (np.roll(u, -1) - 2 * u + np.roll(u, 1)) / self.dx ** 2
        return -u * dudx + self.nu * d2udx2

    def run(self, u, n):
        for _ in range(n):
            u = _rk4_step(self.rhs, u, 0.0, 0.01)   # self's method, in a method's loop
        return u


def bound_method_in_a_loop(u, nu):
    model = _Burgers(nu, 0.5)
    for _ in range(4):
        u = _rk4_step(model.rhs, u, 0.0, 0.01)
    return np.sum(np.sin(u))


def self_method_in_a_loop(u, nu):
    model = _Burgers(nu, 0.5)
    return np.sum(np.sin(model.run(u, 4)))


U0 = 1 + 0.3 * np.sin(np.linspace(0, 6, 8))


@pytest.mark.parametrize("f", [bound_method_in_a_loop, self_method_in_a_loop])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_method_handed_to_a_helper_is_inlined_with_the_objects_fields(f, options):
    # the helper's parameter stands for `model.rhs` (inline_functions.made_objects_method):
    # each `f(u, t)` is the method inlined, the object one name per attribute
    text = desugared(f)
    assert "f = " not in text and ".rhs(" not in text and "model_nu" in text, text
    check_value_and_grad(f, (U0, 0.1), wrt=(0, 1))
    df = tc.grad(f, wrt=(0, 1), **options)
    taped = tc.grad(f, wrt=(0, 1))(U0, 0.1)
    for g, t in zip(df(U0, 0.1), taped):
        np.testing.assert_allclose(g, t, rtol=1e-12)


class _Shadowed(_Burgers):
    def shadow(self):
        self.rhs = self.other                # an attribute of the method's name: kept

    def other(self, u, t):
        return -u


def method_shadowed_by_an_attribute(u, nu):
    model = _Shadowed(nu, 0.5)
    for k in range(3):
        f = model.rhs
        if k == 1:
            model.rhs = model.other
        u = u + 0.01 * f(u, 0.0)
    return np.sum(u)


class _WithProperty:
    def __init__(self, c):
        self.c = c

    @property
    def rhs(self):                           # read again, a property may give another
        return lambda u, t: -self.c * u


def property_read_in_a_loop(u, c):
    model = _WithProperty(c)
    for _ in range(3):
        f = model.rhs
        u = u + 0.01 * f(u, 0.0)
    return np.sum(u)


@pytest.mark.parametrize("f", [method_shadowed_by_an_attribute, property_read_in_a_loop])
def test_a_method_an_attribute_may_shadow_or_a_property_keeps_its_calls(f):
    parsed = parse_function(f)
    assert not resolve_function_names(parsed, parsed.node)
    text = gast.unparse(parsed.node)
    assert "f = model.rhs" in text and "f(u, 0.0)" in text, text


# --- a function a module-level class holds, and comparisons of functions -------------
# An integrator given the right-hand side as a static method of a class of
# right-hand sides (``rk4(f, t, dt, Derivatives.pend, g, L)``) and dispatching on
# it (``if derivs == Derivatives.pend: ... elif derivs == Derivatives.double_pend``,
# the other branch calling it with other arguments): the local denotes one
# function, its calls are that function's, and each comparison is the constant it
# is (functions compare by identity), so the branch not taken is never compiled.
class Derivatives:
    @staticmethod
    def pend(f, t, g, length):
        return np.array([f[1], -g / length * np.sin(f[0])])

    @staticmethod
    def spring(f, t, k, c, m):
        return np.array([f[1], -(k * f[0] + c * f[1]) / m])


def rk_dispatching(f, t, dt, derivs, *args):
    if derivs == Derivatives.pend:
        k1 = derivs(f, t, args[0], args[1]) * dt
        k2 = derivs(f + k1 / 2, t + dt / 2, args[0], args[1]) * dt
    elif derivs is not pendulum:
        k1 = derivs(f, t, *args) * dt
        k2 = derivs(f + k1 / 2, t + dt / 2, *args) * dt
    return f + k2


def static_method_right_hand_sides(f, length, k):
    for i in range(4):
        f = rk_dispatching(f, i * 0.1, 0.1, Derivatives.pend, 9.81, length)
    y = np.array([0.3, 0.1])
    for i in range(3):
        y = rk_dispatching(y, i * 0.1, 0.1, Derivatives.spring, k, 0.2, 1.5)
    return np.sum(f ** 2) + np.sum(y ** 2)


def euler_with_a_static_method(f, length):
    for i in range(4):
        f = euler_step(f, 0.1, Derivatives.pend, 9.81, length)
    return np.sum(f ** 2)


def euler_step(f, dt, derivs, *args):
    return f + dt * derivs(f, 0.0, *args)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f, args", [
    (static_method_right_hand_sides, (np.array([0.4, 0.0]), 0.9, 1.2)),
    (euler_with_a_static_method, (np.array([0.4, 0.0]), 0.9)),
])
def test_a_static_method_given_to_an_integrator_is_called_and_compared(f, args, options):
    check_value_and_grad(f, args, wrt=(0, 1))
    df = tc.grad(f, wrt=(0, 1), **options)
    check_grad(f, args, wrt=(0, 1), df=df)
    if options:
        assert "CheckpointedLoop(" in df.source


def test_a_comparison_of_functions_is_decided_and_one_of_two_locals_is_not():
    source = desugared(static_method_right_hand_sides)
    assert "derivs ==" not in source and "is not pendulum" not in source
    assert "Derivatives.spring(" in source

    def two(y, flag):
        rhs = pendulum if flag else damped
        if rhs == pendulum:
            return np.sum(rhs(0.0, y))
        return np.sum(y)

    assert "rhs == pendulum" in desugared(two)


class _Holder:
    f = staticmethod(_negated)


def stores_the_class_attribute(x):
    _Holder.f = _squared   # the class's f is another function from here on
    g = _Holder.f
    return np.sum(g(x))


def test_a_class_attribute_the_function_stores_is_not_taken_for_one_function():
    # never called as _Holder.f's first function; the store itself is refused
    with pytest.raises(TangentCkptError, match=r"test_function_names.py:\d+: a write into "
                                               r"the attribute '_Holder.f'"):
        tc.grad(stores_the_class_attribute)(np.array([0.5, 0.1]))


class _Cell:
    def __init__(self, W, act):
        self.W = W
        self.act = act

    def __call__(self, h):
        return self.act(h @ self.W)


def cell_made_each_step(x, W, n):
    h = x
    for t in range(n):
        cell = _Cell(W, np.tanh)        # made anew each trip: cell_act = np.tanh in the loop
        h = cell(h)
    return np.sum(h)


def norm_bound_in_a_loop(x, n):
    for t in range(n):
        size = np.linalg.norm           # a dispatcher object in NumPy 2, a function in NumPy 1
        x = x / (1.0 + size(x))
    return np.sum(x ** 2)


@pytest.mark.parametrize("f, args, wrt", [
    (cell_made_each_step, (np.linspace(-1, 1, 6).reshape(2, 3), np.eye(3) * 0.7 + 0.1, 4), (0, 1)),
    (norm_bound_in_a_loop, (np.linspace(-1, 1, 5), 3), (0,)),
], ids=["ufunc", "dispatcher"])
def test_a_local_bound_only_to_a_numpy_function_is_called_by_its_dotted_name(f, args, wrt):
    """``cell_act = np.tanh`` inside the loop (an object with a stored NumPy
    function, made each trip) was refused: "cannot resolve the function cell.act"."""
    assert "np.tanh(h @ cell_W)" in desugared(cell_made_each_step)
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **options))


STEPPERS = {"damped": damped, "pendulum": pendulum, "sin": np.sin}


def _integrated(y, n, f):
    for t in range(n):
        y = y + 0.1 * f(0.0, y)
    return y


def table_item_called(y, n):
    for t in range(n):
        y = y + 0.1 * STEPPERS["damped"](0.0, y)  # called where it is looked up
    return np.sum(y ** 2)


def display_item_chosen(y, n):
    f = {"damped": damped, "pendulum": pendulum}["pendulum"]
    return np.sum(_integrated(y, n, f) ** 2)


def display_item_called(x):
    return np.sum({"tanh": np.tanh, "sin": np.sin}["sin"](x) ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [table_item_called, display_item_chosen, display_item_called],
                         ids=lambda f: f.__name__)
def test_a_function_looked_up_by_a_constant_key_is_called_by_its_name(f, options):
    args = (np.array([0.4, -0.2]), 3) if f is not display_item_called else (np.array([0.4, -0.2]),)
    check_grad(f, args, df=tc.grad(f, **options))
    value, _ = tc.value_and_grad(f, **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)


def display_item_of_a_local(x, g):
    h = np.tanh
    return np.sum({"h": h, "g": g}["h"](x))


def test_a_display_with_an_item_not_surely_a_function_is_left_as_written():
    parsed = parse_function(display_item_of_a_local)
    resolve_function_names(parsed, parsed.node)
    text = __import__("ast").unparse(gast.gast_to_ast(parsed.node))
    assert "{'h': h, 'g': g}['h'](x)" in text, text
