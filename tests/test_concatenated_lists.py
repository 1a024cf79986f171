"""desugar/concatenated_lists.py: ``errs = errs + [e]`` and ``errs += [a, b]`` on a
list nothing else holds are the append and extend that grow it; the gradient is
Python's, taped and checkpointed.  Where another name may see the list before it
grows, the concatenation is left as written, for the lowering (a new list per
concatenation)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared

OPTIONS = [{}, {"checkpoint": True, "snapshots": 2}]


def losses_grown_in_place(x, n):
    losses = []
    for t in range(n):
        x = np.tanh(x * 1.3 + 0.1)
        losses += [np.sum(x ** 2)]
    return sum(losses) / len(losses)


def items_read_the_list_before(x, n):
    hs = [x]
    for t in range(n):
        hs = hs + [np.sin(hs[-1]), x * hs[0] + hs[-1]]  # both items see the old hs
    return np.sum(np.stack(hs)) / len(hs)


def kept_after_it_stops_growing(x, n):
    hist = []
    for t in range(n):
        x = np.cos(x) * 0.9
        hist = hist + [x]
    out = hist
    return np.sum(np.stack(out)) + np.sum(hist[-1])


def grown_on_both_paths(x, n):
    hs = []
    for t in range(n):
        x = np.sin(x)
        if t % 2 == 0:
            hs = hs + [x]
        else:
            hs += [x * 2.0, x * 3.0]
    return np.sum(np.stack(hs) ** 2)


def tuples_concatenated(x, n):
    traj = []
    for t in range(n):
        x = np.sin(x)
        traj = traj + [(x, np.sum(x))]
    total = 0.0
    for s, r in traj:
        total = total + np.sum(s) * r
    return total


def drawn_as_it_grows(x, n):
    rng = np.random.default_rng(3)
    hs = []
    for t in range(n):
        x = np.tanh(x + rng.normal(size=x.shape) * 0.1)
        hs = hs + [x * rng.normal()]
    return np.sum(np.stack(hs))


@pytest.mark.parametrize("f", [losses_grown_in_place, items_read_the_list_before,
                               kept_after_it_stops_growing, grown_on_both_paths,
                               tuples_concatenated, drawn_as_it_grows])
@pytest.mark.parametrize("options", OPTIONS)
def test_a_list_grown_by_concatenation_computes_what_python_does(f, options):
    x = np.array([0.3, -0.4, 0.8])
    value, _ = tc.value_and_grad(f, wrt=(0,), **options)(x, 5)
    np.testing.assert_allclose(value, f(x.copy(), 5), rtol=1e-12)
    df = tc.grad(f, wrt=(0,), **options)
    check_grad(f, (x, 5), df=df)
    if options:
        taped = tc.grad(f, wrt=(0,))(x, 5)
        np.testing.assert_allclose(df(x, 5), taped, rtol=1e-12, atol=1e-14)


def test_augmented_and_tuple_concatenations_in_a_loop_compile():
    # both were refused: `losses += [...]` as a list of static length that grows in a
    # loop, `traj + [(...)]` as a concatenation on a list built at run time
    for f in (losses_grown_in_place, tuples_concatenated):
        tc.grad(f).compile()


def test_the_concatenation_is_written_as_the_append_or_extend():
    text = desugared(grown_on_both_paths)
    assert "hs.append(x)" in text and "hs.extend([x * 2.0, x * 3.0])" in text, text
    assert "hs + [" not in text and "+=" not in text, text
    text = desugared(items_read_the_list_before)  # the display's items evaluated first
    assert "hs.extend([np.sin(hs[-1]), x * hs[0] + hs[-1]])" in text, text


def aliased_before_it_grows(x, n):
    hs = []
    first = hs
    for t in range(n):
        hs = hs + [np.sin(x) * t]
    return np.sum(np.stack(hs)) + len(first)


def given_list_grown(x, hs):
    hs = hs + [x]
    return np.sum(np.stack(hs))


def looped_over_while_it_grows(x):
    hs = [x, x * 2.0]
    for h in hs:
        hs = hs + [np.sin(h)]
    return np.sum(np.stack(hs))


@pytest.mark.parametrize("f", [aliased_before_it_grows, given_list_grown,
                               looped_over_while_it_grows])
def test_a_list_another_name_or_an_iterator_may_see_is_left_as_written(f):
    assert " + [" in desugared(f)


def kept_in_the_loop(x, n):
    hs = [x]
    prev = hs
    for t in range(n):
        prev = hs
        hs = hs + [np.sin(hs[-1])]
    return np.sum(np.stack(hs) ** 2) + np.sum(np.stack(prev) ** 3) + len(prev)


@pytest.mark.parametrize("f", [aliased_before_it_grows, kept_in_the_loop])
@pytest.mark.parametrize("options", OPTIONS)
def test_a_list_another_name_holds_is_still_a_new_list_per_concatenation(f, options):
    # left as written: the lowering makes it rows at the loop (prepare_loop) and each
    # concatenation a new list, the one before left as it was
    x = np.array([0.3, -0.4, 0.8])
    value, _ = tc.value_and_grad(f, wrt=(0,), **options)(x, 4)
    np.testing.assert_allclose(value, f(x.copy(), 4), rtol=1e-12)
    check_grad(f, (x, 4), df=tc.grad(f, wrt=(0,), **options))
