"""desugar/function_loops.py: a ``for`` loop over a tuple or list of functions,
unrolled into its body once per function (each call of the loop variable then
names its function), taped and checkpointed against finite differences."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared

X = np.array([0.3, -0.4, 0.5])


def _squash(v):
    return v / (1.0 + v * v)


def chain_of_activations(x):
    for act in (np.tanh, np.sin, _squash):
        x = act(x) + 0.1 * x
    return np.sum(x ** 2)


def activations_in_a_range_loop(x, n):
    for t in range(n):
        for act in [np.cos, _squash]:
            x = x * 0.9 + 0.1 * act(x)
    return np.sum(x)


def activation_read_after_the_loop(x):
    total = 0.0
    for act in (np.exp, np.tanh):
        total = total + np.sum(act(x))
    return total + np.sum(act(2.0 * x))   # the last one: np.tanh


@pytest.mark.parametrize("f, args", [(chain_of_activations, (X,)),
                                     (activations_in_a_range_loop, (X, 3)),
                                     (activation_read_after_the_loop, (X,))])
def test_a_loop_over_functions_is_the_body_once_per_function(f, args):
    check_grad(f, args, wrt=(0,))
    check_grad(f, args, wrt=(0,), df=tc.grad(f, checkpoint=True, snapshots=2))
    assert "for act in" not in desugared(f)


def lambda_keeping_the_loop_variable(x):
    fs = []
    for act in (np.tanh, np.sin):
        fs.append(lambda v: act(v))   # each lambda reads act when called: np.sin
    return np.sum(fs[0](x))


def test_a_loop_whose_body_makes_a_closure_stays_a_loop():
    """A ``lambda`` in the body reads ``act`` when it runs (the last function);
    written out, it would read its own trip's."""
    assert "for act in (np.tanh, np.sin)" in desugared(lambda_keeping_the_loop_variable)


def _constant(t):
    return np.ones_like(t)


def _linear(t):
    return t


def _square(t):
    return t ** 2


BASIS = [_constant, _linear, _square]
ACTIVATIONS = (np.tanh, _square, np.sin)
C = np.array([0.5, -0.3, 0.2])
T = np.linspace(0.0, 1.0, 4)


def basis_by_enumerate(c, t):
    y = 0.0
    for k, phi in enumerate((_constant, _linear, _square)):
        y = y + c[k] * phi(t)
    return np.sum(y ** 2)


def basis_of_the_module(c, t):
    y = 0.0
    for k, phi in enumerate(BASIS):
        y = y + c[k] * phi(t)
    return np.sum(y ** 2) + k


def activations_of_the_module(c, t):
    h = t
    for act in ACTIVATIONS:
        h = act(c[0] * h + c[1])
    return np.sum(h) * c[2]


def basis_of_a_local_list(c, t):
    basis = [_constant, _linear, _square]
    y = 0.0
    for k, phi in enumerate(basis, start=1):
        y = y + c[k - 1] * phi(t) / k
    return np.sum(y ** 2) + np.sum(phi(t))


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [basis_by_enumerate, basis_of_the_module, activations_of_the_module,
                               basis_of_a_local_list], ids=lambda f: f.__name__)
def test_a_list_of_functions_looped_over_is_written_out(f, options):
    check_grad(f, (C, T), df=tc.grad(f, **options))
    value, _ = tc.value_and_grad(f, **options)(C, T)
    assert value == pytest.approx(f(C, T), rel=1e-12)
    assert "for " not in desugared(f).split("\n\n\n")[0]


def test_a_module_list_stored_into_compiles_again():
    df = tc.grad(basis_of_the_module)
    before = df(C, T)
    BASIS[2] = _linear
    try:
        after = df(C, T)
        check_grad(basis_of_the_module, (C, T), df=df)
    finally:
        BASIS[2] = _square
    assert not np.allclose(before, after)
    BASIS.append(_square)
    try:
        np.testing.assert_allclose(df(C[[0, 1, 2, 2]], T), tc.grad(basis_of_the_module)(
            C[[0, 1, 2, 2]], T), rtol=1e-12)
        check_grad(basis_of_the_module, (C[[0, 1, 2, 2]], T), df=df)
    finally:
        BASIS.pop()


LAMBDAS = [lambda t: t, lambda t: t ** 2]


def lambdas_of_the_module(c, t):
    y = 0.0
    for k, phi in enumerate(LAMBDAS):
        y = y + c[k] * phi(t)
    return np.sum(y)


def test_a_module_list_of_lambdas_stays_a_loop():
    assert "for k, phi in enumerate(LAMBDAS)" in desugared(lambdas_of_the_module)


def _summed_over_a_display(u):
    out = u * 0.0
    for phi in (_linear, np.sin, _square):
        out = out + phi(u)
    return out


def _summed_by_enumerate(u):
    out = u * 0.0
    for k, phi in enumerate((np.tanh, _square), start=1):
        out = out + phi(u) / k
    return out


def helper_loops_over_functions(c, t):
    return np.sum((_summed_over_a_display(t * c[0]) + _summed_by_enumerate(t * c[1])) ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
def test_a_helpers_loop_over_functions_is_written_out_where_it_is_inlined(options):
    f = helper_loops_over_functions
    check_grad(f, (C, T), df=tc.grad(f, **options))
    value, _ = tc.value_and_grad(f, **options)(C, T)
    assert value == pytest.approx(f(C, T), rel=1e-12)
