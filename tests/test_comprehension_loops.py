"""desugar/comprehension_loops.py: list comprehensions and generator expressions
consumed at once are written as the loop Python runs (``items = []`` and the loop
appending to it; a dict comprehension ``items = {}`` and the loop storing
``items[key] = value``) before their statement; the lowering unrolls the loops it wrote
over a container or a range of constants.  Each gradient is checked against
central finite differences (and autograd where it runs), taped and checkpointed,
and each value against plain Python's."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad_and_autograd
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TransformError

rng = np.random.default_rng(7)
OPTIONS = [{}, {"checkpoint": True, "snapshots": 2}]


def vec(*shape):
    return rng.standard_normal(shape)


def filled_in_place(x, a, b):
    ys = [np.dot(w, x) for w in (a, b)]
    return np.sum(ys[0] * ys[1])


def test_a_list_bound_by_its_comprehension_is_filled_by_the_loop():
    text = str(desugared(filled_in_place))
    # (the loop over the display, unrolled by static_loops.py)
    assert "ys = []\n    w = a\n    ys.append(np.dot(w, x))\n    w = b\n" \
           "    ys.append(np.dot(w, x))\n" in text
    for options in OPTIONS:
        df = check_grad_and_autograd(filled_in_place, (vec(3), vec(3), vec(3)), (0, 1, 2),
                                     **options)
        assert "empty_rows" not in df.source  # unrolled: one variable per item


def tableau_step(x, h):
    a = [[0.0], [0.5, 0.5], [0.25, 0.25, 0.5]]
    k = []
    for i in range(3):
        k.append(np.sin(x + h * sum([a[i - 1][j] * k[j] for j in range(i)])))
    return np.sum(k[2] * k[1])


def test_a_comprehension_inside_an_expression_over_a_range_of_constants_is_unrolled():
    """``sum([a[i][j] * k[j] for j in range(i)])``: a list named for the statement,
    filled by a loop over ``range(i)``, unrolled (``i`` is a constant in each copy
    of the loop around it, which static_loops.py unrolls as it indexes the local
    tableau ``a``); the items are the variables the appends computed, with no
    copies."""
    text = str(desugared(tableau_step))
    assert "    k_items = []\n    k_items.append(a[2 - 1][0] * k[0])\n" \
           "    k_items.append(a[2 - 1][1] * k[1])\n" in text
    for options in OPTIONS:
        df = check_grad_and_autograd(tableau_step, (vec(3), 0.3), (0, 1), **options)
        assert "empty_rows" not in df.source and "append_row" not in df.source
        assert "k_items_0 = " not in df.source  # the items are the appends' own variables


def drawn_before_a_comprehension(x, ws):
    np.random.seed(0)
    return np.sum(np.random.normal(size=3) * x + sum([np.random.normal(size=3) * w
                                                      for w in ws]))


def test_a_comprehension_after_a_draw_stays_after_it():
    """``np.random.normal() + sum([np.random.normal() * w ...])``: Python draws the
    first numbers first; written before the statement the comprehension would
    draw them (a wrong value): the draw is written before it, evaluated once."""
    text = str(desugared(drawn_before_a_comprehension))
    assert ("    drawn_before_a_comprehension_normal = np.random.normal(size=3)\n"
            "    drawn_before_a_comprehension_items = []\n") in text
    assert "return np.sum(drawn_before_a_comprehension_normal * x + " \
        "sum(drawn_before_a_comprehension_items))" in text
    x, ws = vec(3), [vec(3), vec(3)]
    for options in OPTIONS:
        df = tc.grad(drawn_before_a_comprehension, wrt=(0,), **options)
        np.random.seed(0)
        first = np.random.normal(size=3)
        assert np.allclose(df(x, ws), first)


def generator_bound_to_a_name(x, ws):
    g = (np.sin(w * x) for w in ws)
    return np.sum(sum(g))


def generator_read_after_a_rebinding(x, ws):
    g = (np.sin(w * x) for w in ws)
    x = x * 2.0  # Python's generator reads this x
    return np.sum(sum(g))


def generator_over_a_list_made_here(x):
    ws = [x, 2.0 * x]
    g = (np.sin(w * x) for w in ws[1:])
    ws = [x, x]  # (the first iterable was evaluated where g is bound)
    x = x * 3.0
    return np.sum(sum(g))


def generator_read_after_its_loop(x, ws):
    for t in range(2):
        g = (np.sin(w * x) for w in ws)
    return np.sum(sum(g))


def test_a_generator_bound_to_a_name_is_moved_to_its_read():
    """Python runs a generator expression's items where it is consumed, not where
    it is made: one bound to a name is moved to the statement that reads it."""
    text = str(desugared(generator_bound_to_a_name))
    assert "g = " not in text and "generator_bound_to_a_name_items.append(np.sin(w * x))" in text
    for options in OPTIONS:
        check_grad_and_autograd(generator_bound_to_a_name, (vec(3), [vec(3), vec(3)]), (0,),
                                **options)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("fn, args", [
    (generator_read_after_a_rebinding, (vec(3), [vec(3), vec(3)])),
    (generator_over_a_list_made_here, (vec(3),)),
])
def test_a_generator_reads_the_names_bound_before_it_is_consumed(fn, args, options):
    """``g = (f(w * x) ...); x = 2 * x; sum(g)``: the items read the new ``x`` (the
    lowering computed them where ``g`` was bound: a wrong value and gradient); the
    first iterable is the one evaluated where ``g`` is bound."""
    check_grad_and_autograd(fn, args, (0,), **options)
    value, _ = tc.value_and_grad(fn, **options)(*args)
    assert np.isclose(value, fn(*args))


def generator_read_by_a_generator(x, ws):
    total = 0.0
    for t in range(2):
        g = (np.tanh(w * x) for w in ws)
        total = total + 0.1 * sum(np.sum(v) for v in g)
        x = x * 1.5
    return total


@pytest.mark.parametrize("options", OPTIONS)
def test_a_generator_read_as_the_first_iterable_of_another_is_read_once(options):
    """``sum(np.sum(v) for v in g)`` evaluates ``g`` once, in the enclosing scope:
    the read counts (it was refused as a generator "not read once by a later
    statement of the same block"; found by the long fuzz, one_shot_iterators)."""
    args = (vec(3), [vec(3), vec(3)])
    check_grad_and_autograd(generator_read_by_a_generator, args, (0,), **options)
    value, _ = tc.value_and_grad(generator_read_by_a_generator, **options)(*args)
    assert np.isclose(value, generator_read_by_a_generator(*args))


def test_a_generator_read_outside_its_block_is_refused():
    with pytest.raises(TransformError, match="a generator expression bound to 'g' that is "
                                             "not read once by a later statement") as info:
        tc.grad(generator_read_after_its_loop)(vec(3), [vec(3)])
    assert f":{line_of(generator_read_after_its_loop, 'g = (')}:" in str(info.value)


def comprehension_in_a_nested_def(x, ws):
    def total(v):
        return sum([np.sum(np.tanh(w * v)) for w in ws])
    return total(x) + total(2.0 * x)


def variable_named_as_outside(x, ws):
    w = x * 2.0
    s = sum(np.sum(w * v) for w in ws for v in (w, x))
    return s + np.sum(w)


def run_time_rows_with_a_condition(x, W):
    return sum(np.sum(np.tanh(w * x)) for w in W if np.sum(w) > 0.0)


def inside_a_run_time_loop(x, ws, n):
    for t in range(n):
        x = np.tanh(x + 0.1 * sum([w * x for w in ws]))
    return np.sum(x)


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("fn, args, wrt", [
    (comprehension_in_a_nested_def, (vec(3), [vec(3), vec(3)]), (0,)),
    (variable_named_as_outside, (vec(3), [vec(3), vec(3)]), (0,)),
    (run_time_rows_with_a_condition, (vec(3), vec(4, 3)), (0, 1)),
    (inside_a_run_time_loop, (vec(3), [vec(3), vec(3)], 4), (0,)),
])
def test_comprehensions_written_as_loops_keep_their_gradients(fn, args, wrt, options):
    check_grad_and_autograd(fn, args, wrt, **options)


def condition_on_data(a, b):
    return np.sum([w for w in (a, b) if np.sum(w) > 0][0])


def test_a_run_time_condition_over_a_list_keeps_its_refusal():
    """The ``if`` written for the condition is declared: in a loop the lowering
    unrolls, a condition known only at run time is refused with the
    comprehension's own message, at its line."""
    with pytest.raises(TransformError, match=r"a condition known only at run time in a "
                                             r"comprehension over a list or tuple") as info:
        tc.grad(condition_on_data).compile()
    assert f":{line_of(condition_on_data, 'if np.sum(w) > 0')}:" in str(info.value)


def doubled_by_key(a, b):
    d = {'a': a, 'b': b}
    doubled = {k: v * 2 for k, v in d.items()}
    return np.sum(doubled['a'] * doubled['b'])


def keyed_at_run_time(x):
    d = {k: x * k for k in range(x.shape[0])}
    return np.sum(d[0]) + np.sum(d[2] ** 2)


def keys_computed(x):
    d = {str(k): x * (k + 1.0) for k in range(3) if k != 1}
    return np.sum(d['0'] * d['2'])


def stored_after(x):
    ws = [x, 2.0 * x, 3.0 * x]
    d = {k: w for k, w in enumerate(ws) if k != 1}
    e = {k: np.sin(w) for k, w in d.items()}
    e[5] = x
    return np.sum(e[0] * e[2] * e[5]) + len(e)


def nested_dicts(x):
    ws = [x, 2.0 * x]
    d = {i: {j: ws[i] * ws[j] for j in range(2)} for i in range(2)}
    return np.sum(d[0][1] + d[1][1] * 2.0)


def test_a_dict_bound_by_its_comprehension_is_filled_by_the_loop():
    """``doubled = {k: v * 2 for ...}``: ``doubled = {}`` and the loop storing each
    key, unrolled (static_loops.py: ``d`` is a display) into one store per key,
    with no copies."""
    text = str(desugared(doubled_by_key))
    assert "doubled = {}\n    v = a\n    doubled['a'] = v * 2\n    v = b\n" \
           "    doubled['b'] = v * 2\n" in text
    for options in OPTIONS:
        df = check_grad_and_autograd(doubled_by_key, (vec(3), vec(3)), (0, 1), **options)
        assert "doubled_a = " not in df.source and "doubled_a_2" not in df.source


def test_a_computed_key_is_evaluated_before_the_value():
    """Python evaluates a dict comprehension's key before its value (``d[k] = v``
    the other way round): a key that is not a name or constant gets a variable
    (in each copy of the loop static_loops unrolls: its condition ``k != 1`` is
    decided there)."""
    text = str(desugared(keys_computed))
    assert "d_key = str(2)\n    d[d_key] = x * (2 + 1.0)\n" in text


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("fn", [keyed_at_run_time, keys_computed, stored_after, nested_dicts])
def test_dict_comprehensions_written_as_loops_keep_their_gradients(fn, options):
    """Over a range known only at run time (refused as a dict comprehension before:
    the loop's dict is one of keys known at run time), with computed keys, a
    condition, a key stored afterwards, and one dict comprehension in another."""
    x = vec(3)
    df = check_grad_and_autograd(fn, (x,), (0,), **options)
    value, _ = tc.value_and_grad(fn, **options)(x)
    assert np.isclose(value, fn(x.copy()), rtol=1e-12)
    assert df is not None


def tableau_after_a_method_call(x, B, h):
    a = [[], [0.5], [0.25, -0.5]]
    k = []
    for i in range(3):
        k.append(np.tanh(np.tanh(B.sum(axis=0)) + h * sum([a[i][j] * k[j] for j in range(i)])))
    return np.sum(k[2] - k[1] * x)


def test_a_call_before_a_comprehension_is_evaluated_once_before_it():
    """``np.tanh(B.sum(axis=0)) + h * sum([...])`` (the fuzz's run_time_containers
    tableau): ``B.sum`` may change something, so it runs before the comprehension's
    loop, in a variable of its own (with what Python evaluated before it)."""
    text = str(desugared(tableau_after_a_method_call))
    assert "    k_sum = B.sum(axis=0)\n    k_items = []\n" in text  # (in each unrolled copy)
    assert "k.append(np.tanh(np.tanh(k_sum) + h * sum(k_items)))" in text
    for options in OPTIONS:
        check_grad_and_autograd(tableau_after_a_method_call, (vec(3), vec(2, 3), 0.3),
                                (0, 1, 2), **options)


def chosen_by_a_condition(x, ws, c):
    y = np.sum(x) * 2.0 + (x if c > 0 else sum([w * x for w in ws]))
    return np.sum(y)


def drawn_in_a_dict_display(x, ws):
    np.random.seed(1)
    d = {'a': np.sum(x) * 1.0, 'b': np.random.normal(), 'c': sum([w * x for w in ws])}
    return np.sum(d['c'] * d['a']) + d['b']


def test_a_comprehension_in_an_arm_of_a_conditional_expression_is_written_in_an_if():
    """``a if c else sum([...])``: an ``if`` statement choosing a variable, its arm's
    comprehension written out there (what Python evaluated before it first)."""
    text = str(desugared(chosen_by_a_condition))
    assert "    y_part = np.sum(x) * 2.0\n    if c > 0:\n        y_chosen = x\n" in text
    assert "y = y_part + y_chosen" in text
    for c in (1.0, -1.0):
        for options in OPTIONS:
            check_grad_and_autograd(chosen_by_a_condition, (vec(3), [vec(3), vec(3)], c),
                                    (0,), **options)


def test_a_dict_display_is_evaluated_key_by_key():
    """``{'a': ..., 'b': np.random.normal(), 'c': sum([...])}``: the draw, and what
    Python evaluated before it, run before the comprehension's loop."""
    text = str(desugared(drawn_in_a_dict_display))
    assert "    d_part = np.sum(x) * 1.0\n    d_normal = np.random.normal()\n    d_items = []\n" \
        in text
    x, ws = vec(3), [vec(3), vec(3)]
    for options in OPTIONS:
        value, _ = tc.value_and_grad(drawn_in_a_dict_display, **options)(x, ws)
        assert np.isclose(value, drawn_in_a_dict_display(x, ws))


class Counter:
    def __init__(self):
        self.n = 0

    def step(self, v):
        self.n = self.n + 1
        return v * 0.5


def item_updated_after_a_method_call(x, ws):
    c = Counter()
    y = np.zeros(3)
    y[1] += np.sum(c.step(x)) + sum([np.sum(w * x) for w in ws])
    return np.sum(y)


def test_a_comprehension_left_in_place_is_refused_at_its_line():
    """``y[1] += f() + sum([...])`` with ``f`` a call that may change something:
    Python reads ``y[1]`` before the value, so the call cannot be kept in a
    variable before the statement, and the comprehension is not written out.
    The lowering computed such a comprehension itself (lower/comprehensions.py,
    deleted); no test or fuzz family reached it: refused, naming the line."""
    with pytest.raises(TransformError, match="a list comprehension where it is not written "
                                             "as a loop before its statement") as info:
        tc.grad(item_updated_after_a_method_call)(vec(3), [vec(3), vec(3)])
    line = line_of(item_updated_after_a_method_call, "y[1] += ")
    assert f"test_comprehension_loops.py:{line}:" in str(info.value)


def loop_over_a_generator_reading_what_the_body_rebinds(x, n):
    s = x * 1.0
    total = 0.0
    for y in (np.sum(np.tanh(s) * v) for v in range(n)):
        s = s + 0.1 * y  # the generator reads s when the loop asks for its next item
        total = total + y
    return total


def loop_over_a_filtered_generator_left_by_break(x, n):
    s = x * 1.0
    total = 0.0
    for y in (np.sum(s * v) for v in range(n) if v != 2):
        if y > 100.0:
            break
        s = s + 0.1 * y
        total = total + y
    else:
        total = total * 2.0
    return total


def loop_over_an_enumerated_generator(x, n):
    s = x * 1.0
    total = 0.0
    for k, y in enumerate(np.sum(s * v) for v in range(n)):
        s = s + 0.1 * y * k
        total = total + y
    return total


def loop_over_a_drawing_generator(x):
    rng = np.random.default_rng(0)
    total = 0.0
    for y in (x * rng.normal() for _ in range(3)):
        total = total + np.sum(y) * rng.normal()  # draws alternate with the items'
    return total


@pytest.mark.parametrize("fn, args", [
    (loop_over_a_generator_reading_what_the_body_rebinds, (6,)),
    (loop_over_a_filtered_generator_left_by_break, (5,)),
    (loop_over_an_enumerated_generator, (4,)),
    (loop_over_a_drawing_generator, ()),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("checkpoint", [False, True], ids=["taped", "checkpointed"])
def test_a_loop_over_a_generator_computes_each_item_at_its_trip(fn, args, checkpoint):
    """Python computes a generator's item when the loop asks for it, after the body
    of the trip before: the items read what the body rebound and draw after its
    draws.  The compiler wrote the items out whole before the loop (0.6 for
    Python's 0.844 on the enumerated form: a silent wrong value and gradient)."""
    x = np.array([0.3, -0.2])
    value, _ = tc.value_and_grad(fn, checkpoint=checkpoint, snapshots=2)(x, *args)
    np.testing.assert_allclose(value, fn(x, *args), rtol=1e-12)
    check_grad_and_autograd(fn, (x, *args), checkpoint=checkpoint, snapshots=2)


def test_a_loop_over_a_generator_is_the_loop_over_its_iterable():
    text = desugared(loop_over_a_generator_reading_what_the_body_rebinds)
    assert "for v in range(n):\n        y = np.sum(np.tanh(s) * v)\n" in text


def loop_over_a_zipped_generator_reading_what_the_body_rebinds(x, ws):
    s = x * 1.0
    total = 0.0
    for y, w in zip((np.sum(s * v) for v in ws), ws):
        s = s + y * w
        total = total + y
    return total


def loop_over_a_zipped_generator(x, ws):
    s = x * 1.0
    total = 0.0
    for y, w in zip((np.sum(s * v) for v in ws), ws):
        total = total + y * w
    return total


def test_a_generator_read_lazily_through_zip_by_a_loop_changing_what_it_reads_is_refused():
    with pytest.raises(TransformError, match="a generator expression read lazily by a for "
                                             r"loop whose body changes what it reads \(s\)") as info:
        tc.grad(loop_over_a_zipped_generator_reading_what_the_body_rebinds)(vec(2), [0.5, 1.5])
    line = line_of(loop_over_a_zipped_generator_reading_what_the_body_rebinds, "for y, w in zip")
    assert f"test_comprehension_loops.py:{line}:" in str(info.value)
    check_grad_and_autograd(loop_over_a_zipped_generator, (vec(2), [0.5, 1.5, 2.0]))


def trajectory(x, n):
    for _ in range(n):
        x = np.tanh(x) + 0.1
        yield x


def phase_pairs(x, n):
    v = 0.0 * x
    for _ in range(n):
        v = v - 0.1 * x
        x = x + 0.1 * v
        yield x, v


def summed_over_a_generator(x, n):
    return sum(np.sum(s) for s in trajectory(x, n))


def filtered_list_over_a_generator(x, n):
    kept = [np.sum(s ** 2) for s in trajectory(x, n) if np.sum(s) > 0.5]
    x = x * 2.0  # (the generator read x where the list was made)
    return np.sum(kept) + np.sum(x)


def pairs_of_a_generator(x, n):
    return sum(np.sum(a * b) for a, b in phase_pairs(x, n))


def over_a_nested_generator(x, n):
    def states(y, m):
        for _ in range(m):
            y = np.sin(y) * 1.5
            yield y
    return sum(np.sum(s * t) for s in states(x, n) for t in states(s, 2))


def draws_interleaved_with_a_generators(x, n):
    def noisy(y, m, rng):
        for _ in range(m):
            y = y + 0.1 * rng.normal(size=y.shape)
            yield y
    rng = np.random.default_rng(3)
    return sum(np.sum(s * rng.normal(size=s.shape)) for s in noisy(x, n, rng))


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("fn", [summed_over_a_generator, filtered_list_over_a_generator,
                                pairs_of_a_generator, over_a_nested_generator,
                                draws_interleaved_with_a_generators],
                         ids=lambda f: f.__name__)
def test_a_comprehension_over_a_users_generator_is_its_loop_inlined(fn, options):
    """A comprehension iterating a call of the user's generator is written as its
    loop before inline_functions.py, which writes a loop over such a generator as
    the generator's statements (the comprehension's item at each ``yield``, in
    Python's order: random draws interleave as they do in Python); it was refused
    ('a loop over a generator that could not be inlined')."""
    x = np.array([0.3, 0.7, 1.1])
    assert "yield" not in str(desugared(fn)).split("\n\n\n")[0]
    check_grad_and_autograd(fn, (x, 4), (0,), **options)
