"""desugar/inline_functions.py: calls of the user's plain functions become the
statements of their bodies in the caller, with Python's binding of arguments and
Python's order of evaluation; what the pass cannot write as statements stays a
call, for the lowering."""

import importlib.util
import re
import sys
import textwrap

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_value_and_grad, numeric_grad
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

W = np.array([[0.5, -0.2, 0.1], [0.3, 0.4, -0.6], [0.0, 0.2, 0.7]])


def step(h, x, scale=1.0):
    if scale > 2:
        return h
    a = np.tanh(W @ h + x) * scale
    return a


def sq(v):
    return np.sum(v * v)


def rnn_loss(x):
    h = np.zeros(3)
    loss = 0.0
    for t in range(6):
        h = step(h, x, scale=0.5 + t * 0.1)
        loss += sq(h) + sq(h[0] * x)
    if sq(x) > 0.01:
        loss = loss * 2
    return loss + sq(step(h, x))


def test_calls_in_statements_and_expressions_are_inlined():
    text = desugared(rnn_loss)
    assert "step(" not in text and "sq(" not in text
    assert "a = np.tanh(W @ h + x) * scale" in text
    check_grad(rnn_loss, [np.array([0.1, 0.2, 0.3])])


@pytest.mark.parametrize("options", [{}, {"snapshots": 2}])
def test_inlined_loop_body_is_checkpointed_like_written_out(options):
    x = np.array([0.1, -0.2, 0.3])
    df = tc.grad_with_checkpointing(rnn_loss, **options) if options else tc.grad(rnn_loss)
    np.testing.assert_allclose(df(x), numeric_grad(rnn_loss, [x])[0], rtol=1e-6, atol=1e-8)


def draw_and_scale(rng, x):
    return x * rng.normal(size=3)


def draws_in_order(x):
    rng = np.random.default_rng(7)
    first = rng.normal(size=3) + draw_and_scale(rng, x)  # the left draw comes first
    return np.sum(first * x)


def test_operands_before_an_inlined_call_are_evaluated_before_it():
    x = np.array([0.4, -0.1, 0.2])
    check_value_and_grad(draws_in_order, [x], rel=1e-12)


def bump(v, x):
    v[0] += x
    return x * 2.0


def read_before_write(x):
    v = np.array([1.0, 2.0, 3.0]) * x
    s = v[0] * 3.0 + bump(v, x)  # v[0] is read before bump writes into it
    return s + np.sum(v * v)


def test_a_write_the_helper_makes_comes_after_what_python_read_before():
    x = 0.7
    check_value_and_grad(read_before_write, [x], rel=1e-12)


def weighted(v):
    return sum(v * i for i in range(1, 4))


def passes_a_name_the_helper_binds_in_a_comprehension(x):
    i = x * 2.0
    return weighted(i)


def test_a_callers_name_is_not_captured_by_the_helpers_comprehension():
    check_grad(passes_a_name_the_helper_binds_in_a_comprehension, [np.array([0.3, 0.5])])


def rebind(p):
    p = p * 2.0
    p[0] = 0.0
    return np.sum(p)


def add_into(p, x):
    p[1:] += x


def caller_arrays(x):
    a = np.array([1.0, 2.0, 3.0]) * x
    r = rebind(a)  # a is not changed: p was bound anew
    add_into(a, x)  # a is changed: p is a
    return r + np.sum(a * a)


def test_parameters_are_the_callers_objects():
    x = 0.9
    check_value_and_grad(caller_arrays, [x], rel=1e-12)


def mix(a, b=3.0, *, c=0.5):
    return a * b + c * a * a


def keywords_and_defaults(x):
    return mix(x) + mix(x, c=2.0) + mix(b=x, a=2.0 * x)


def test_keywords_and_defaults_bind_like_python():
    check_grad(keywords_and_defaults, [1.3])


def clipped(v, limit):
    if np.max(np.abs(v)) > limit:
        return v * (limit / np.max(np.abs(v)))
    elif limit < 0:
        raise ValueError("negative limit")
    v = v + 0.0
    return v * 1.5


def returns_on_each_path(x):
    return np.sum(clipped(x, 1.0) ** 2)


def test_each_return_is_the_last_statement_of_its_path():
    text = desugared(returns_on_each_path)
    assert "return" not in text.split("def returns_on_each_path", 1)[1].rsplit("return", 1)[0]
    check_grad(returns_on_each_path, [np.array([0.2, -0.4])])
    check_grad(returns_on_each_path, [np.array([2.0, -0.4])])


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x * 2.0, n - 1)


def recursive(x):
    return countdown(x, 3)


def test_recursion_is_left_to_the_lowering_which_refuses_it():
    with pytest.raises(TangentCkptError, match="recursive call"):
        tc.grad(recursive)(1.0)


_OTHER_MODULE = '''
import numpy as np

W = np.full(2, 3.0)


def scaled(v):
    a = v * W
    return np.sum(a)


def refused(v):
    try:
        a = v * 2.0
    finally:
        pass
    return np.sum(a)
'''


@pytest.fixture
def other_module(tmp_path):
    path = tmp_path / "tc_inline_other_module.py"
    path.write_text(textwrap.dedent(_OTHER_MODULE))
    spec = importlib.util.spec_from_file_location("tc_inline_other_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_a_helpers_own_global_is_read_in_its_module_not_the_callers(other_module):
    scaled = other_module.scaled

    def caller(x):
        W = x * 10.0  # the caller's W is not the helper's W
        a = W + 1.0
        return scaled(x) + np.sum(a)

    x = np.array([0.5, 0.25])
    value, grad = tc.value_and_grad(caller)(x)
    assert value == pytest.approx(caller(x))
    np.testing.assert_allclose(grad, [13.0, 13.0])


def test_a_refusal_in_an_inlined_helper_names_the_helpers_file(other_module):
    refused = other_module.refused

    def caller(x):
        return refused(x)

    try:
        tc.grad(caller)(np.ones(2))
    except TangentCkptError as error:
        assert error.filename.endswith("tc_inline_other_module.py")
    else:  # the construct is supported: then the gradient must be right
        check_grad(caller, [np.ones(2)])


def test_the_generated_code_quotes_the_helpers_lines():
    df = tc.grad(rnn_loss)
    df(np.ones(3))
    assert "(in step, line" in str(df.source)


def layer_items(Ws, x):
    for k in range(len(Ws)):
        yield Ws[k], x * (k + 1)


def loops_over_a_generator(x, Ws):
    def act(z, s=2.0):
        return np.tanh(z) * s
    sq = lambda v: v * np.cos(v)
    h = x
    for W, c in layer_items(Ws, x):
        h = act(W @ h) + sq(c)
    return np.sum(h)


def test_a_generator_loop_runs_the_body_at_each_yield():
    text = desugared(loops_over_a_generator)
    # every call inlined, and the local functions, bound for those calls only, gone
    assert "layer_items(" not in text and "act(" not in text and "sq(" not in text and \
        "def act" not in text and "sq = lambda" not in text, text
    Ws = [W, 0.5 * W.T]
    check_grad(loops_over_a_generator, [np.array([0.1, -0.2, 0.3]), Ws])


def swapped_pairs(a, b, n):
    for k in range(n):
        yield b, a


def rebinds_what_the_generator_was_given(x):
    a = x
    b = x * 2.0
    for a, b in swapped_pairs(a, b, 3):  # the generator keeps the first a and b
        b = b + a * 0.5
    return np.sum(a * b)


def test_a_generators_arguments_are_the_objects_given_when_the_loop_began():
    x = np.array([0.1, 0.2, 0.3])
    check_value_and_grad(rebinds_what_the_generator_was_given, [x], rel=1e-12)


def breaks_out_of_a_generator_loop(x):
    total = 0.0
    for W_row, c in layer_items(np.stack([W, W]), x):
        total = total + np.sum(W_row @ c)
        if total > 100.0:
            break
    return total


def test_a_break_out_of_a_generator_loop_ends_the_generator():
    """The break leaves the generator's own loop (a flag) and skips the rest of
    its body, as Python's closing of the generator does."""
    text = desugared(breaks_out_of_a_generator_loop)
    assert "layer_items(" not in text
    check_grad(breaks_out_of_a_generator_loop, [np.array([0.1, -0.2, 0.3])])
    check_grad(breaks_out_of_a_generator_loop, [np.array([30.0, 20.0, 10.0])])


def gravity_force(mass):
    return np.array([0.0, -9.81 * mass])


def euler_step(x, v, dt, mass, f):
    x += v * dt  # in place only where x is an array; x is the caller's parameter
    v += f * dt / mass  # (the caller rebinds x and v by unpacking what this returns)
    return x, v


def euler_step_dragged(x, v, dt, mass, f, drag={"c": 0.0}):
    return x + v * dt, v + (f - drag["c"] * v) * dt / mass  # (a dict default: the lowering's)


def euler_trajectory(x, v0, mass):
    x = x * 1.0
    v = np.array([v0, v0])
    heights = []
    while x[1] >= 0:
        x, v = euler_step(x, v, 0.1, mass, gravity_force(mass))
        heights.append(x[1] * 1.0)
    return np.sum(np.array(heights)) + x[0]


def euler_trajectory_dragged(x, v0, mass):
    x = x * 1.0
    v = np.array([v0, v0])
    heights = []
    while x[1] >= 0:
        x, v = euler_step_dragged(x, v, 0.1, mass, gravity_force(mass))
        heights.append(x[1] * 1.0)
    return np.sum(np.array(heights)) + x[0]


def test_a_call_left_to_the_lowering_keeps_its_arguments_as_written():
    """The outside program p39: the inner call was hoisted out of the outer one,
    then the outer one proved not inlinable here and the hoisted statements were
    dropped (NameError 'force_result').  The statement is now put back as it was."""
    text = desugared(euler_trajectory_dragged)
    assert "euler_step_dragged(x, v, 0.1, mass, gravity_force(mass))" in text, text
    check_grad(euler_trajectory_dragged, [np.array([0.0, 0.0]), 6.0, 2.0], wrt=(1, 2),
               rtol=1e-5)


@pytest.mark.parametrize("run", [dict(), dict(checkpoint=True, snapshots=2)],
                         ids=["taped", "snapshots2"])
def test_a_helper_adding_into_names_the_caller_rebinds_by_unpacking_is_inlined(run):
    """p39's `x, v = euler_step(x, v, ...)` with `x = x * 1.0` a parameter bound
    again: the helper's `x += ...` is followed by the view pass (was left to the
    lowering's write-back)."""
    text = desugared(euler_trajectory)
    assert "euler_step(" not in text and "gravity_force_result = " in text, text
    args = [np.array([0.0, 0.0]), 6.0, 2.0]
    value, _ = tc.value_and_grad(euler_trajectory, wrt=(1, 2), **run)(*args)
    assert np.isclose(value, euler_trajectory(*args), rtol=1e-12)
    check_grad(euler_trajectory, args, wrt=(1, 2), rtol=1e-5,
               df=tc.grad(euler_trajectory, wrt=(1, 2), **run))


def shifted(A, *offsets):
    for i in range(len(offsets)):
        A = np.roll(A, offsets[i], axis=i)
    return A


def with_options(x, **options):
    return options["scale"] * x + options.get("shift", 0.0)


def variadic_helpers(x):
    A = np.outer(x, x)
    r = shifted(A, 1, -1) - shifted(A, -1, 1)
    return np.sum(r * A) + np.sum(with_options(x, scale=3.0) * with_options(x, scale=2.0,
                                                                            shift=1.0))


def test_star_args_and_keywords_are_a_tuple_and_a_dict_of_the_call():
    text = desugared(variadic_helpers)
    assert "offsets = (1, -1)" in text and "options = {'scale': 3.0}" in text
    check_grad(variadic_helpers, [np.array([0.3, 0.4, 0.5])])


def _rk2_handing_on(f, u, dt, *args, **kwargs):
    k1 = f(u, *args, **kwargs)
    k2 = f(u + dt * k1, *args, **kwargs)
    return u + 0.5 * dt * (k1 + k2)


def _damped(u, k, c, forcing=0.0):
    return np.array([u[1], -k * u[0] - c * u[1] + forcing])


def handed_on_spreads(u0, k, c, n):
    u = u0
    for t in range(n):
        u = _rk2_handing_on(_damped, u, 0.1, k, c, forcing=0.5)
    return np.sum(u ** 2)


def test_a_helper_handing_on_its_args_and_kwargs_spreads_the_calls_items():
    """``f(u, *args, **kwargs)`` in an inlined helper is ``f(u, k, c, forcing=0.5)``:
    the call's items, each standing for itself, spread where the helper spreads
    them, so ``f`` is inlined too (the lowering inlined it, a spread of a name)."""
    text = desugared(handed_on_spreads)
    assert "_damped" not in text and "*args" not in text and "**kwargs" not in text, text
    args = [np.array([1.0, 0.2]), 2.0, 0.3, 4]
    check_grad(handed_on_spreads, args, wrt=(0, 1, 2))
    check_grad(handed_on_spreads, args, wrt=(0, 1, 2),
               df=tc.grad(handed_on_spreads, wrt=(0, 1, 2), checkpoint=True, snapshots=2))


def _dense(x, W, act=np.tanh, scale=1.0):
    return act(W @ x) * scale


def _apply(layer, x, *args, **kw):
    return layer(x, *args, **kw)


def _inner(x, y, z=1.0):
    return x * y + z


def _wrapper(*args, **kwargs):
    return _inner(*args, **kwargs)


def layers_applied_with_keywords(x, W, n):
    h = _apply(_dense, x, W, scale=0.5)
    h = _apply(_dense, h, W, act=np.sin)
    out = np.sum(_wrapper(h, x))  # no keywords: **kwargs is empty
    for t in range(n):
        out = out + np.sum(_wrapper(x * t, h, z=np.sum(W)))  # computed items
        W = W * 0.9
    return out


def test_computed_items_and_functions_handed_on_through_args_and_kwargs_are_inlined():
    """The computed items of ``*args`` / ``**kwargs`` are bound first, in the call's
    order, and spread as those names; ``act=np.sin`` handed on through ``**kw``
    (refused before: the lowering cannot resolve ``act``) is ``np.sin``."""
    text = desugared(layers_applied_with_keywords)
    assert "_dense" not in text and "_inner" not in text and "*" + "args" not in text, text
    args = [np.array([0.3, -0.2, 0.5]), W, 2]
    check_grad(layers_applied_with_keywords, args, wrt=(0, 1))
    check_grad(layers_applied_with_keywords, args, wrt=(0, 1),
               df=tc.grad(layers_applied_with_keywords, wrt=(0, 1), checkpoint=True,
                          snapshots=2))


def _shifted_by_keywords(x, b=0.0, **kw):
    return x * kw["scale"] + b - 2.0 * kw["shift"]


def keywords_drawn_in_order(x):
    rng = np.random.default_rng(0)
    return np.sum(_shifted_by_keywords(x, scale=rng.normal(), b=rng.normal(),
                                       shift=rng.normal()))


def test_keywords_gathered_around_a_named_one_are_evaluated_in_the_calls_order():
    """``scale`` and ``shift`` go to ``**kw``, ``b`` between them is a parameter:
    the dict of the two was evaluated first, whole, so the draws went to other
    arguments (a value and a gradient of another program)."""
    x = np.array([1.0, 2.0])
    value, _ = tc.value_and_grad(keywords_drawn_in_order)(x)
    assert value == keywords_drawn_in_order(x)
    check_grad(keywords_drawn_in_order, [x])


class _Cached:
    """A module-level object whose method caches what it computed."""

    def __init__(self):
        self.W = W * 0.5
        self.h = np.zeros(3)

    def reset(self):
        self.h = np.zeros(3)

    def forward(self, x):
        self.h = np.tanh(self.W @ self.h + x)
        return self.h


CACHED = _Cached()


def through_a_module_level_object(x):
    CACHED.reset()
    y = CACHED.forward(x)
    y = CACHED.forward(y * 0.5)
    return np.sum(y ** 2) + np.sum(CACHED.h)


def test_a_method_of_a_module_level_object_is_inlined_with_the_objects_name():
    """``CACHED.forward(x)``: the class is known when compiling, so desugar inlines
    the method with ``self`` standing for ``CACHED``; its attribute stores are the
    caller's ``CACHED.h = ...``, which ``outside_attributes.py`` then writes as the
    name ``CACHED_h`` (the object never changed by the gradient)."""
    text = desugared(through_a_module_level_object)
    assert "CACHED.forward(" not in text and "CACHED.reset(" not in text, text
    assert "CACHED_h = np.tanh(CACHED.W @ CACHED_h + x)" in text, text
    check_value_and_grad(through_a_module_level_object, (np.array([0.1, -0.2, 0.3]),))
    before = CACHED.h.copy()  # what the last run of f as written left
    tc.grad(through_a_module_level_object)(np.array([0.4, 0.2, 0.3]))
    np.testing.assert_array_equal(CACHED.h, before)


def _integrate(f, y, n, dt):
    for _ in range(n):
        y = y + dt * f(y)
    return y


def decay_given_as_a_lambda(y0, k):
    return np.sum(_integrate(lambda y: -k * y ** 3, y0, 4, 0.1) ** 2)


def test_a_lambda_given_to_a_helper_is_inlined_where_the_helper_calls_it():
    """The lambda is the helper's parameter: each call of it in the helper's body is
    its body, reading the caller's ``k`` (the lowering did this before)."""
    text = desugared(decay_given_as_a_lambda)
    assert "= lambda" not in text and "f_result = -k * y_2 ** 3" in text, text
    check_grad(decay_given_as_a_lambda, (np.array([0.5, -0.7]), 1.3), wrt=(0, 1))


def _scaled_square(a, x):
    def inner(a, y):  # this a is inner's own parameter, given x below
        return a * y ** 2
    return inner(x, a)


def _keyword_scaled_square(a, x):
    def inner(a, y):
        return a * y ** 2
    twice = lambda a: 2.0 * a  # noqa: E731 - a lambda's own parameter a too
    return twice(inner(y=a, a=x))


def nested_parameters_shadow_the_helpers(p, q):
    return _scaled_square(p, q) + _keyword_scaled_square(q, p) * 0.5


def test_a_nested_functions_own_parameter_is_not_the_helpers_argument():
    """Once a silent wrong gradient: the helper's parameter ``a`` was replaced by
    the caller's ``p`` inside ``inner`` too, whose own ``a`` it is (``inner(x, a)``
    computed p * p ** 2 instead of q * p ** 2, the gradient for q 0)."""
    text = desugared(nested_parameters_shadow_the_helpers)
    assert "p * p ** 2" not in text and "q * q ** 2" not in text, text
    check_grad(nested_parameters_shadow_the_helpers, [1.3, 0.7], wrt=(0, 1))


def _halved_and_shifted(p, c):
    p *= 0.5
    p += np.tanh(c * 0.5)


def _sweeps(u, p, k):
    for q in range(k):
        _halved_and_shifted(p, u)


def helper_writes_into_an_array_named_otherwise(a):
    tape = np.ones(3) * a
    _halved_and_shifted(tape, a)
    rows = np.ones((2, 3)) * np.sum(tape)
    _sweeps(a[0], rows, 2)
    return np.sum(tape ** 2) + np.sum(rows * a)


def test_a_helper_adding_into_its_parameter_writes_the_callers_array():
    """Once a silent wrong gradient (and value): ``p *= 0.5`` on a parameter given
    the caller's array ``tape`` stayed ``p *= 0.5`` on an unbound ``p``, and the
    caller's array kept its values.  It is now ``tape *= 0.5``."""
    text = desugared(helper_writes_into_an_array_named_otherwise)
    assert "tape *= 0.5" in text and "rows *= 0.5" in text and "p *=" not in text, text
    check_grad(helper_writes_into_an_array_named_otherwise, [np.array([0.3, -0.2, 0.5])])
    for run in (dict(), dict(checkpoint=True)):
        x = np.array([0.3, -0.2, 0.5])
        value, _ = tc.value_and_grad(helper_writes_into_an_array_named_otherwise, **run)(x)
        assert np.isclose(value, helper_writes_into_an_array_named_otherwise(x))


def _doubled_sine(v):
    return np.sin(v) * 2.0


def _bump_then_total(v):
    v += 1.0
    return np.sum(v)


def prints_helper_values_in_fstrings(x):
    counts = np.zeros(2)
    for k in range(2):
        print(f"{k}: {counts[0]:.1f} {np.linalg.norm(_doubled_sine(x)):.3e} "
              f"{_bump_then_total(counts):.1f}")
        x = x - 0.1 * _doubled_sine(x)
    return np.sum(x ** 2)


def test_a_helper_called_in_an_f_string_is_inlined_and_the_text_is_pythons(capsys):
    """The call is written before the ``print``; the f-string's parts before it are
    formatted first, where Python formats them (``counts[0]`` before the helper
    adds 1 into ``counts``), so the text printed is Python's, taped and
    checkpointed."""
    x = np.array([0.3, -0.5])
    prints_helper_values_in_fstrings(x.copy())
    expected = capsys.readouterr().out
    for options in ({}, {"checkpoint": True, "snapshots": 1}):
        tc.grad(prints_helper_values_in_fstrings, **options)(x.copy())
        assert capsys.readouterr().out == expected
    check_grad(prints_helper_values_in_fstrings, [x])
    text = desugared(prints_helper_values_in_fstrings)
    assert "as the lowering inlines it" not in text and "_doubled_sine(" not in text


def _pair_forces(k, x):
    d = x - x[k]
    return np.sum(np.tanh(d) * np.exp(-d ** 2), axis=0)


def _scaled_row_after_bump(k, V):
    V[k] += 1.0
    return V[k] * 2.0


def _pair_distance(a, b):
    return np.sqrt(np.sum((a - b) ** 2, axis=-1))


def _masked_pull(k, x):
    rel = np.zeros_like(x)      # made here: writing its items writes nothing else
    for i in range(x.shape[0]):
        rel[i] = x[k] - x[i]
    near = _pair_distance(x[k], x) < 1.5
    near[k] = False
    return np.sum(np.tanh(rel[near]), axis=0)


def _pull_through_a_view(k, x):
    row = x[k]                  # a view of the caller's array: a write into it is one
    row[0] = row[0] * 2.0
    return row * 0.5


def accumulates_masked_pulls(x):
    f = np.zeros_like(x)
    for k in range(x.shape[0]):
        f[k] += _masked_pull(k, x)
    return np.sum(f ** 2)


def adds_a_pull_written_through_a_view(x):
    V = np.zeros(x.shape) + x
    for k in range(x.shape[0]):
        V[k] += _pull_through_a_view(k, V)
    return np.sum(V ** 2)


def accumulates_pair_forces(x):
    f = np.zeros_like(x)
    for k in range(x.shape[0]):
        f[k] += _pair_forces(k, x)
    f[0] *= _pair_forces(1, x) + 1.0
    return np.sum(f ** 2)


def adds_what_a_writing_helper_returns(x):
    V = np.zeros(x.shape) + x
    for k in range(x.shape[0]):
        V[k] += _scaled_row_after_bump(k, V)
    return np.sum(V ** 2)


def test_an_item_augmented_by_a_helper_that_writes_nothing_is_inlined():
    """``f[k] += F(k, x)``: Python reads ``f[k]`` before the call; desugar writes the
    helper's body before the statement only where the helper writes nothing."""
    x = np.random.default_rng(5).standard_normal((4, 2))
    check_grad(accumulates_pair_forces, [x])
    tc_grad = tc.grad(accumulates_pair_forces, checkpoint=True, snapshots=2)(x)
    np.testing.assert_allclose(tc_grad, tc.grad(accumulates_pair_forces)(x), rtol=1e-12)
    text = desugared(accumulates_pair_forces)
    assert "as the lowering inlines it" not in text and "_pair_forces(k" not in text


def test_a_helper_writing_only_arrays_it_makes_and_calling_such_helpers_writes_nothing():
    """``rel = np.zeros_like(x)`` and ``near = d < 1.5`` are the helper's own new
    arrays, and ``_pair_distance`` writes nothing: ``f[k] += _masked_pull(k, x)``
    is written out by desugar (q25's ``f1[:, k] += F_i(k, x0)``)."""
    x = np.random.default_rng(6).standard_normal((4, 2))
    check_grad(accumulates_masked_pulls, [x])
    np.testing.assert_allclose(
        tc.grad(accumulates_masked_pulls, checkpoint=True, snapshots=2)(x),
        tc.grad(accumulates_masked_pulls)(x), rtol=1e-12)
    assert "as the lowering inlines it" not in desugared(accumulates_masked_pulls)


def _pull_row_by_default(k, x, scale=np.array([0.5])):
    row = x[k]                  # (an array default, read as the object it is)
    row[0] = row[0] * 2.0
    return np.sum(row * scale[0])


def conditional_pull_written_through_a_view(x):
    V = np.zeros(x.shape) + x
    t = 0.0
    for k in range(x.shape[0]):
        t = t + (np.sum(_pull_through_a_view(k, V)) if k > 0 else 0.0)
    return t + np.sum(V ** 2)


def defaulted_pull_written_through_a_view(x):
    V = np.zeros(x.shape) + x
    t = 0.0
    for k in range(x.shape[0]):
        t = t + _pull_row_by_default(k, V)
    return t + np.sum(V ** 2)


def _scale_through_the_transpose(k, x, scale={"s": 0.5}):
    T = x.T                     # followed by the helper's view pass: x = T.T after it
    T[0, k] = T[0, k] * 3.0
    return np.sum(T * scale["s"])


def _scale_through_asarray(k, x, scale={"s": 0.5}):
    same = np.asarray(x)        # x itself, for an array: x = same after the write
    same[k, 0] = same[k, 0] * 3.0
    return np.sum(same * scale["s"])


def _summing(helper):
    def summed(x):
        V = np.zeros(x.shape) + x
        t = 0.0
        for k in range(1, x.shape[0]):
            t = t + helper(k, V)
        return t + np.sum(V ** 2)
    summed.__name__ = f"summing{helper.__name__}"
    return summed


def _scale_through_the_transpose_by_default(k, x, scale=np.array([0.5])):
    T = x.T
    T[0, k] = T[0, k] * 3.0
    return np.sum(T * scale[0])


def _scale_through_asarray_by_default(k, x, scale=np.array([0.5])):
    same = np.asarray(x)
    same[k, 0] = same[k, 0] * 3.0
    return np.sum(same * scale[0])


@pytest.mark.parametrize("helper", [_scale_through_the_transpose, _scale_through_asarray])
def test_a_helper_the_lowering_inlines_writing_back_through_a_view_is_refused(helper):
    """Once a silent wrong value and gradient (19.9 for Python's 33.2): the helper's
    view pass carries the write back to its parameter (``x = T.T``), which only a
    call the caller's view pass marks (a whole statement) carries to the caller's
    array; inside an expression the lowering lost it.  (A dict default keeps the
    call the lowering's; with an array default desugar inlines it, below.)"""
    x = np.random.default_rng(6).standard_normal((3, 2))
    with pytest.raises(TangentCkptError, match=r"writes into its parameter 'x' \(through a view"):
        tc.value_and_grad(_summing(helper))(x)


@pytest.mark.parametrize("helper", [_scale_through_the_transpose_by_default,
                                    _scale_through_asarray_by_default])
@pytest.mark.parametrize("run", [dict(), dict(checkpoint=True, snapshots=2)],
                         ids=["taped", "snapshots2"])
def test_a_helper_with_an_array_default_writing_back_through_a_view_is_inlined(helper, run):
    """Refused while the array default left the call to the lowering (above):
    desugar inlines it, the default read as the object it is, and the view pass
    follows the write through ``x.T`` / ``np.asarray(x)`` into the caller's ``V``
    -- Python's value, and its gradient."""
    f = _summing(helper)
    x = np.random.default_rng(6).standard_normal((3, 2))
    assert "as the lowering inlines it" not in desugared(f)
    np.testing.assert_allclose(tc.value_and_grad(f, **run)(x)[0], f(x.copy()), rtol=1e-12)
    check_grad(f, [x], df=tc.grad(f, **run))


@pytest.mark.parametrize("run", [dict(), dict(checkpoint=True, snapshots=2)],
                         ids=["taped", "snapshots2"])
def test_a_helper_with_an_array_default_writing_through_a_view_of_its_parameter_is_inlined(run):
    """Refused while the array default left the call to the lowering (its write
    through ``row = x[k]``, a view of the caller's ``V``, was once lost): desugar
    inlines it and the view pass follows the write -- Python's value and gradient."""
    f = defaulted_pull_written_through_a_view
    x = np.random.default_rng(6).standard_normal((3, 2))
    assert "as the lowering inlines it" not in desugared(f)
    np.testing.assert_allclose(tc.value_and_grad(f, **run)(x)[0], f(x.copy()), rtol=1e-12)
    check_grad(f, [x], df=tc.grad(f, **run))


def test_a_helper_the_lowering_inlines_writing_through_a_view_of_its_parameter_is_refused():
    """Once a silent wrong value and gradient (45.9 for Python's 89.2): a helper
    the lowering inlines (inside ``V[k] += ...``; with an array default, or in
    ``a if c else b``, once) wrote through ``row = x[k]`` -- a view of the caller's ``V``
    that the view pass cannot follow, ``k`` being of unknown type -- and the write
    was lost.  The fence now reads a helper's parameters as live to its end."""
    f = adds_a_pull_written_through_a_view
    x = np.random.default_rng(6).standard_normal((3, 2))
    with pytest.raises(TangentCkptError, match="a write into 'row' may also change 'x'.*"
                                               "the caller reads its array after the call"):
        tc.value_and_grad(f)(x)


def test_an_item_augmented_by_a_helper_that_writes_stays_the_lowerings():
    """The helper writes the very item the statement read first: left to the
    lowering, which refuses the write into the caller's array inside an
    expression (Python would add the bumped item to the item read before)."""
    x = np.random.default_rng(5).standard_normal((3, 2))
    assert "as the lowering inlines it" in desugared(adds_what_a_writing_helper_returns)
    with pytest.raises(TangentCkptError, match="an array the caller also sees"):
        tc.grad(adds_what_a_writing_helper_returns)(x)


def test_a_helper_in_a_branch_of_a_conditional_writing_through_a_view_is_followed():
    """Refused before (the lowering inlined the call inside ``a if c else b``):
    the conditional expression is the ``if`` statement running the call, in
    which the helper is inlined and its write through ``row = V[k]`` followed."""
    x = np.random.default_rng(6).standard_normal((3, 2))
    text = desugared(conditional_pull_written_through_a_view)
    assert "        if k > 0:\n            row = V[k]\n" in text, text
    assert "        else:\n            choice = 0.0\n        t = t + choice\n" in text, text
    check_value_and_grad(conditional_pull_written_through_a_view, [x])
    check_grad(conditional_pull_written_through_a_view, [x],
               df=tc.grad(conditional_pull_written_through_a_view, checkpoint=True, snapshots=2))


def chosen_steps(x, c, n):
    def cond(v, k):
        return np.max(np.abs(v)) < 4.0 and k < 3

    def big(v):
        return np.sum(v) > 1.0

    def tenth(v):
        return sq(v) * 0.1
    for t in range(n):
        x = step(x, x) if t % 2 == 0 else x * 1.1  # a call in a branch: inlined there
        k = 0
        while cond(x, k):  # a local function in a while test: the lowering refused it
            x = x * 1.5
            k = k + 1
    if c > 5 or big(x):  # ... and in an or's second operand
        x = x * 2.0
    flag = c > 1 and tenth(x)  # a value of and: the operand Python stops at
    return sq(x) + (flag if c > 1 else 0.0)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
@pytest.mark.parametrize("c", [0.0, 2.0, 6.0])
def test_calls_python_may_skip_are_inlined_where_python_runs_them(c, options):
    """``a if c else b``, ``and``/``or`` and a ``while`` test are written as the
    ``if`` statements that run their parts, each call inlined on its path (in a
    test, a local function's: the lowering refused it in a condition); values
    and gradients are Python's."""
    x = np.array([0.3, -0.2, 0.4])
    text = desugared(chosen_steps)
    assert "def cond" not in text and "def big" not in text and "def tenth" not in text, text
    assert "        while True:\n" in text and "            if not cond_result:\n" in text
    df = tc.value_and_grad(chosen_steps, **options)
    value, grad = df(x, c, 4)
    np.testing.assert_allclose(value, chosen_steps(x, c, 4), rtol=1e-12)
    np.testing.assert_allclose(grad, numeric_grad(lambda v: chosen_steps(v, c, 4), [x])[0],
                               rtol=1e-5, atol=1e-7)


def counted_calls(x):
    count = 0.0

    def bump(v):
        nonlocal count
        count += 1.0
        return v * count
    y = count + bump(x) * count + bump(x)  # count read before, between and after
    return np.sum(y * y)


def rebinds_what_it_is_given(x):
    acc = x * 1.0

    def add(v):
        nonlocal acc
        acc = acc + 1.0
        return v * 2.0  # v: the array acc named when add was called
    z = add(acc)
    return np.sum(z * acc)


def accumulates_in_a_loop(x):
    h = x * 1.0

    def step(t):
        nonlocal h
        h = np.tanh(h * 0.9 + t * 0.1)
    for t in range(6):
        step(t)
    return np.sum(h)


def make_counter():
    c = 0.0

    def bump(v):
        nonlocal c
        c = c + 1.0
        return v * c
    return bump


def through_a_counter_factory(x):
    first, second = make_counter(), make_counter()
    return np.sum(first(x) + first(x) + second(x))


def _scaled_steps(v, n):
    def grow():
        nonlocal v
        v = v * 1.5
    for k in range(n):
        grow()
        yield v


def through_a_generator_with_a_nonlocal_def(x):
    s = 0.0
    for v in _scaled_steps(x, 3):
        s = s + np.sum(v * v)
    return s


@pytest.mark.parametrize("f", [counted_calls, rebinds_what_it_is_given, accumulates_in_a_loop,
                               through_a_counter_factory,
                               through_a_generator_with_a_nonlocal_def])
def test_a_nested_def_rebinding_the_callers_name_by_nonlocal_is_inlined(f):
    """``nonlocal s`` in a ``def`` of the caller's (or one a factory makes): the
    body runs in the caller, where ``s`` is the caller's name; a name it rebinds
    is read where Python reads it (before the call, never standing for a
    parameter).  Taped and checkpointed, against finite differences."""
    x = np.array([0.3, -0.5, 1.2])
    check_value_and_grad(f, (x,), rel=1e-12)
    taped = tc.grad(f)(x)
    np.testing.assert_allclose(tc.grad(f, checkpoint=True, snapshots=2)(x), taped,
                               rtol=1e-12)
    body = desugared(f).split("\n\n# function")[0]
    assert not re.search(r"(?<!def )\b(bump|add|step|first|second|grow)(_2)?\(", body), \
        body  # every call inlined


def adds_to_a_name_the_call_rebinds(x):
    s = 1.0

    def bump(v):
        nonlocal s
        s = s * 2.0
        return np.sum(v)
    s += bump(x)  # Python reads s (1.0) before the call doubles it
    return s * np.sum(x)


def test_an_augmented_name_a_call_rebinds_stays_the_lowerings_which_refuses_it():
    with pytest.raises(TangentCkptError, match=r"test_inline_functions.py:\d+: "
                                               r"unsupported statement: nonlocal"):
        tc.grad(adds_to_a_name_the_call_rebinds)(np.array([0.3, -0.5, 1.2]))


# --- super(Cls, self): the method after Cls in the object's class's order ------------
class _Base:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.tanh(self.W @ x)


class _Mid(_Base):
    def forward(self, x):
        return super(_Mid, self).forward(x) * 2.0


class _Top(_Mid):
    def __init__(self, W):
        super(_Top, self).__init__(W * 0.5)

    def forward(self, x):
        return super(_Mid, self).forward(x) + super(_Top, self).forward(x)  # _Base's, _Mid's


def super_with_a_class_named(W, x):
    net = _Top(W)
    for _ in range(2):
        x = net.forward(x)
    return np.sum(x ** 2)


def test_super_of_a_class_and_self_is_the_method_after_that_class():
    """``super(_Mid, self).forward`` on a ``_Top`` is ``_Base.forward`` (skipping
    ``_Mid``'s): inlined, the object names (once the lowering's ``SuperValue``)."""
    text = desugared(super_with_a_class_named)
    assert "super(" not in text and "net_W" in text and ".forward" not in text, text
    check_value_and_grad(super_with_a_class_named, (W, np.array([0.3, -0.2, 0.5])),
                         wrt=(0, 1))
    check_grad(super_with_a_class_named, (W, np.array([0.3, -0.2, 0.5])), wrt=(0, 1),
               df=tc.grad(super_with_a_class_named, wrt=(0, 1), checkpoint=True, snapshots=2))


# --- a classmethod called on its class ----------------------------------------------------
class _Scaling:
    factor = 2.0

    def __init__(self, W, s):
        self.W = W
        self.s = s

    @classmethod
    def half(cls, W):
        return cls(W, 0.5 * cls.factor)

    @classmethod
    def quarter(cls, W):
        return cls.half(W * 0.5)   # cls.half: the classmethod of the class called on

    @classmethod
    def rebinding(cls, W):
        cls = _Scaling
        return cls(W, 1.0)

    def forward(self, x):
        return np.tanh(self.W @ x) * self.s


class _Tripled(_Scaling):
    factor = 3.0

    def forward(self, x):
        return np.sin(self.W @ x) * self.s


def made_by_a_classmethod(W, x):
    layer = _Scaling.half(W)
    other = _Tripled.quarter(W.T)   # cls is _Tripled: its factor, its forward
    return np.sum(layer.forward(x) * other.forward(x))


def made_by_a_classmethod_rebinding_cls(W, x):
    layer = _Scaling.rebinding(W)
    return np.sum(layer.forward(x))


def test_a_classmethod_called_on_its_class_is_inlined_with_cls_the_class():
    """``Cls.half(W)`` runs ``half`` with ``cls`` the class it is called on (a
    subclass's attributes and methods where it is a subclass): its object is
    then names like any other."""
    text = desugared(made_by_a_classmethod).split("\n\n\n")[0]
    assert ".half" not in text and ".quarter" not in text and ".forward" not in text and \
        "np.sin" in text and "_Tripled.factor" in text, text
    x = np.array([0.3, -0.2, 0.5])
    check_value_and_grad(made_by_a_classmethod, (W, x), wrt=(0, 1))
    check_grad(made_by_a_classmethod, (W, x), wrt=(0, 1),
               df=tc.grad(made_by_a_classmethod, wrt=(0, 1), checkpoint=True, snapshots=2))


def test_a_classmethod_rebinding_cls_stays_a_call():
    """(``cls`` would be a local alias of the class: the lowering's, which refuses
    it naming the line, as before.)"""
    assert "_Scaling.rebinding(W)" in desugared(made_by_a_classmethod_rebinding_cls)
    with pytest.raises(TangentCkptError, match=r"test_inline_functions.py:\d+: "):
        tc.grad(made_by_a_classmethod_rebinding_cls)(W, np.array([0.3, -0.2, 0.5]))


# --- an object a helper makes, changes and returns ------------------------------------------
class _Affine:
    def __init__(self, W, s):
        self.W = W
        self.s = s

    def forward(self, x):
        return np.tanh(self.W @ x) * self.s


def _made_and_tuned(W, s):
    made = _Affine(W, s)
    made.s = made.s * 0.5
    made.W = made.W * 2.0
    return made


def factory_made_objects(W, x):
    layer = _made_and_tuned(W, 1.5)
    h = layer.forward(x)
    layer = _made_and_tuned(W.T, 0.5)        # another object under the same name
    for t in range(2):
        step = _made_and_tuned(W * (t + 1.0), 0.1)
        h = step.forward(h) + layer.forward(h)
    return np.sum(h * layer.s)


def test_an_object_a_helper_makes_and_returns_is_made_under_the_callers_name():
    """``layer = make(W)`` where ``make`` ends ``return made``, ``made`` its own
    construction: the object is made as ``layer`` (names, no ``layer = made``
    handing it on, which kept it for the lowering)."""
    text = desugared(factory_made_objects).split("\n\n\n")[0]
    assert "= made" not in text and ".forward" not in text and "layer_s = layer_s * 0.5" in text, \
        text
    check_value_and_grad(factory_made_objects, (W, np.array([0.3, -0.2, 0.5])), wrt=(0, 1))
    check_grad(factory_made_objects, (W, np.array([0.3, -0.2, 0.5])), wrt=(0, 1),
               df=tc.grad(factory_made_objects, wrt=(0, 1), checkpoint=True, snapshots=2))


# --- an object a generator loop's body makes anew under the name the generator was given
# (the body's construction is already its __init__'s statements when the loop is
# inlined: its marker says the body rebinds the name)

class _Decay:
    def __init__(self, nu):
        self.nu = nu

    def rate(self, u, t):
        return -self.nu * np.sin(u) * (1.0 + t)


def _stages_of(obj, u):
    yield obj.rate(u, 0.0)
    yield obj.rate(u, 1.0)


def a_generator_given_an_object_its_loop_makes_anew(u, nu):
    model = _Decay(nu)
    s = 0.0
    for k in _stages_of(model, u):
        s = s + np.sum(k ** 2)
        model = _Decay(2.0 * nu)             # the generator keeps the first object
    return s


def test_an_object_the_generator_loop_makes_anew_is_not_the_generators_argument():
    """Before: the generator's ``obj`` stood for ``model``, so its second stage read
    the second object (0.0606 for Python's 0.0178); now the object stays the
    lowering's, which refuses it (an object under two names)."""
    u = np.array([0.3, -0.2, 0.5])
    assert "model_nu" not in desugared(a_generator_given_an_object_its_loop_makes_anew)
    with pytest.raises(TangentCkptError, match="bound to a function or object more than once"):
        tc.grad(a_generator_given_an_object_its_loop_makes_anew, wrt=(0, 1))(u, 0.1)


# --- a method of an object made here handed to a helper (`rk4(model.rhs, u, t, dt)`):
# the parameter stands for `model.rhs`, each call is the method inlined

def _rk2(f, u, t, dt):
    k1 = f(u, t)
    k2 = f(u + dt * k1, t + dt)
    return u + 0.5 * dt * (k1 + k2)


def _rated_twice(f, obj, u):
    a = f(u, 0.0)
    obj.nu = obj.nu * 2.0                    # the bound method reads the object when called
    return a + f(u, 1.0)


def a_method_handed_to_an_integrator(u, nu):
    model = _Decay(nu)
    other = _Decay(3.0 * nu)
    t = 0.0
    for _ in range(3):
        u = _rk2(model.rate, u, t, 0.01)
        u = u + 0.01 * _rated_twice(other.rate, other, u)
        t += 0.01
    return np.sum(u ** 2)


def test_a_method_of_an_object_made_here_handed_to_a_helper_is_inlined():
    text = desugared(a_method_handed_to_an_integrator)
    assert "_Decay" not in text and ".rate" not in text and "f = " not in text and \
        "model_nu" in text and "other_nu = other_nu * 2.0" in text, text
    u = np.array([0.3, -0.2, 0.5])
    check_value_and_grad(a_method_handed_to_an_integrator, (u, 0.1), wrt=(0, 1), rel=1e-12)
    check_grad(a_method_handed_to_an_integrator, (u, 0.1), wrt=(0, 1),
               df=tc.grad(a_method_handed_to_an_integrator, wrt=(0, 1), checkpoint=True,
                          snapshots=2))


def _rebinding_the_method(f, u):
    _Decay.rate = _Decay.rate                # the class's method bound anew
    return f(u, 0.0)


def a_helper_binding_the_method_anew(u, nu):
    model = _Decay(nu)
    return np.sum(_rebinding_the_method(model.rate, u))


def test_a_method_the_function_binds_anew_on_the_class_is_refused():
    """Reading ``model.rate`` again after ``Cls.rate = g`` would give ``g``: the
    round keeps such an object (``_methods_stored_over``), and the fence refuses
    the store into the class."""
    with pytest.raises(TangentCkptError, match="write into the attribute '_Decay.rate'"):
        tc.grad(a_helper_binding_the_method_anew, wrt=(0,))(np.array([0.3, -0.2]), 0.1)


def a_method_bound_to_a_local(u, nu):
    model = _Decay(nu)
    rate = model.rate                         # bound once, called in the loop
    for t in range(3):
        u = u + 0.01 * rate(u, 0.1 * t)
    return np.sum(u ** 2)


def test_a_local_bound_to_a_method_of_an_object_made_here_is_the_method_inlined():
    """``rate = model.rate`` at the top: its calls are the method's
    (``function_names.py``, run before the first round too), so the object is
    names; before, the binding kept the object for the lowering."""
    text = desugared(a_method_bound_to_a_local)
    assert "_Decay" not in text and "rate(" not in text and "model_nu" in text, text
    u = np.array([0.3, -0.2, 0.5])
    check_value_and_grad(a_method_bound_to_a_local, (u, 0.1), wrt=(0, 1), rel=1e-12)
    check_grad(a_method_bound_to_a_local, (u, 0.1), wrt=(0, 1),
               df=tc.grad(a_method_bound_to_a_local, wrt=(0, 1), checkpoint=True,
                          snapshots=2))


# -- helpers with array defaults: the default read as the object it is (one array,
# made when the def ran and shared by every call); a write into it refused

STENCIL = np.array([0.2, -0.1, 0.05])  # a module-level array given as a default


def _stencil_step(u, dt, coeffs=STENCIL):
    lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
    return u + dt * (coeffs[0] * lap + coeffs[1] * u * u + coeffs[2] * np.tanh(u))


def steps_with_a_default_stencil(u, n):
    for t in range(n):
        u = _stencil_step(u, 0.1)
    return np.sum(u ** 2)


def _ones_weighted(x, w=np.ones(3)):
    return np.tanh(x * w)


def dense_by_default_and_given(x):
    return np.sum(_ones_weighted(x) ** 2) + np.sum(_ones_weighted(x, x))


def _smoothed(v, w=np.array([0.25, 0.5, 0.25])):
    return w[0] * np.roll(v, 1) + w[1] * v + w[2] * np.roll(v, -1)


def smooths_twice_per_trip(x, n):
    for t in range(n):
        x = _smoothed(x)
        x = np.sin(_smoothed(x))
    return np.sum(x)


def _picked(x, idx=np.array([0, 2])):
    return np.sum(x[idx] ** 2)


def picks_by_a_default_index(x):
    return _picked(x) + _picked(x * x)


@pytest.mark.parametrize("f, args", [
    (steps_with_a_default_stencil, (np.array([0.1, 0.5, -0.3, 0.8]), 3)),
    (dense_by_default_and_given, (np.array([0.3, -0.2, 0.5]),)),
    (smooths_twice_per_trip, (np.array([0.3, -0.2, 0.5, 0.9]), 3)),
    (picks_by_a_default_index, (np.array([0.3, -0.2, 0.5]),)),
], ids=["stencil", "ones", "twice_per_trip", "index"])
@pytest.mark.parametrize("run", [dict(), dict(checkpoint=True, snapshots=2)],
                         ids=["taped", "snapshots2"])
def test_a_helper_reading_its_array_default_is_inlined(f, args, run):
    """``def step(u, dt, coeffs=STENCIL)``, ``def dense(x, w=np.ones(3))``: the
    default is read as the object it is (``w_default``), as a function default
    is, and the call is the helper's statements (was the lowering's): Python's
    value and gradient, taped and checkpointed."""
    text = desugared(f)
    assert "as the lowering inlines it" not in text and "_default" in text, text
    np.testing.assert_allclose(tc.value_and_grad(f, **run)(*args)[0], f(*args), rtol=1e-12)
    check_grad(f, list(args), df=tc.grad(f, **run))


def _layered(u, ws=[np.array([0.5, 1.0, 2.0]), np.array([1.0, 1.0, 0.5])], bs=[0.1, -0.2]):
    for w, b in zip(ws, bs):
        u = np.tanh(u * w + b)
    return u + len(ws)


def layers_by_default(x):
    return np.sum(_layered(x) ** 2)


def _paired(u, pair=(np.array([1.0, 2.0, 0.5]), np.array([0.1, 0.0, -0.1]))):
    a, b = pair
    return u * a + b * pair[1]


def pairs_by_default(x):
    return np.sum(_paired(x) ** 2)


def _nudged(u, coeffs=[0.1, 0.2]):
    u += coeffs[0] * np.sin(u) + coeffs[1]


def nudges_by_a_list_default(x, n):
    U = x * 1.0
    for t in range(n):
        _nudged(U)
    return np.sum(U ** 2)


@pytest.mark.parametrize("f, args", [
    (layers_by_default, (np.array([0.3, -0.2, 0.5]),)),
    (pairs_by_default, (np.array([0.3, -0.2, 0.5]),)),
    (nudges_by_a_list_default, (np.array([0.3, -0.2, 0.5]), 3)),
], ids=["list_of_arrays", "tuple_of_arrays", "list_of_numbers"])
@pytest.mark.parametrize("run", [dict(), dict(checkpoint=True, snapshots=2)],
                         ids=["taped", "snapshots2"])
def test_a_helper_reading_its_list_or_tuple_default_is_inlined(f, args, run):
    """A list or tuple of numbers and arrays as a default is read as the object it
    is too (the lowering inlined these; a tuple of arrays it stopped on with
    NumPy's "truth value of an array is ambiguous")."""
    assert "as the lowering inlines it" not in desugared(f)
    np.testing.assert_allclose(tc.value_and_grad(f, **run)(*args)[0], f(*args), rtol=1e-12)
    check_grad(f, list(args), df=tc.grad(f, **run))


def _counted(u, c=[1.0, 2.0]):
    c[0] = c[0] + 1.0
    return u * c[0]


def counts_in_a_list_default(x):
    return np.sum(_counted(x)) + np.sum(_counted(x))


def test_a_helper_writing_into_its_list_default_is_refused():
    """Python's 6.0 per element here (the list counts every call); the lowering
    refused it as a write into the caller's array: refused, naming the default."""
    with pytest.raises(TangentCkptError) as info:
        tc.grad(counts_in_a_list_default)(np.array([0.3, -0.2, 0.5]))
    message = str(info.value)
    assert f"test_inline_functions.py:{line_of(_counted, 'c[0] =')}: a write into the default " \
        "of _counted()'s parameter 'c': one list, made when the def ran" in message, message


def _accumulated(x, buf=np.zeros(3)):
    buf += x                    # Python's mutable default: the sum of every call's x
    return np.sum(buf * x)


def accumulates_into_a_default(x):
    return _accumulated(x) + _accumulated(x * 2.0)


def _buffer(x, buf=np.zeros(3)):
    return buf


def writes_the_default_it_is_given(x):
    b = _buffer(x)
    b[:] = x                    # the helper's default, changed for every later call
    return np.sum(b * x)


def _written_out(x, buf=np.zeros(3)):
    np.multiply(x, 2.0, out=buf)
    return np.sum(buf * x)


def writes_a_default_with_out(x):
    return _written_out(x)


def _written_through_a_view(x, s=np.array([1.0, 2.0, 3.0])):
    v = s[:1]
    v[0] = v[0] * 2.0
    return np.sum(x * s)


def writes_a_default_through_a_view(x):
    return _written_through_a_view(x) + _written_through_a_view(x)


def test_a_helper_writing_into_its_array_default_is_refused():
    """``def acc(x, buf=np.zeros(3)): buf += x``: the default is ONE array, which
    every call adds into (Python gives 2.66 here; the lowering gave 1.9, a new
    zero array per call).  A write into it outlives the call, as one into a
    module-level array: refused at the write, naming the default."""
    x = np.array([0.3, -0.2, 0.5])
    with pytest.raises(TangentCkptError) as info:
        tc.value_and_grad(accumulates_into_a_default)(x)
    message = str(info.value)
    line = line_of(_accumulated, "buf += x")
    assert f"test_inline_functions.py:{line}: a write into 'buf', which may change the default " \
        "of _accumulated()'s parameter 'buf': one array, made when the def ran and shared " \
        "by every call, which outlives this call" in message, message
    assert "give _accumulated() its own array at each call (buf=...)" in message, message


@pytest.mark.parametrize("f, place, written", [
    (writes_the_default_it_is_given, (writes_the_default_it_is_given, "b[:] = x"), "'b', which may change "),
    (writes_a_default_with_out, (_written_out, "out=buf"), ""),
    (writes_a_default_through_a_view, (_written_through_a_view, "v[0] ="), "'v', which may change "),
], ids=["returned", "out", "view"])
def test_a_write_into_an_array_default_by_any_name_is_refused(f, place, written):
    """The default returned and written by the caller, written by ``out=``, or
    through a view: each changes the one array every later call reads."""
    with pytest.raises(TangentCkptError) as info:
        tc.grad(f)(np.array([0.3, -0.2, 0.5]))
    message = str(info.value)
    assert f"test_inline_functions.py:{line_of(*place)}: a write into {written}the default" \
        in message, message
