"""Globals at call time (compiler/frontend/parse.py Dependencies, api cache): a gradient
is compiled against the objects its free names denote, checked before every
call; a rebound global, a redefined helper or a reassigned closure variable
makes it compile again, so the gradient is always that of the code as it is."""

import numpy as np
import pytest

import stepping_settings
import tangent_ckpt as tc
from gradcheck import numeric_grad

LAM = 2.0
WEIGHTS = np.array([1.0, 2.0, 3.0])


def _square(x):
    return x * x


def uses_global_float(x):
    return np.sum(LAM * x ** 2)


def uses_global_array(x):
    return np.sum(WEIGHTS * np.sin(x))


def uses_helper(x):
    return np.sum(_square(x))


def uses_all_in_a_loop(x, n):
    for t in range(n):
        x = np.tanh(LAM * _square(x) * 0.1 + WEIGHTS * 0.01)
    return np.sum(x)


@pytest.fixture
def restore_globals():
    saved = (LAM, WEIGHTS, _square)
    yield
    globals().update(LAM=saved[0], WEIGHTS=saved[1], _square=saved[2])


def _check(fn, df, *args):
    np.testing.assert_allclose(df(*args), numeric_grad(fn, args)[0], rtol=1e-6, atol=1e-8)


def test_rebound_global_float_is_read_at_call_time(restore_globals):
    x = np.array([0.3, -0.4, 0.5])
    df = tc.grad(uses_global_float)
    _check(uses_global_float, df, x)
    globals()["LAM"] = 10.0
    _check(uses_global_float, df, x)                          # the same gradient object
    _check(uses_global_float, tc.grad(uses_global_float), x)  # and a freshly made one


def test_rebound_global_array(restore_globals):
    x = np.array([0.3, -0.4, 0.5])
    df = tc.grad(uses_global_array)
    _check(uses_global_array, df, x)
    globals()["WEIGHTS"] = np.array([-1.0, 0.5, 4.0])
    _check(uses_global_array, df, x)


def test_global_array_changed_in_place(restore_globals):
    globals()["WEIGHTS"] = np.array([1.0, 2.0, 3.0])
    x = np.array([0.3, -0.4, 0.5])
    df = tc.grad(uses_global_array)
    _check(uses_global_array, df, x)
    WEIGHTS[:] = [5.0, -2.0, 0.25]
    _check(uses_global_array, df, x)


def test_redefined_helper(restore_globals):
    x = np.array([0.3, -0.4, 0.5])
    df = tc.grad(uses_helper)
    _check(uses_helper, df, x)
    globals()["_square"] = lambda x: x * x * x
    _check(uses_helper, df, x)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_changes_between_calls_in_a_checkpointed_loop(restore_globals, checkpoint):
    x = np.array([0.3, -0.4, 0.5])
    df = tc.grad(uses_all_in_a_loop, checkpoint=checkpoint, snapshots=2)
    _check(uses_all_in_a_loop, df, x, 6)
    globals().update(LAM=-3.0, WEIGHTS=np.array([2.0, 0.0, -1.0]),
                     _square=lambda x: np.sin(x) * x)
    _check(uses_all_in_a_loop, df, x, 6)


def make_loss(k):
    def loss(x):
        return np.sum(k * x ** 2)
    return loss


def test_closure_variable_reassigned():
    k = 2.0

    def loss(x):
        return np.sum(k * x ** 3)
    x = np.array([0.3, -0.4])
    df = tc.grad(loss)
    _check(loss, df, x)
    k = 5.0  # noqa: F841 - read by loss through its closure
    _check(loss, df, x)


def test_unchanged_names_reuse_the_compiled_gradient():
    x = np.array([0.3, -0.4, 0.5])
    df = tc.grad(uses_all_in_a_loop)
    df(x, 3)
    first = df.compile()
    df(x, 3)
    assert df.compile() is first
    assert len(first.dependencies) >= 3  # LAM, WEIGHTS, _square (and np)


def test_clear_cache_compiles_afresh():
    x = np.array([0.3, -0.4, 0.5])
    first = tc.grad(uses_global_float).compile()
    assert tc.grad(uses_global_float).compile() is first
    tc.clear_cache()
    again = tc.grad(uses_global_float).compile()
    assert again is not first
    _check(uses_global_float, tc.grad(uses_global_float), x)


def test_two_lambdas_on_one_line_get_their_own_gradients():
    fa, fb = (lambda x: np.sum(x ** 2)), (lambda x: np.sum(x ** 3))  # noqa: E731
    x = np.array([0.5, -1.5])
    np.testing.assert_allclose(tc.grad(fa)(x), 2 * x)
    np.testing.assert_allclose(tc.grad(fb)(x), 3 * x ** 2)


# --- a module-level float is read when the gradient runs ---------------------------
RATE = 0.5


def decayed(x, n):
    for t in range(n):
        x = x * RATE + np.sin(x) * 0.1
    return np.sum(x ** 2)


def _fd(f, x, n, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e, n) - f(x - e, n)) / (2 * eps)
    return g


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_changed_module_float_is_read_without_compiling_again(options):
    """A float stepped between calls (a learning rate, a time) recompiled the
    gradient on every call (3 ms against 0.03 ms)."""
    global RATE
    x = np.linspace(0.1, 1.0, 3)
    df = tc.grad(decayed, **options)
    try:
        for rate in (0.5, 0.7, 0.9):
            RATE = rate
            g = df(x, 4)
            if rate == 0.5:
                compiled = df.compile()
            assert df.compile() is compiled  # the same code, the new value
            np.testing.assert_allclose(g, _fd(decayed, x, 4), rtol=1e-6)
        assert "x * RATE" in df.source
        RATE = 1  # an int: written into the code as a number, compiled again
        np.testing.assert_allclose(df(x, 4), _fd(decayed, x, 4), rtol=1e-6)
        assert df.compile() is not compiled
    finally:
        RATE = 0.5


def test_forward_mode_and_hvp_read_the_new_float_too():
    global RATE
    x, v = np.linspace(0.1, 1.0, 3), np.array([1.0, -0.5, 0.25])
    jvp, hvp = tc.jvp(decayed), tc.hvp(decayed)
    try:
        for rate in (0.5, 0.8):
            RATE = rate
            _, jv = jvp(x, 3, v)
            np.testing.assert_allclose(jv, _fd(decayed, x, 3) @ v, rtol=1e-6)
            hv = hvp(x, 3, v)
            want = (tc.grad(decayed)(x + 1e-5 * v, 3) - tc.grad(decayed)(x - 1e-5 * v, 3)) / 2e-5
            np.testing.assert_allclose(hv, want, rtol=1e-5)
    finally:
        RATE = 0.5


# --- attributes of the user's classes and modules --------------------------------
class Config:
    dt = 0.1
    steps = 2


class Base:
    rate = 0.5

    def step(self, x):
        return np.sin(x) * self.rate


class Stepper(Base):
    def __init__(self, k):
        self.k = k


def uses_class_attributes(x):
    for t in range(Config.steps):
        x = x * Config.dt + np.sin(x)
    return np.sum(x)


def uses_an_inherited_attribute_and_method(x):
    s = Stepper(2.0)
    return np.sum(s.step(x) * s.k)


def uses_module_attributes(x):
    for t in range(stepping_settings.STEPS):
        x = x + stepping_settings.DT * np.sin(x)
    return np.sum(x)


@pytest.fixture
def restore_attributes():
    saved = (Config.dt, Config.steps, Base.rate, Base.step, stepping_settings.DT,
             stepping_settings.STEPS)
    yield
    Config.dt, Config.steps, Base.rate, Base.step = saved[:4]
    if "rate" in vars(Stepper):
        del Stepper.rate
    stepping_settings.DT, stepping_settings.STEPS = saved[4:]


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_rebound_attribute_of_a_users_class_or_module_compiles_again(restore_attributes,
                                                                        checkpoint):
    """Config.dt = 0.5 (a class's number, or a base class's method replaced, or
    stepping_settings.DT of a module of the user's) was read once, at the first
    compile: every later gradient, even a new tc.grad, kept the old number."""
    x = np.array([0.3, -0.4, 0.5])
    cases = [(uses_class_attributes, lambda: setattr(Config, "dt", 0.5)),
             (uses_class_attributes, lambda: setattr(Config, "steps", 4)),
             (uses_an_inherited_attribute_and_method, lambda: setattr(Base, "rate", 3.0)),
             (uses_an_inherited_attribute_and_method,
              lambda: setattr(Base, "step", lambda self, x: np.cos(x) * self.rate)),
             (uses_an_inherited_attribute_and_method, lambda: setattr(Stepper, "rate", 1.5)),
             (uses_module_attributes, lambda: setattr(stepping_settings, "DT", 0.7)),
             (uses_module_attributes, lambda: setattr(stepping_settings, "STEPS", 1))]
    for fn, change in cases:
        df = tc.grad(fn, checkpoint=checkpoint)
        _check(fn, df, x)
        change()
        _check(fn, df, x)
        _check(fn, tc.grad(fn, checkpoint=checkpoint), x)
        assert df.compile() is df.compile()  # compiled once more, then reused
