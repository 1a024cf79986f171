"""lower/callables.py spread + calls.bind_parameters: ``def f(*args, **kwargs)``,
``g(*args)``, ``g(**opts)``, ``zip(*pairs)``-style spreads of known tuples,
``rng.randn(*x.shape)`` -- differentiated like the explicit calls they mean."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

RNG = np.random.default_rng(2)
X = RNG.standard_normal(4)
Y = RNG.standard_normal(4)


def product(*args):
    return np.prod(np.stack(args), axis=0) * len(args) + args[-1]


def weighted(x, **kwargs):
    return kwargs["scale"] * np.sin(x) + kwargs["shift"]


def forward_all(*args, **kwargs):
    return weighted(product(*args), **kwargs)


def star_args_definition(x, y):
    return np.sum(product(x, y, x))


def star_call(x, y):
    pair = (x, y)
    return np.sum(product(*pair) + weighted(x, **{"scale": 2.0, "shift": y}))


def forwarded(x, y):
    return np.sum(forward_all(x, y, scale=0.5, shift=x))


def scaled_sum(*xs, **options):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.tanh(x * options.get("scale", 1.0)))
    return total + options.get("shift", 0.0) * 0.0


def keywords_read_with_get(x, y):
    # the fuzzer's varargs family: .get of a passed keyword and of a missing one
    return scaled_sum(x, y, scale=0.5) + scaled_sum(x * y)


def noise_shaped_like(x, seed):
    rng = np.random.RandomState(seed)
    return np.sum(x * rng.randn(*x.shape) + x ** 2 * rng.rand(*x.shape))


@pytest.mark.parametrize("f, args, wrt", [
    (star_args_definition, (X, Y), (0, 1)),
    (star_call, (X, Y), (0, 1)),
    (forwarded, (X, Y), (0, 1)),
    (keywords_read_with_get, (X, Y), (0, 1)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_variadic_construct_is_differentiated(f, args, wrt):
    check_construct(f, args, wrt)


def test_draws_with_a_spread_shape_match_the_seeded_program():
    check_construct(noise_shaped_like, (X, 7), (0,), autograd=False)


def spread_of_an_array(x):
    return np.sum(product(*x))


def test_a_spread_of_unknown_length_is_refused_with_its_line():
    with pytest.raises(TangentCkptError) as info:
        tc.grad(spread_of_an_array)(X)
    assert "test_variadic.py:" in str(info.value) and "*x" in info.value.construct


def zip_of_spread_pairs(x, y):
    firsts, seconds = zip((x, y), (y * 2.0, x))  # zip(*pairs) once nested tuples bind
    rows = (np.outer(x, y), np.outer(y, x))
    total = 0.0
    for a, b in zip(*rows):
        total = total + np.sum(a * np.sin(b))
    return np.sum(firsts[0] * firsts[1]) + np.sum(seconds[1] ** 2) + total


def test_zip_of_a_spread_tuple_is_differentiated():
    check_construct(zip_of_spread_pairs, (X, Y), (0, 1))


def keyword_pop(x, **options):
    return np.sum(x * options.pop("scale"))


def calls_keyword_pop(x):
    return keyword_pop(x, scale=2.0)


def test_a_kwargs_method_other_than_get_is_refused_with_its_line():
    # (inlined by desugar, **options is the dict of the call's other keywords)
    with pytest.raises(TangentCkptError,
                       match=r"test_variadic.py:\d+: method .pop\(\) of (\*\*kwargs|a dict)"):
        tc.grad(calls_keyword_pop)(X)


def computed_and_handed_on(x, y):
    # desugar inlines forward_all, each computed item of its *args and **kwargs
    # bound first (in the call's order), then the spreads are those names
    t = 0.0
    for _ in range(2):
        t = t + np.sum(forward_all(x * 2.0, y, scale=np.sum(y) * 0.5, shift=x))
        x = x * 0.9
    return t


def test_keywords_handed_on_as_a_computed_dict_are_the_calls_items():
    text = desugared(computed_and_handed_on)
    assert "*args" not in text and "**kwargs" not in text and "product(" not in text, text
    check_construct(computed_and_handed_on, (X, Y), (0, 1))
