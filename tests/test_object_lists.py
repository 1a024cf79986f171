"""desugar/object_lists.py: a list or tuple of objects the function makes, only
read, is one name per object; a loop over it, its body once per object."""

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from gradcheck import check_grad, check_structured_leaves, check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared as desugared_with_helpers
from tangent_ckpt.errors import TangentCkptError

RNG = np.random.default_rng(19)
W = RNG.standard_normal((3, 3)) * 0.5
B = RNG.standard_normal(3)
X = RNG.standard_normal(3)


def desugared(fn):
    """The printed desugared function alone (not the helpers listed after it)."""
    return desugared_with_helpers(fn).split("\n\n\n")[0]


class Dense:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return np.tanh(self.W @ x + self.b)


class Tanh:
    def forward(self, x):
        return np.tanh(x)


@dataclasses.dataclass
class Plain:
    W: np.ndarray
    scale: float = 0.5


class Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray


def over_the_list_in_a_time_loop(W, b, x, n):
    layers = [Dense(W, b), Tanh(), Dense(W.T, b * 0.5)]
    for _ in range(n):
        for layer in layers:
            x = layer.forward(x)
    return np.sum(x ** 2) + np.sum(layers[-1].W * layers[0].b)


def reversed_and_enumerated(W, b, x):
    layers = (Dense(W, b), Dense(W.T, b))
    for layer in reversed(layers):
        x = layer.forward(x)
    for k, layer in enumerate(layers):
        x = layer.forward(x) * (k + 1.0)
    return np.sum(x) * len(layers)


def by_index(W, b, x):
    layers = [Dense(W, b), Dense(W * 2.0, b)]
    for i in range(len(layers)):
        x = layers[i].forward(x) + i
    return np.sum(x) + i


def records_in_a_list(W, x):
    plains = [Plain(W), Plain(W.T, scale=0.1)]
    pairs = [Pair(x, 2.0 * x), Pair(3.0 * x, x)]
    for p in plains:
        x = np.tanh(p.W @ x) * p.scale
    total = 0.0
    for q in pairs:
        total = total + np.sum(q.a * q.b * x)
    return total


def made_by_a_comprehension(W, b, x):
    layers = [Dense(W * (k + 1.0), b) for k in range(2)]
    more = [Dense(V, c) for V, c in ((W, b), (x, 0.5))]
    hs = [layer.forward(x) for layer in layers]
    return sum(np.sum(h) for h in hs) + sum(np.sum(m.forward(x) ** 2) for m in more)


def two_objects_bound_at_once(W, b, x):
    first, act, second = Dense(W, b), Tanh(), Dense(W.T, b)
    return np.sum(second.forward(act.forward(first.forward(x))) ** 2)


@pytest.mark.parametrize("f, args, wrt", [
    (over_the_list_in_a_time_loop, (W, B, X, 3), (0, 1, 2)),
    (reversed_and_enumerated, (W, B, X), (0, 1, 2)),
    (by_index, (W, B, X), (0, 1, 2)),
    (records_in_a_list, (W, X), (0, 1)),
    (made_by_a_comprehension, (W, B, X), (0, 1, 2)),
    (two_objects_bound_at_once, (W, B, X), (0, 1, 2)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_list_of_objects_only_read_is_one_name_per_attribute(f, args, wrt):
    text = desugared(f)
    assert not any(word in text for word in (".forward", "Dense", "Tanh", "Plain", "Pair")), text
    value, _ = tc.value_and_grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    check_construct(f, args, wrt, autograd=False)


def test_the_loop_is_the_body_once_per_object_the_index_bound_where_read():
    text = desugared(by_index)
    assert "layers_0_W = W" in text and "layers_1_W" in text, text
    assert text.count("i = 0") == 1 and text.count("i = 1") == 1, text
    assert "i = " not in desugared(over_the_list_in_a_time_loop)
    assert "for _ in range(n):" in desugared(over_the_list_in_a_time_loop)


class Noisy:
    def __init__(self, x, draws):
        self.w = x * draws.normal()


def drawn_in_order(x):
    draws = np.random.default_rng(0)
    made = [Noisy(x, draws), Noisy(2.0 * x, draws)]
    return np.sum(made[0].w * made[1].w + made[1].w)


def test_the_objects_are_made_in_the_order_the_list_writes_them():
    assert "made_0_w" in desugared(drawn_in_order)
    check_value_and_grad(drawn_in_order, (X,))


def run_all(layers, x):
    for layer in layers:
        x = layer.forward(x)
    return x


def handed_to_a_helper(W, b, x):
    layers = [Dense(W, b), Tanh(), Dense(W.T, b)]
    return np.sum(run_all(layers, x) ** 2) + np.sum(layers[0].b)


def test_a_list_a_helper_reads_once_inlined_is_one_name_per_object():
    """``inline_functions.py`` writes the helper's body with the caller's list;
    the pass, run again, then writes the list as names."""
    text = desugared(handed_to_a_helper)
    assert "Dense" not in text and ".forward" not in text and "layers_2_W" in text, text
    check_construct(handed_to_a_helper, (W, B, X), (0, 1, 2), autograd=False)


def read_after_the_loop(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b)]
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x * layer.b)


def left_early(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b)]
    for layer in layers:
        x = layer.forward(x)
        if np.sum(x) > 10.0:
            break
    return np.sum(x)


def indexed_by_a_number_the_code_computes(W, b, x, k):
    layers = [Dense(W, b), Dense(W.T, b)]
    return np.sum(layers[k].forward(x))


def read_after_the_loop_in_a_time_loop(W, b, x, n):
    opts = {"W": Dense(W, b), "T": Dense(W.T, b * 0.5)}
    for _ in range(n):
        for key, layer in opts.items():
            x = layer.forward(x)
        x = x * np.sum(layer.b * layer.W[0]) + len(key)   # the last trip's layer and key
    return np.sum(x ** 2)


def test_the_loop_variable_read_after_the_loop_is_the_last_item():
    """Python leaves the loop's variable bound to the last item (the loop has no
    ``break``): each read after the loop, in the statements after it, is that
    item's name."""
    text = desugared(read_after_the_loop)
    assert "layers = [" not in text and "np.sum(x * layers_1_b)" in text, text
    check_construct(read_after_the_loop, (W, B, X), (0, 1, 2), autograd=False)
    text = desugared(read_after_the_loop_in_a_time_loop)
    assert "opts" not in text.replace("opts_", "") and \
        "np.sum(opts_T_b * opts_T_W[0]) + len(key)" in text, text
    check_construct(read_after_the_loop_in_a_time_loop, (W, B, X, 3), (0, 1, 2),
                    autograd=False)


def summed_by_a_generator_naming_the_loops_variable(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b * 2.0)]
    for layer in layers:
        layer.b = layer.b + np.sum(layer.W @ x)
    return sum(np.sum(layer.b ** 2) for layer in layers)


def listed_by_a_comprehension_naming_it_and_read_after(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b * 2.0)]
    for layer in layers:
        layer.b = layer.b * 3.0
    return sum([np.sum(layer.W @ layer.b) for layer in layers]) + np.sum(x * layer.b)


def summed_in_a_time_loop(W, b, x, n):
    layers = [Dense(W, b), Dense(W.T, b * 2.0)]
    for _ in range(n):
        for layer in layers:
            layer.b = 0.5 * layer.b + 0.1 * layer.forward(x)
    return sum(np.sum(layer.b * x) for layer in layers)


def largest_by_a_generator(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b * 2.0)]
    for layer in layers:
        layer.b = layer.b * np.sum(layer.W @ x)
    return max(layer.b[0] for layer in layers) + min(np.sum(lr.b) for lr in layers)


def built_by_appends_and_largest_by_a_generator(W, b, x, n):
    layers = []
    for k in range(3):
        layers.append(Dense(W * (k + 1.0), b))
    for _ in range(n):
        for layer in layers:
            layer.b = 0.5 * layer.b + 0.1 * layer.forward(x)
    return max(np.sum(layer.b) for layer in layers) * 2.0


@pytest.mark.parametrize("f, args", [
    (summed_by_a_generator_naming_the_loops_variable, (W, B, X)),
    (listed_by_a_comprehension_naming_it_and_read_after, (W, B, X)),
    (summed_in_a_time_loop, (W, B, X, 3)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_comprehension_binding_the_loops_variable_again_reads_its_own(f, args):
    """A comprehension's ``for layer in layers`` binds its own ``layer`` (Python
    3 gives a comprehension its own scope): it is neither a second binding of the
    loop's variable nor a read of the last item, so the list is still one name
    per object, and each trip of the comprehension reads its own item (a read of
    ``layer`` after the loop outside the comprehension is the last item)."""
    text = desugared(f)
    assert "layers = [" not in text and "for layer in layers" not in text, text
    check_construct(f, args, (0, 1, 2), autograd=False)


@pytest.mark.parametrize("f, args", [
    (largest_by_a_generator, (W, B, X)),
    (built_by_appends_and_largest_by_a_generator, (W, B, X, 3)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_generator_given_to_max_or_min_is_the_list_of_its_items(f, args):
    """``max``/``min`` (as ``sum``) take every item of a generator over the
    list, in order: it is the list of its items written out, so the list is one
    name per object (it was left a list, refused as an object used as a value)."""
    text = desugared(f)
    assert "layers = [" not in text and "for layer in layers" not in text, text
    check_construct(f, args, (0, 1, 2), autograd=False)


def read_after_the_loop_in_another_block(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b)]
    if np.sum(x) > -100.0:
        for layer in layers:
            x = layer.forward(x)
    return np.sum(x * layer.b)   # (unbound had the branch not run)


def read_after_the_loop_in_a_time_loop_branch(W, b, x, n):
    layers = [Dense(W, b), Dense(W.T, b * 2.0)]
    for t in range(n):
        if t % 2 == 0:
            for layer in layers:
                x = layer.forward(x)
        x = x * layer.b[0]   # on odd steps: the last layer of the step before
    return np.sum(x)


def read_before_the_loop_in_a_later_trip(W, b, x, n):
    layers = [Dense(W, b), Dense(W.T, b * 2.0)]
    for t in range(n):
        if t > 0:
            x = x * np.sum(layer.b)   # the last layer of the trip before
        for layer in layers:
            x = layer.forward(x)
    return np.sum(x)


@pytest.mark.parametrize("f, args", [
    (read_after_the_loop_in_another_block, (W, B, X)),
    (read_after_the_loop_in_a_time_loop_branch, (W, B, X, 4)),
    (read_before_the_loop_in_a_later_trip, (W, B, X, 3)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_the_loop_variable_read_outside_the_loops_block_is_the_last_items_fields(f, args):
    """The loop's variable read after the loop outside its block (a branch): the
    loop's block binds the last item's fields read there (``layer_b =
    layers_1_b``) after the loop, and the reads are those names -- unbound, as
    ``layer`` is, where the block did not run (the list went to the lowering)."""
    text = desugared(f)
    assert "layers = [" not in text and "layer_b = layers_1_b" in text, text
    check_construct(f, args, (0, 1, 2), autograd=False)


def test_the_loop_variable_read_where_the_loop_did_not_run_is_unbound_as_in_python():
    for df in (tc.grad(read_after_the_loop_in_another_block, wrt=(0, 1, 2)),
               tc.grad(read_after_the_loop_in_another_block, wrt=(0, 1, 2), checkpoint=True,
                       snapshots=2)):
        with pytest.raises(UnboundLocalError, match="layer"):
            df(W, B, np.full(3, -100.0))
    with pytest.raises(UnboundLocalError):
        read_after_the_loop_in_another_block(W, B, np.full(3, -100.0))


def method_called_after_the_loop_in_another_block(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b)]
    if np.sum(x) > -100.0:
        for layer in layers:
            x = layer.forward(x)
    return np.sum(layer.forward(x))


def list_read_after_the_loop_in_another_block(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b)]
    if np.sum(x) > -100.0:
        for layer in layers:
            x = layer.forward(x)
    return np.sum(x * layer.b + layers[0].forward(x))


@pytest.mark.parametrize("f, args", [
    (method_called_after_the_loop_in_another_block, (W, B, X)),
    (list_read_after_the_loop_in_another_block, (W, B, X)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_list_used_any_other_way_stays_a_list(f, args):
    """The loop's variable read after the loop outside its block as more than a
    field (a method called), or the list read after the loop: the list stays
    (for the lowering, which follows it as before)."""
    assert "layers = [Dense(W, b), Dense(W.T, b)]" in desugared(f)
    check_construct(f, args, (0, 1, 2), autograd=False)


def method_called_after_a_loop_in_a_time_loop(W, b, x, n):
    layers = [Dense(W, b), Dense(W.T, b)]
    for _ in range(n):
        for layer in layers:
            x = layer.forward(x)
    return np.sum(layer.forward(x) + layers[0].b)


@pytest.mark.parametrize("f, args", [
    (method_called_after_the_loop_in_another_block, (W, B, np.full(3, -100.0))),
    (list_read_after_the_loop_in_another_block, (W, B, np.full(3, -100.0))),
    (method_called_after_a_loop_in_a_time_loop, (W, B, X, 0)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_the_kept_lists_loop_variable_read_where_the_loop_did_not_run_is_unbound(f, args):
    """Where the loop over a list left to the lowering did not run (its block
    did not, or the time loop ran no trip), the read of its variable after it
    raises Python's UnboundLocalError (the block binds ``layer_bound`` after the
    loop, the reading statement asserts it), taped and checkpointed -- not the
    last item's value."""
    assert "assert layer_bound" in desugared(f)
    with pytest.raises(UnboundLocalError):
        f(*args)
    for df in (tc.grad(f, wrt=(0, 1, 2)),
               tc.grad(f, wrt=(0, 1, 2), checkpoint=True, snapshots=2)):
        with pytest.raises(UnboundLocalError, match="layer"):
            df(*args)


def test_the_kept_lists_loop_variable_read_where_the_loop_ran_is_its_last_item():
    check_construct(method_called_after_a_loop_in_a_time_loop, (W, B, X, 3), (0, 1, 2),
                    autograd=False)


def read_in_a_branch_of_a_conditional_expression(W, b, x, c):
    layers = [Dense(W, b), Dense(W.T, b)]
    if c:
        for layer in layers:
            x = layer.forward(x)
    return np.sum(layer.forward(x) if c else x)


def test_the_loop_variable_read_after_it_where_the_statement_may_not_evaluate_it_is_refused():
    """(Python reads ``layer`` only where ``c`` holds: a check before the
    statement would raise where Python does not.)"""
    with pytest.raises(TangentCkptError, match=r"test_object_lists.py:\d+: .*'layer', the "
                                               r"variable of a loop over a list of objects"):
        tc.grad(read_in_a_branch_of_a_conditional_expression, wrt=(0,))(W, B, X, False)


def bound_by_loops_on_both_paths(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b)]
    if np.sum(x) > 100.0:
        for layer in layers:
            x = layer.forward(x)
    else:
        for layer in reversed(layers):
            x = layer.forward(x) * 2.0
    return np.sum(layer.forward(x))


def bound_again_by_a_loop_that_may_not_run(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b)]
    for layer in layers:
        x = layer.forward(x)
    if np.sum(x) > 100.0:
        for layer in reversed(layers):
            x = layer.forward(x)
    return np.sum(layer.b * x + layer.W @ x)


def bound_by_two_loops_in_a_row(W, b, x):
    layers = [Dense(W, b), Dense(W.T, b)]
    for layer in layers:
        x = layer.forward(x)
    for layer in reversed(layers):
        x = layer.forward(x)
    return np.sum(layer.forward(x) + layers[1].b)


@pytest.mark.parametrize("f", [bound_by_loops_on_both_paths,
                               bound_again_by_a_loop_that_may_not_run],
                         ids=lambda f: f.__name__)
def test_the_loop_variable_bound_by_loops_on_different_paths_read_after_them_is_refused(f):
    """(The lowering binds ``layer`` in the compiler as it unrolls each loop: after
    them it read the last loop's last item whichever path ran -- a wrong
    gradient before.)"""
    with pytest.raises(TangentCkptError, match=r"test_object_lists.py:\d+: .*'layer', the "
                                               r"variable of loops over a list of objects"):
        tc.grad(f, wrt=(0,))(W, B, X)


def test_the_loop_variable_bound_by_loops_in_a_row_read_after_them_is_the_last_ones():
    check_construct(bound_by_two_loops_in_a_row, (W, B, X), (0, 1, 2), autograd=False)


@pytest.mark.parametrize("f", [left_early, indexed_by_a_number_the_code_computes],
                         ids=lambda f: f.__name__)
def test_a_list_left_early_or_indexed_by_a_value_of_the_run_stays_a_list(f):
    """(The lowering refuses both, as before, naming the line.)"""
    assert "layers = [Dense(W, b), Dense(W.T, b)]" in desugared(f)
    with pytest.raises(TangentCkptError, match=r"test_object_lists.py:\d+: "):
        tc.grad(f, wrt=(0,))(W, B, X, *((1,) if f is not left_early else ()))


def rebinding_a_name_an_item_reads(W, b, x):
    W, layer = W.T, Dense(W, b)   # Dense reads the W before this statement
    return np.sum(layer.forward(x) + W @ x)


def test_a_tuple_binding_whose_items_read_its_names_stays_one_statement():
    """(Split, ``layer = Dense(W, b)`` would read the new ``W``.)"""
    assert "W, layer = (W.T, Dense(W, b))" in desugared(rebinding_a_name_an_item_reads)


def appended(W, b, x):
    layers = []
    layers.append(Dense(W, b))
    h = x * 2.0
    layers.append(Tanh())
    layers.append(Dense(W.T, b))
    for layer in layers:
        h = layer.forward(h)
    return np.sum(h)


def test_a_list_of_objects_appended_one_statement_after_another_is_one_name_per_object():
    text = desugared(appended)
    assert "layers" not in text.replace("layers_0_", "").replace("layers_2_", ""), text
    check_construct(appended, (W, B, X), (0, 1, 2), autograd=False)


def appended_on_one_path(W, b, x, flag):
    layers = []
    layers.append(Dense(W, b))
    if flag:
        layers.append(Dense(W.T, b))
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x)


def appended_in_a_run_time_loop(W, b, x, n):
    layers = []
    for k in range(n):
        layers.append(Dense(W * (k + 1.0), b))
    return np.sum(layers[0].forward(x))


@pytest.mark.parametrize("f", [appended_on_one_path, appended_in_a_run_time_loop],
                         ids=lambda f: f.__name__)
def test_a_list_appended_to_in_a_branch_or_a_loop_of_a_run_time_count_stays_a_list(f):
    assert "layers = []" in desugared(f)


# --- a list filled by a loop of a count written out ----------------------------------
def appended_in_a_loop(W, b, x):
    layers = []
    for k in range(2):
        layers.append(Dense(W * (k + 1.0), b))
    return np.sum(layers[0].forward(x)) + np.sum(layers[1].W) * k


def appended_over_a_display(W, b, x):
    layers = [Tanh()]
    for V, c in ((W, b), (W.T, 0.5 * b)):
        layers.append(Dense(V, c))
    for _ in range(2):
        for layer in layers:
            x = layer.forward(x)
    return np.sum(x ** 2) + np.sum(V)        # (V: the last trip's)


def appended_two_per_trip_in_range(W, b, x):
    layers = []
    for k in range(1, 5, 2):
        layers.append(Dense(W * k, b))
        layers.append(Tanh())
    h = x
    for layer in reversed(layers):
        h = layer.forward(h)
    return np.sum(h) * len(layers)


@pytest.mark.parametrize("f", [appended_in_a_loop, appended_over_a_display,
                               appended_two_per_trip_in_range], ids=lambda f: f.__name__)
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_list_filled_by_a_loop_of_a_count_written_out_is_one_name_per_object(f, options):
    """The loop is written as its trips (its target bound first, as Python binds
    it), then the appends are those of a list filled statement after statement."""
    text = desugared(f)
    assert not any(w in text for w in ("layers = ", "Dense", "Tanh", ".forward")), text
    value, _ = tc.value_and_grad(f, wrt=(0, 1, 2), **options)(W, B, X)
    np.testing.assert_allclose(value, f(W, B, X), rtol=1e-12)
    check_grad(f, (W, B, X), wrt=(0, 1, 2), df=tc.grad(f, wrt=(0, 1, 2), **options))


def appended_in_a_loop_that_also_computes(W, b, x):
    layers = []
    for k in range(3):
        V = W * (k + 1.0)
        if k == 1:
            V = V.T
        layers.append(Dense(V, b))
        layers.append(Tanh())
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x) + np.sum(V)


def test_a_loop_filling_the_list_may_compute_what_it_appends():
    """(Refused on the lowering's path: the object used as a value.)"""
    text = desugared(appended_in_a_loop_that_also_computes)
    assert "layers_4_W = V" in text and "Dense" not in text and ".forward" not in text, text
    check_construct(appended_in_a_loop_that_also_computes, (W, B, X), (0, 1, 2),
                    autograd=False)
    check_grad(appended_in_a_loop_that_also_computes, (W, B, X), wrt=(0, 1, 2),
               df=tc.grad(appended_in_a_loop_that_also_computes, wrt=(0, 1, 2),
                          checkpoint=True, snapshots=2))


def appended_over_a_display_naming_its_target(W, b, x):
    layers = []
    V = 2.0 * W
    for W in (V, W):                  # (the display read once, before the first trip)
        layers.append(Dense(W, b))
    return np.sum(layers[1].forward(x))


def appended_in_a_loop_left_early(W, b, x):
    layers = []
    for k in range(3):
        if k == 2:
            break
        layers.append(Dense(W * (k + 1.0), b))
    return np.sum(layers[1].forward(x))


@pytest.mark.parametrize("f", [appended_over_a_display_naming_its_target,
                               appended_in_a_loop_left_early], ids=lambda f: f.__name__)
def test_a_loop_of_appends_over_its_own_target_or_left_early(f):
    """The display read once, before the first trip (its item a name the loop binds,
    held first); a loop left early stays a loop."""
    assert "layers = []" not in desugared(f) or f is appended_in_a_loop_left_early
    try:
        value, _ = tc.value_and_grad(f, wrt=(0, 1, 2))(W, B, X)
    except TangentCkptError as error:
        assert "test_object_lists.py:" in str(error), str(error)
    else:
        np.testing.assert_allclose(value, f(W, B, X), rtol=1e-12)


# --- a dict of objects read by constant keys ---------------------------------------
class Momentum:
    def __init__(self, w, lr):
        self.w = w * 1.0
        self.lr = lr
        self.v = 0.0 * w

    def step(self, g):
        self.v = 0.9 * self.v + g
        self.w = self.w - self.lr * self.v
        return self.w


def optimisers_by_name(W, b, x):
    opts = {"W": Momentum(W, 0.1), "b": Momentum(b, 0.05)}
    for _ in range(2):
        for name in opts:
            opts[name].step(np.sin(opts[name].w) @ x if name == "W" else np.tanh(opts[name].w))
    return np.sum(opts["W"].w @ x + opts["b"].w) * len(opts)


def optimisers_by_items_and_values(W, b, x):
    opts = {"W": Momentum(W, 0.1), "b": Momentum(b, 0.05)}
    for key, opt in opts.items():
        opt.step(np.tanh(opt.w) * len(key))
    total = sum(np.sum(o.w ** 2) for o in opts.values())
    return total + np.sum([np.sum(opts[k].v) for k in reversed(opts)])


def a_loop_over_the_keys_written_out(W, b, x):
    held = {"first": Dense(W, b), "scale": 0.5, 7: Dense(W.T, b)}
    for k in ("first", 7, "first"):
        x = held[k].forward(x) * held["scale"]
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [optimisers_by_name, optimisers_by_items_and_values,
                               a_loop_over_the_keys_written_out], ids=lambda f: f.__name__)
def test_a_dict_of_objects_read_by_constant_keys_is_one_name_per_attribute(f):
    """Each loop over it (its keys, ``items()``, ``values()``, ``reversed``, or a
    display of its keys) is its body once per key, in the dict's order; a
    constant it holds is read as itself (once the lowering's objects)."""
    text = desugared(f)
    assert not any(word in text for word in ("Momentum", "Dense", ".step", ".forward")), text
    value, _ = tc.value_and_grad(f, wrt=(0, 1, 2))(W, B, X)
    np.testing.assert_allclose(value, f(W, B, X), rtol=1e-12)
    check_construct(f, (W, B, X), (0, 1, 2), autograd=False)


def test_a_dict_is_named_by_its_keys():
    text = desugared(optimisers_by_name)
    assert "opts_W_w = W * 1.0" in text and "opts_b_lr = 0.05" in text, text
    assert "held_7_W" in desugared(a_loop_over_the_keys_written_out)


def stored_into(W, b, x):
    opts = {"W": Momentum(W, 0.1)}
    opts["b"] = Momentum(b, 0.1)
    return np.sum(opts["W"].step(x) @ opts["b"].step(x))


def read_by_a_key_of_the_run(W, b, x, key):
    opts = {"W": Momentum(W, 0.1), "V": Momentum(W.T, 0.1)}
    return np.sum(opts[key].step(x))


def keys_one_of_which_it_lacks(W, b, x):
    opts = {"W": Momentum(W, 0.1)}
    total = 0.0
    for k in ("W", "b"):
        if k in ("W",):
            total = total + np.sum(opts[k].step(x))
    return total


@pytest.mark.parametrize("f, args", [(stored_into, (W, B, X)),
                                     (read_by_a_key_of_the_run, (W, B, X, "V")),
                                     (keys_one_of_which_it_lacks, (W, B, X))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_dict_stored_into_or_read_by_a_key_of_the_run_stays_a_dict(f, args):
    assert "opts = {" in desugared(f)


# --- one object under two names: the item is the name --------------------------------
def kept_and_stepped(W, b, x):
    opt = Momentum(W, 0.1)
    keep = [opt]
    for _ in range(2):
        x = np.tanh(keep[0].step(np.outer(x, x)) @ x)
    return np.sum(x) + np.sum(opt.v)


def kept_in_a_loop_and_a_dict(W, b, x):
    opt = Momentum(b, 0.1)
    for _ in range(2):
        held = {"o": opt}
        x = x + held["o"].step(x)
    return np.sum(x * opt.w)


def kept_after_an_append(W, b, x):
    layer = Dense(W, b)
    layers = []
    layers.append(layer)
    layers.append(Tanh())
    for each in layers:
        x = each.forward(x)
    return np.sum(x) + np.sum(layer.b)


@pytest.mark.parametrize("f", [kept_and_stepped, kept_in_a_loop_and_a_dict,
                               kept_after_an_append], ids=lambda f: f.__name__)
def test_an_object_also_held_by_a_container_is_read_by_its_name(f):
    """``keep = [opt]``: ``keep[0]`` IS ``opt`` wherever ``keep`` is read (``opt``
    bound once, before it, in the function's body), so it is read as ``opt``
    and the object is names (once the lowering's object)."""
    text = desugared(f)
    assert not any(word in text for word in ("Momentum", "Dense", ".step", ".forward")), text
    value, _ = tc.value_and_grad(f, wrt=(0, 1, 2))(W, B, X)
    np.testing.assert_allclose(value, f(W, B, X), rtol=1e-12)
    check_construct(f, (W, B, X), (0, 1, 2), autograd=False)


def kept_from_an_earlier_trip(W, b, x):
    for t in range(3):
        opt = Momentum(b * (t + 1.0), 0.1)
        if t == 0:
            keep = [opt]           # keep[0] is the first trip's object, opt the last's
        x = x + keep[0].step(x) - opt.w
    return np.sum(x)


def kept_after_a_jump(W, b, x):
    for t in range(3):
        opt = Momentum(b * (t + 1.0), 0.1)
        if t == 1:
            continue
        keep = [opt]
        x = x + keep[0].step(x) - opt.w
    return np.sum(x)


@pytest.mark.parametrize("f", [kept_from_an_earlier_trip, kept_after_a_jump],
                         ids=lambda f: f.__name__)
def test_a_container_that_may_hold_an_earlier_object_of_the_name_stays(f):
    """Where the name may be bound again without the container being made again,
    the item is not surely the name's object: the container stays (the lowering
    follows it, or refuses naming the line) -- never a wrong value."""
    assert "keep = [opt]" in desugared(f)
    try:
        value, _ = tc.value_and_grad(f, wrt=(1,))(W, B, X)
    except TangentCkptError as error:
        assert "test_object_lists.py:" in str(error), str(error)
    else:
        np.testing.assert_allclose(value, f(W, B, X), rtol=1e-12)


class _Activated:
    def __init__(self, W, act):
        self.W = W
        self.act = act                # a function stored on the object

    def forward(self, h):
        return self.act(self.W @ h)


class _Base:
    def __init__(self, W):
        self.W = W


class _Scaled(_Base):
    scale = 1.0

    def __init__(self, W, scale):
        super().__init__(W)
        if scale != 1.0:              # a class default stored over in a branch
            self.scale = scale

    def forward(self, h):
        return np.tanh(self.scale * (self.W @ h))


def layers_appended_in_a_loop_with_functions(W1, W2, x):
    layers = []
    for W in (W1, W2):
        layers.append(_Activated(W, np.tanh))
    h = x
    for _ in range(3):
        for layer in layers:
            h = layer.forward(h)
    return np.sum(h ** 2)


def layers_appended_in_a_loop_with_super(W1, W2, x):
    layers = []
    for W, s in ((W1, 0.5), (W2, 1.0)):
        layers.append(_Scaled(W, s))
    h = x
    for _ in range(2):
        for layer in layers:
            h = layer.forward(h)
    return np.sum(h ** 2)


@pytest.mark.parametrize("f", [layers_appended_in_a_loop_with_functions,
                               layers_appended_in_a_loop_with_super])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_list_of_objects_built_by_appends_keeps_their_functions_super_and_defaults(f, options):
    # objects the lowering keeps (a list built by appends in a loop): a function
    # stored on one, super().__init__ and a class default stored over in a branch
    args = (W, W.T.copy(), X)
    value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(*args)
    assert np.isclose(value, f(*args), rtol=1e-12)
    check_grad(f, args, wrt=(0, 1), df=tc.grad(f, wrt=(0, 1), **options))


# --- a list filled from a list the call gives ----------------------------------------
class _Layer(_Base):
    scale = 1.0

    def __init__(self, W, act=np.tanh, scale=1.0):
        super().__init__(W)
        self.act = act
        if scale != 1.0:
            self.scale = scale

    def forward(self, h):
        return self.act(self.scale * (self.W @ h))


class _Network:
    def __init__(self, Ws):
        self.layers = []
        for W in Ws:
            self.layers.append(_Layer(W))

    def __call__(self, h):
        for layer in self.layers:
            h = layer.forward(h)
        return h


def appended_over_the_given_list(Ws, x, n):
    layers = []
    for W in Ws:
        layers.append(_Layer(W, np.sin))
    for _ in range(n):
        for layer in layers:
            x = layer.forward(x)
    return np.sum(x ** 2)


def appended_over_an_enumerated_given_list(Ws, x, n):
    layers = []
    for k, W in enumerate(Ws):
        layers.append(_Layer(W, scale=0.5 + k))
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x ** 2) * k


def comprehended_over_the_given_list(Ws, x, n):
    layers = [_Layer(W, scale=2.0) for W in Ws]
    for layer in reversed(layers):
        x = layer.forward(x)
    return np.sum(x ** 2)


def a_network_of_the_given_list(Ws, x, n):
    net = _Network(Ws)
    for _ in range(n):
        x = net(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [appended_over_the_given_list,
                               appended_over_an_enumerated_given_list,
                               comprehended_over_the_given_list,
                               a_network_of_the_given_list], ids=lambda f: f.__name__)
def test_a_list_filled_from_a_list_the_call_gives_is_one_name_per_object(f):
    """(The compiled function is specialised to the given list's length.)  Each
    object keeps its function, ``super().__init__`` and its class default."""
    from tangent_ckpt.container_args import structure_of
    Ws = [W, W.T.copy(), 0.5 * W]
    text = desugared_with_helpers(f, {0: structure_of(Ws)}).split("\n\n\n")[0]
    assert "_Layer" not in text and ".forward" not in text and "super" not in text, text
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        value, _ = tc.value_and_grad(f, wrt=(0, 1), **options)(Ws, X, 2)
        np.testing.assert_allclose(value, f(Ws, X, 2), rtol=1e-12)
        check_structured_leaves(f, (Ws, X, 2), (0, 1),
                                tc.grad(f, wrt=(0, 1), **options)(Ws, X, 2))


class _Affine:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def __call__(self, h):
        return np.tanh(self.W @ h + self.b)


def zipped_from_two_given_lists(Ws, bs, x):
    layers = []
    for W, b in zip(Ws, bs):
        layers.append(_Affine(W, b))
    for layer in layers:
        x = layer(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("wrt", [(2,), (0,), (0, 2)], ids=str)
def test_a_list_of_objects_filled_from_lists_the_gradient_does_not_differentiate(wrt):
    """``Ws``, ``bs`` given but outside ``wrt`` are run-time lists, over which the
    objects could not be names: refused so, the gradient is compiled for their
    structure (container_args.nested_sequences), as for a ``wrt`` list."""
    Ws, bs = [W, W.T.copy(), 0.5 * W], [B, -B, 2.0 * B]
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        df = tc.grad(zipped_from_two_given_lists, wrt=wrt, **options)
        check_structured_leaves(zipped_from_two_given_lists, (Ws, bs, X), wrt, df(Ws, bs, X))
        # a second call with lists of another length compiles again, for them
        check_structured_leaves(zipped_from_two_given_lists, (Ws[:2], bs[:2], X), wrt,
                                df(Ws[:2], bs[:2], X))
