"""desugar/one_shot_iterators.py: a name bound to an iterator (map, zip,
enumerate, reversed, filter, a generator expression) may be read once.  The rest
of the compiler holds such a value as the tuple of its items, so a second read
saw them again where Python sees none: each refused program below computed a
wrong value and gradient before this check."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.errors import UnsupportedSyntaxError


def map_summed_twice(x):
    m = map(np.sin, (x, 2.0 * x))
    a = sum(m)
    b = sum(m)  # SECOND
    return np.sum(a) + np.sum(b)


def generator_summed_twice(x):
    m = (np.sin(v) for v in (x, 2.0 * x))
    a = sum(m)
    b = sum(m)  # SECOND
    return np.sum(a) + np.sum(b)


def zip_looped_twice(x):
    pairs = zip((x, 2.0 * x), (3.0 * x, x))
    s = 0.0
    for a, b in pairs:
        s = s + np.sum(a * b)
    for a, b in pairs:  # SECOND
        s = s + np.sum(a * b)
    return s


def enumerate_looped_then_listed(x):
    e = enumerate((x, 2.0 * x))
    s = 0.0
    for k, v in e:
        s = s + k * np.sum(v)
    rest = list(e)  # SECOND
    return s + len(rest)


def reversed_listed_twice(x):
    r = reversed((x, 2.0 * x))
    first = list(r)
    again = list(r)  # SECOND
    return np.sum(first[0]) + len(again)


def filter_summed_twice(x):
    kept = filter(lambda v: v.shape == (2,), (x, 2.0 * x))
    a = sum(kept)
    b = sum(kept)  # SECOND
    return np.sum(a) + np.sum(b)


def map_read_in_each_trip(x):
    m = map(np.sin, (x, 2.0 * x))
    s = 0.0
    for t in range(3):
        s = s + np.sum(sum(m))  # SECOND
    return s


def read_under_a_second_name(x):
    m = map(np.sin, (x, 2.0 * x))
    alias = m
    a = sum(m)
    b = sum(alias)  # SECOND
    return np.sum(a) + np.sum(b)


def bound_by_unpacking(x):
    m, n = map(np.sin, (x, 2.0 * x)), map(np.cos, (x,))
    a = sum(m) + sum(n)
    b = sum(m)  # SECOND
    return np.sum(a) + np.sum(b)


def bound_on_one_path(x, flag):
    if flag:
        m = map(np.sin, (x, 2.0 * x))
    else:
        m = [np.sin(x), np.sin(2.0 * x)]
    a = sum(m)
    b = sum(m)  # SECOND
    return np.sum(a) + np.sum(b)


@pytest.mark.parametrize("fn", [map_summed_twice, generator_summed_twice, zip_looped_twice,
                                enumerate_looped_then_listed, reversed_listed_twice,
                                filter_summed_twice, map_read_in_each_trip,
                                read_under_a_second_name, bound_by_unpacking,
                                bound_on_one_path])
def test_an_iterator_read_twice_is_refused_at_the_second_read(fn):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    second = first + next(k for k, text in enumerate(lines) if "# SECOND" in text)
    with pytest.raises(UnsupportedSyntaxError, match="an iterator") as info:
        tc.grad(fn)(np.array([0.3, 0.7]), *([True] if fn is bound_on_one_path else []))
    assert f"test_one_shot_iterators.py:{second}:" in str(info.value)
    assert "list(...)" in str(info.value)


def zip_read_once(x):
    pairs = zip((x, 2.0 * x), (3.0 * x, x))
    return sum(np.sum(a * b) for a, b in pairs)


def iterator_made_and_read_in_each_trip(x):
    s = 0.0
    for t in range(3):
        m = map(np.sin, (x, t * x))
        s = s + np.sum(sum(m))
    return s


def iterator_read_on_either_path(x, flag):
    e = enumerate((x, 2.0 * x))
    if flag:
        s = sum(k * np.sum(v) for k, v in e)
    else:
        s = sum(np.sum(v) for k, v in e)
    return s


def listed_iterator_read_twice(x):
    m = list(map(np.sin, (x, 2.0 * x)))
    return np.sum(sum(m)) + np.sum(sum(m))


def rebound_in_each_trip_after_its_read(x):
    xs = [x, 2.0 * x]
    pairs = zip(xs, [1.0, 2.0])
    s = 0.0
    for t in range(2):
        for a, w in pairs:
            s = s + np.sum(a) * w
        pairs = zip(xs, [3.0, 4.0])  # a new one for the next trip
    return s


def two_bound_by_unpacking_read_once_each(x):
    m, n = map(np.sin, (x, 2.0 * x)), map(np.cos, (x,))
    return np.sum(sum(m)) + np.sum(sum(n))


@pytest.mark.parametrize("fn, args", [
    (zip_read_once, ()), (iterator_made_and_read_in_each_trip, ()),
    (rebound_in_each_trip_after_its_read, ()), (two_bound_by_unpacking_read_once_each, ()),
    (iterator_read_on_either_path, (True,)), (iterator_read_on_either_path, (False,)),
    (listed_iterator_read_twice, ()),
])
def test_an_iterator_read_once_is_differentiated(fn, args):
    x = np.array([0.3, 0.7])
    value, _ = tc.value_and_grad(fn)(x, *args)
    np.testing.assert_allclose(value, fn(x, *args), rtol=1e-12)
    check_grad(fn, (x, *args))
