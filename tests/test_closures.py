"""lower/callables.py: functions as values -- passed as arguments, default
arguments, closures made by a factory, lambda, functools.partial, map -- each
differentiated (finite differences, autograd, taped = checkpointed).  Functions
are known by object: a closure named like its caller is not recursion; real
recursion is refused with its line."""

import functools

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct
from gradcheck import check_grad, check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

RNG = np.random.default_rng(18)
X = RNG.standard_normal(4)
W = RNG.standard_normal((4, 4)) * 0.5


def fixed_point(f, x0, n=4):
    x = x0
    for _ in range(n):
        x = f(x)
    return x


def damped(z):
    return 0.5 * np.sin(z) + 0.1 * z


def through_user_function(x):
    return np.sum(fixed_point(damped, x))


def through_numpy_function(x):
    return np.sum(fixed_point(np.tanh, x))


def net(x, W, act=np.tanh):
    return act(W @ x)


def default_activation(x, W):
    return np.sum(net(x, W) + net(x, W, act=np.sin) ** 2)


def make_loss(k):
    def loss(x):
        return np.sum(k * np.sin(x) ** 2)
    return loss


def loss(x):  # the same __name__ as the closure make_loss returns
    inner = make_loss(3.0)
    return inner(x) + np.sum(x)


def factory_in_loop(x, W):
    step = make_step(W)
    for _ in range(3):
        x = step(x)
    return np.sum(x ** 2)


def make_step(W):
    def step(h):
        return np.tanh(W @ h)
    return step


def with_lambda(x, W):
    sq = lambda v: v * np.cos(v)  # noqa: E731
    h = x
    for _ in range(3):
        h = sq(W @ h)
    return np.sum(h)


def lambda_argument(x):
    return np.sum(fixed_point(lambda z: np.cos(z) * 0.9, x))


def scaled(x, W, scale):
    return scale * np.tanh(W @ x)


def with_partial(x, W):
    layer = functools.partial(scaled, W=W, scale=2.0)
    return np.sum(layer(x) * x)


def with_map(x, W):
    a, b = map(np.sin, (x, W @ x))
    return np.sum(sum(map(np.tanh, [x, a, b])) * b)


@pytest.mark.parametrize("f, args, wrt", [
    (through_user_function, (X,), (0,)),
    (through_numpy_function, (X,), (0,)),
    (default_activation, (X, W), (0, 1)),
    (loss, (X,), (0,)),
    (factory_in_loop, (X, W), (0, 1)),
    (with_lambda, (X, W), (0, 1)),
    (lambda_argument, (X,), (0,)),
    (with_partial, (X, W), (0, 1)),
    (with_map, (X, W), (0, 1)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_function_value_is_differentiated(f, args, wrt):
    check_construct(f, args, wrt)


def test_a_closure_from_a_factory_is_differentiated_directly():
    check_construct(make_loss(3.0), (X,), (0,))


def test_a_partial_of_a_global_binds_constants():
    half = functools.partial(scaled, scale=0.5)

    def uses_it(x, W):
        return np.sum(half(x, W))
    check_construct(uses_it, (X, W), (0, 1), autograd=False)


def recursive(x, n):
    if n == 0:
        return x
    return recursive(np.sin(x), n - 1)


def test_real_recursion_is_refused_with_its_line():
    with pytest.raises(TangentCkptError) as info:
        tc.grad(recursive)(X, 2)
    text = str(info.value)
    assert "test_closures.py:" in text and "recursive call to recursive()" in text
    assert info.value.construct.startswith("recursion")


def rebinds_a_function(x, flag):
    act = np.tanh
    if flag:
        act = np.sin
    return np.sum(act(x))


def test_a_function_bound_in_a_branch_is_refused():
    with pytest.raises(TangentCkptError) as info:
        tc.grad(rebinds_a_function)(X, True)
    assert "test_closures.py:" in str(info.value)


def test_the_inlined_closure_is_commented_with_its_name_and_line():
    source = tc.grad(loss).source
    assert "(in loss, line" in source


def map_into_containers(x, W):
    a, b = list(map(np.sin, [x, W @ x]))
    c, d = tuple(map(lambda v: v * 2.0, (x, a)))
    return np.sum(a * b + c * d)


def test_list_and_tuple_of_a_map_are_its_items():
    check_construct(map_into_containers, (X, W), (0, 1))


def make_scaled(k):
    def scaled(v):
        return k * v
    return scaled


def closure_called_after_its_argument_is_rebound(x):
    s = 2.0 * x
    h = make_scaled(s)
    s = 5.0 * x  # the closure keeps the s it was given
    return np.sum(h(x)) + np.sum(s)


def test_a_closure_keeps_the_object_its_factory_was_given():
    """Once a silent wrong gradient (8.5 computed for 6.4 at x = [0.3, 0.4]): the
    closure read the caller's rebound name instead of its factory's parameter."""
    x = np.array([0.3, 0.4])
    check_value_and_grad(closure_called_after_its_argument_is_rebound, (x,))


def default_read_where_the_def_runs(x):
    s = 2.0 * x
    def scaled(v, k=s):  # k is the s of this line
        return k * v
    s = 5.0 * x
    return np.sum(scaled(x)) + np.sum(s)


def test_a_nested_defs_default_is_the_value_when_the_def_ran():
    """Once a silent wrong gradient (4.75 computed for 4.0 at x = [0.3, 0.4]): the
    default was read where the function was called, after s was rebound
    (desugar/def_defaults.py)."""
    x = np.array([0.3, 0.4])
    check_value_and_grad(default_read_where_the_def_runs, (x,))


def scale_by(k, v):
    return k * v


def partial_called_after_its_argument_is_rebound(x):
    s = 2.0 * x
    h = functools.partial(scale_by, s)  # binds the object s is now
    s = 5.0 * x
    return np.sum(h(x)) + np.sum(s)


def test_a_partial_keeps_the_objects_it_bound():
    """Once a silent wrong gradient (4.75 computed for 4.0 at x = [0.3, 0.4]): the
    partial read the caller's rebound name where it was called."""
    x = np.array([0.3, 0.4])
    check_value_and_grad(partial_called_after_its_argument_is_rebound, (x,))


def make_counter_scaled(c):
    acc = np.zeros(2) + c

    def scaled(v):
        return acc * v   # reads acc when called: after the += below
    acc += 1.0
    return scaled


def closure_over_a_local_changed_after_the_def(x):
    f = make_counter_scaled(x[0])
    g = make_counter_scaled(x[1] * 2.0)
    return np.sum(f(x[:2]) * g(x[2:]))


def closure_made_again_in_a_loop(x):
    f = make_scaled(x[0])
    total = 0.0
    for k in range(3):
        y = f(x)
        total = total + np.sum(y)
        if k < 2:
            f = make_scaled(x[k + 1] + 0.1 * y[0])
    return total


def closure_made_in_each_trip(x):
    total = 0.0
    for k in range(3):
        if k > 0:
            total = total + np.sum(f(x[:2]) ** 2)   # the closure the trip before made
        f = make_counter_scaled(x[k] + 0.1 * total)
        total = total + np.sum(f(x[1:3]))
    return total


def closure_kept_from_an_earlier_trip(x):
    first = None
    total = 0.0
    for k in range(3):
        f = make_scaled(x[k])
        if k == 0:
            first = f
        total = total + np.sum(f(x) * first(x))   # first keeps trip 0's k
    return total


def closure_called_where_it_is_made(x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(make_counter_scaled(x[k])(x[:2]))
    return total


@pytest.mark.parametrize("f", [closure_called_after_its_argument_is_rebound,
                               closure_over_a_local_changed_after_the_def,
                               closure_made_in_each_trip, closure_called_where_it_is_made,
                               loss, factory_in_loop])
def test_a_closure_factory_keeps_each_calls_bindings(f):
    """A factory called where it runs once is written into the caller by desugar
    (its closure's names are fresh names of the caller, bound once), and so is one
    called in a loop whose closure one name holds and only calls: each call then
    reads the bindings of the factory's last run, the ones that closure keeps."""
    x = np.array([0.3, 0.4, -0.2, 0.5])
    args = (x, W) if f is factory_in_loop else (x,)
    check_value_and_grad(f, args, wrt=tuple(range(len(args))))
    checkpointed = tc.grad(f, wrt=tuple(range(len(args))), checkpoint=True, snapshots=1)(*args)
    taped = tc.grad(f, wrt=tuple(range(len(args))))(*args)
    for a, b in zip(np.atleast_1d(taped) if len(args) == 1 else taped,
                    np.atleast_1d(checkpointed) if len(args) == 1 else checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
    assert "as the lowering inlines it" not in desugared(f)


@pytest.mark.parametrize("f", [closure_made_again_in_a_loop, closure_kept_from_an_earlier_trip])
def test_a_closure_made_in_a_loop_and_held_otherwise_is_refused(f):
    """A closure of an earlier trip reachable after the factory ran again (``first``
    holds trip 0's; ``f`` bound at two places) is left to the lowering, which
    refuses a name bound to functions more than once or in a loop: never one
    name read for every trip's bindings."""
    assert "as the lowering inlines it" in desugared(f)
    with pytest.raises(TangentCkptError, match="bound to a function or object more than once"):
        tc.grad(f)(np.array([0.3, 0.4, -0.2, 0.5]))


def _scaled_tanh(s):
    def g(v):
        return np.tanh(v) * s
    return g


def closures_in_a_list_printed(x, n=3):
    gs = [_scaled_tanh(1.0), _scaled_tanh(2.0)]  # HELD
    y = x
    for t in range(n):
        print(gs[t % 2](y))
        y = y * 1.5
    return np.sum(y)


def test_closures_held_in_a_list_are_refused_with_their_line(capsys):
    """A list of closures a factory made is no value the generated code can hold:
    printed through a run-time index it crashed the transform with a bare
    ``TypeError: <LocalFunction object>`` (session 19); now refused at the list."""
    import inspect
    lines, first = inspect.getsourcelines(closures_in_a_list_printed)
    line = first + next(k for k, text in enumerate(lines) if "# HELD" in text)
    with pytest.raises(TangentCkptError, match="held as a value") as info:
        tc.grad(closures_in_a_list_printed)(np.array([0.3, 0.4]))
    assert f"test_closures.py:{line}:" in str(info.value)


def a_def_in_each_branch(x):
    if x[0] > 0:
        def g(v):
            return v * 2.0
    else:
        def g(v):
            return v * 3.0
    return np.sum(g(x))


def test_a_name_two_defs_bind_is_refused():
    """Once a silent wrong value (1.2 for Python's 0.8 at x[0] > 0): the lowering
    bound ``g`` to each ``def`` as it read it, so every call meant the last."""
    x = np.array([0.3, -0.4, 0.5])
    with pytest.raises(TangentCkptError, match="'g' is bound more than once"):
        tc.value_and_grad(a_def_in_each_branch)(x)


def a_def_in_a_branch_and_a_loop(x):
    total = 0.0
    for k in range(3):
        if k > 0:
            total = total + np.sum(g(x))   # the g the trip before made
        c = x[k]

        def g(v):
            return v * c
    return total + np.sum(g(x))


def test_a_def_bound_once_in_a_loop_is_called_where_its_call_is():
    """A ``def`` bound once, anywhere (here in a loop, called before its statement
    in the next trip): desugar writes each call as the body, reading ``c`` when
    the call runs, as the closure does."""
    check_value_and_grad(a_def_in_a_branch_and_a_loop, (np.array([0.3, -0.4, 0.5]),))


def closure_writing_its_functions_array_in_a_comprehension(x):
    acc = np.zeros(2)

    def add(v):
        acc[0] += v
        return v * 2.0
    ys = [add(x[k]) for k in range(3)]
    return np.sum(acc ** 2) + ys[0]


def closure_writing_its_functions_array_as_a_statement(x):
    acc = np.zeros(2)

    def add(v):
        acc[0] += v
        return v * 2.0
    y = add(x[0])
    y = y + add(x[1])
    return np.sum(acc ** 2) + y


def test_a_def_writing_its_functions_array_is_exact_as_a_statement_refused_elsewhere():
    """Called as a statement, desugar writes the body where the call is (the
    write is the function's own); inside a comprehension it stays a call, and
    the refusal names the enclosing function's variable (it once said
    "module-level object")."""
    x = np.array([0.3, -0.4, 0.5])
    check_value_and_grad(closure_writing_its_functions_array_as_a_statement, (x,))
    with pytest.raises(TangentCkptError, match="may be the variable 'acc' of the function "
                                               "that defines add"):
        tc.grad(closure_writing_its_functions_array_in_a_comprehension)(x)


def _setter_of_an_outer_scope():
    s = 1.0

    def f(x):
        def setter():
            nonlocal s  # the s of the scope around f: Python rebinds it there
            s = 5.0
        setter()
        return np.sum(x * s)
    return f


G_SCALE = 1.0


def sets_a_global_by_a_nested_def(x):
    def setter():
        global G_SCALE
        G_SCALE = 5.0
    setter()
    return np.sum(x * G_SCALE)


@pytest.mark.parametrize("f, statement", [(_setter_of_an_outer_scope(), "nonlocal"),
                                          (sets_a_global_by_a_nested_def, "global")])
def test_a_nested_def_called_for_its_effect_is_lowered_or_refused_with_its_line(f, statement):
    """Once a bare ``TypeError: 'LocalFunction' object is not callable`` when the
    gradient ran: a ``def`` desugar left, called as a statement, was kept as an
    observer's call of an object that does not exist in the generated code."""
    with pytest.raises(TangentCkptError, match=r"test_closures.py:\d+: unsupported "
                                               f"statement: {statement}"):
        tc.grad(f)(X)


def lambda_chosen_at_run_time(x, c):
    f = (lambda v: v * 2.0) if c > 0 else (lambda v: v * 3.0)
    return np.sum(f(x))


def test_a_lambda_chosen_by_a_conditional_expression_is_refused_with_its_line():
    """``f = (lambda v: ...) if c else (lambda v: ...)`` chooses a function at run
    time, which the compiler does not follow: it was a TypeError out of the
    lowering (a function value is no operand), now a refusal naming the line."""
    with pytest.raises(TangentCkptError) as info:
        tc.grad(lambda_chosen_at_run_time)(X, 1.0)
    message = str(info.value)
    assert "test_closures.py:" in message and "chosen at run time" in message


def map_of_a_def_made_in_a_loop(x):
    s = 0.0
    for k in range(2):
        def scaled(v):
            return v * (k + 1.0)
        m = map(scaled, (x, 2.0 * x))
        a, b = m
        s = s + np.sum(a * b)
    return s


def test_a_map_desugar_cannot_write_is_refused_with_its_line():
    """A map kept as a value is the generator expression desugar writes
    (desugar/map_calls.py); one of a function that may change before the map
    calls it (a ``def`` made in a loop) is refused naming the line -- the
    lowering's map of tuples, which held it, is gone."""
    with pytest.raises(TangentCkptError) as info:
        tc.grad(map_of_a_def_made_in_a_loop)(X)
    message = str(info.value)
    assert "test_closures.py:" in message and "map()" in message


def apply_once(f, v):
    return f(v)


def partial_handed_on_in_a_comprehension(x):
    p = functools.partial(scaled, W=W, scale=2.0)
    ys = [apply_once(p, v) for v in (x, 2.0 * x)]
    return np.sum(ys[0] * ys[1])


def test_a_partial_desugar_cannot_write_is_refused_with_its_line():
    """desugar/partial_calls.py writes each partial bound once whose reads are its
    calls (of a lambda or a method too); one handed on inside a comprehension
    (which the inliner does not enter) is refused naming the line -- the
    lowering's PartialValue of a partial() call is gone (a module-level partial
    object keeps it)."""
    with pytest.raises(TangentCkptError) as info:
        tc.grad(partial_handed_on_in_a_comprehension)(X)
    message = str(info.value)
    assert "test_closures.py:" in message and "functools.partial()" in message
