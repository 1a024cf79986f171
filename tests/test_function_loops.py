"""desugar/function_loops.py: a ``for`` loop over a tuple or list of functions,
unrolled into its body once per function (each call of the loop variable then
names its function), taped and checkpointed against finite differences."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_structured_leaves
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


def _relu(z):
    return np.maximum(z, 0.0)


W1 = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.6], [-0.1, 0.2, 0.7]])
W2 = np.array([[0.2, 0.1, -0.3], [-0.5, 0.6, 0.2], [0.4, -0.1, 0.3]])
W3 = W1.T * 0.8


def activations_zipped_with_given_weights(x, Ws, bs):
    h = x
    for W, b, act in zip(Ws, bs, ACTIVATIONS):
        h = act(W @ h + b)
    return np.sum(h ** 2)


def activations_zipped_with_pairs(x, params):
    h = x
    for (W, b), act in zip(params, (np.tanh, _square)):
        h = act(W @ h + b)
    return np.sum(h)


def fewer_activations_than_weights(x, Ws):
    h = x
    for k, (W, act) in enumerate(zip(Ws, [np.tanh, _relu]), 1):
        h = act(W @ h) / k
    return np.sum(h) + np.sum(W) * k     # the last trip's W and k


def local_lists_zipped(x, A, B):
    Ws = [A, B]
    acts = [_relu, np.tanh]
    h = x
    for W, act in zip(Ws, acts):
        h = act(W @ h) + 0.1 * h
    return np.sum(h)


def display_item_rebound_in_the_body(x, A, B):
    h = x
    for W, act in zip((A, B), (np.tanh, np.sin)):
        h = act(W @ h)
        B = B * 2.0      # the display holds the B of before the loop
    return np.sum(h) + np.sum(B)


def every_item_made_though_zip_stops_earlier(x, A, seed):
    rng = np.random.default_rng(seed)
    h = x
    for W, act in zip((A, A + rng.normal(size=A.shape), A * rng.normal()), (np.tanh, _square)):
        h = act(W @ h)
    return np.sum(h) + rng.normal()   # the display's third draw was made before the loop


ZIPPED = [
    (activations_zipped_with_given_weights, (X, [W1, W2, W3], [X, -X, 2 * X]), (0, 1, 2)),
    (activations_zipped_with_pairs, (X, [(W1, X), (W2, -X)]), (0, 1)),
    (fewer_activations_than_weights, (X, (W1, W2, W3)), (0, 1)),
    (local_lists_zipped, (X, W1, W2), (0, 1, 2)),
    (display_item_rebound_in_the_body, (X, W1, W2), (0, 1, 2)),
    (every_item_made_though_zip_stops_earlier, (X, W1, 0), (0, 1)),
]


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f, args, wrt", ZIPPED, ids=[z[0].__name__ for z in ZIPPED])
def test_activations_zipped_with_weights_are_written_out(f, args, wrt, options):
    """``for W, act in zip(Ws, ACTS)`` (weights given, in a display or a local
    list): each trip binds its weight and calls its function; it was refused
    ("cannot resolve the function act")."""
    value, grads = tc.value_and_grad(f, wrt=wrt, **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    if any(isinstance(args[k], (list, tuple)) for k in wrt):
        check_structured_leaves(f, args, wrt, grads)
    else:
        check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **options))


def lambdas_looped_over(x, a):
    fs = [lambda t: a * t, lambda t: np.sin(t) ** 2]
    y = 0.0
    for f in fs:
        y = y + f(x)
    return np.sum(y ** 2)


def lambdas_summed(x, a):
    c = 1.0
    fs = [lambda t, s=a: s * t, lambda t: c * t ** 2]
    c = 2.0          # a closure reads c when it runs: 2.0
    a = a * 10.0     # a default was taken where the lambda was made
    return np.sum(sum(f(x) for f in fs)) + a


def powers_bound_by_default(x, a):
    fs = [lambda t, k=k: a * t ** k for k in range(3)]
    return np.sum(np.stack([f(x) for f in fs]) ** 2)


def powers_bound_late(x, a):
    fs = [lambda t: a * t ** k for k in range(1, 4)]   # every lambda reads k = 3
    total = 0.0
    for j, f in enumerate(fs):
        total = total + (j + 1) * np.sum(f(x))
    return total


LAMBDA_LISTS = [lambdas_looped_over, lambdas_summed, powers_bound_by_default, powers_bound_late]


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", LAMBDA_LISTS, ids=[f.__name__ for f in LAMBDA_LISTS])
def test_a_local_list_of_lambdas_is_written_out(f, options):
    """``fs = [lambda t: t, ...]`` (or a comprehension of lambdas over a constant
    range) looped over or summed: each lambda named, each call its own; Python's
    late binding kept (a closure reads the comprehension's last value, a default
    its own).  It was refused ("a function ... held as a value")."""
    args = (X, 1.5)
    check_grad(f, args, wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)


def local_functions_looped_over(x, a):
    def damped(t):
        return a * t * 0.5

    wave = lambda t: np.sin(t) ** 2   # noqa: E731 - a local bound once to a lambda
    y = x
    for f in (damped, wave, np.tanh):
        y = f(y) + 0.1 * y
    return np.sum(y ** 2) + np.sum(sum(g(x) for g in [damped, wave]))


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
def test_a_loop_over_local_functions_is_written_out(options):
    """A ``def`` or a ``lambda`` bound once, before the loop, at the function's
    top level names one function in each trip; it was refused ("a function ...
    held as a value")."""
    f, args = local_functions_looped_over, (X, 1.5)
    check_grad(f, args, wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)


def _forward(params, x):
    h = x
    for (W, b), act in zip(params, ACTIVATIONS):
        h = act(W @ h + b)
    return h


def helper_zipping_the_callers_list(params, x):
    return np.sum(_forward(params, x) ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}], ids=["taped", "checkpointed"])
def test_a_helpers_zip_over_the_list_its_caller_gives_is_written_out(options):
    """The helper's template does not know the list's length; inlined, its loop
    reads the caller's ``params``, which the call gives: written out then (it was
    refused, "a tuple or list used where an array is expected")."""
    f, args = helper_zipping_the_callers_list, ([(W1, X), (W2, -X), (W3, 2 * X)], X)
    value, grads = tc.value_and_grad(f, wrt=(0, 1), **options)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    check_structured_leaves(f, args, (0, 1), grads)
