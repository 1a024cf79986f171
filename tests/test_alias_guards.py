"""Run-time guards of the aliasing fence (compiler/fence/fence_guards.py,
runtime/alias_guards.py): where a write into a parameter would change another
parameter or a module-level array read afterwards if the caller gave both the
same memory, the gradient checks the pair once when it starts.  Separate arrays
get the gradient of the program as written (finite differences, taped and
checkpointed); the same array, or overlapping views of one, stop with an error
naming both names and the write's file:line."""

import os

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import assert_unchanged, check_grad
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError, TransformError

HERE = os.path.basename(__file__)
OPTIONS = [{}, {"checkpoint": True, "snapshots": 2}]
OPTION_IDS = ["taped", "checkpointed"]

RATES = np.array([0.3, -0.7, 1.1, 0.4, 0.9, -0.2])  # a module-level array


def subscript_write(W, b):
    W[1:] = W[1:] * np.tanh(b[:-1])  # WRITE
    return np.sum(W * b)


def out_write(W, b):
    np.multiply(W, np.sin(b), out=W)  # WRITE
    return np.sum(W * b ** 2)


def copyto_write(W, b):
    np.copyto(W, np.tanh(W * b))  # WRITE
    return np.sum(W * b)


def held_view(W, b):
    v = b[1:]  # a view of b, read after the write into W
    W[1:] = W[1:] * 2.0  # WRITE
    return np.sum(W[1:] * v)


def both_written(x, y):
    x *= np.cos(y)  # WRITE
    y *= 3.0
    return np.sum(x * y)


def global_read(W):
    W[0] = W[1] * W[2]  # WRITE
    return np.sum(W * RATES)


def state_in_loop(h, W, n):
    for t in range(n):
        h += np.tanh(h @ W)  # WRITE
    return np.sum(h ** 2) + np.sum(W)


def vec(n, shift=0.0):
    return np.linspace(0.2, 0.9, n) + shift


GUARDED = [
    # fn, separate arguments, wrt, arguments that share memory, written, other
    (subscript_write, lambda: (vec(6), vec(6, 0.1)), (0, 1),
     lambda: (lambda a: (a, a))(vec(6)), "W", "b"),
    (out_write, lambda: (vec(6), vec(6, 0.1)), (0, 1),
     lambda: (lambda a: (a[:6], a[2:8]))(vec(8)), "W", "b"),
    (copyto_write, lambda: (vec(6), vec(6, 0.1)), (0, 1),
     lambda: (lambda a: (a, a))(vec(6)), "W", "b"),
    (held_view, lambda: (vec(6), vec(6, 0.1)), (0, 1),
     lambda: (lambda a: (a[:6], a[4:10]))(vec(10)), "W", "b"),
    (both_written, lambda: (vec(6), vec(6, 0.1)), (0, 1),
     lambda: (lambda a: (a, a))(vec(6)), "x", "y"),
    (global_read, lambda: (vec(6),), (0,), lambda: (RATES,), "W", "RATES"),
    (state_in_loop, lambda: (vec(3), np.eye(3) * 0.3 + 0.1, 5), (0, 1),
     lambda: (lambda M: (M[0], M, 5))(np.eye(3) * 0.3 + 0.1), "h", "W"),
]
IDS = [g[0].__name__ for g in GUARDED]


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn, separate, wrt, shared, written, other", GUARDED, ids=IDS)
def test_separate_arrays_get_the_exact_gradient(fn, separate, wrt, shared, written, other,
                                                options):
    check_grad(fn, separate(), wrt=wrt, df=tc.grad(fn, wrt=wrt, **options))


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn, separate, wrt, shared, written, other", GUARDED, ids=IDS)
def test_shared_memory_is_refused_at_the_write_naming_both(fn, separate, wrt, shared,
                                                           written, other, options):
    args = shared()
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=wrt, **options)(*args)
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
    assert f"'{written}' and '{other}' share memory" in message, message
    assert_unchanged(before, args)


def test_the_arguments_of_a_shared_call_really_overlap():
    """The cases above are not vacuous: each shared call's arrays share memory,
    and NumPy, running the function on them, computes another value than on
    separate copies (the program the gradient differentiates)."""
    for fn, _, _, shared, _, _ in GUARDED:
        args = shared()
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        pair = arrays if len(arrays) == 2 else [arrays[0], RATES]
        assert np.shares_memory(*pair), fn.__name__
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        if fn is global_read:
            continue  # running it on RATES itself would change the module's array
        assert not np.isclose(fn(*args), fn(*copies)), fn.__name__


def test_views_of_one_array_that_do_not_overlap_run_the_fast_path():
    a = vec(12)
    W, b = a[:6], a[6:]
    df = tc.grad(subscript_write, wrt=(0, 1))
    check_grad(subscript_write, (W, b), wrt=(0, 1), df=df)


def test_the_guard_is_checked_once_at_entry_not_in_each_step():
    source = tc.grad(state_in_loop, wrt=(0, 1), checkpoint=True, snapshots=2).source
    steps, main = source.rsplit("\ndef ", 1)
    assert "distinct_arrays" not in steps
    guards = [line.strip() for line in main.splitlines() if "distinct_arrays" in line]
    assert guards == ["observed = rt.distinct_arrays(h, W, names=('h', 'W'), "
                      f"line={line_of(state_in_loop, '# WRITE')})"]


def rebound_before_the_write(W, b):
    b = b * 2.0  # a new array: the write below cannot reach it
    W[0] = 1.0
    return np.sum(W * b)


def read_only_before_the_write(W, b):
    s = np.sum(b ** 2)
    W[0] = 1.0
    return np.sum(W) * s


@pytest.mark.parametrize("fn", [rebound_before_the_write, read_only_before_the_write])
def test_no_guard_where_the_write_cannot_change_what_is_read(fn):
    df = tc.grad(fn, wrt=(0, 1))
    assert "distinct_arrays" not in df.source
    a = vec(4)
    same = df(a, a)  # the same array twice: NumPy computes what the gradient follows
    for g, e in zip(same, df(a.copy(), a.copy())):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_forward_mode_is_guarded_too():
    a = vec(6)
    jvp = tc.jvp(out_write, wrt=0)
    jvp(vec(6), vec(6, 0.1), np.ones(6))
    with pytest.raises(TransformError, match="'W' and 'b' share memory"):
        jvp(a, a, np.ones(6))


def test_the_runtime_guard_alone_names_both_and_the_line():
    """Generated source shipped with the runtime alone: the guard's error is a
    TangentCkptError that names both arrays and the write's line by itself."""
    a = np.zeros(4)
    tc.runtime.distinct_arrays(a[:2], a[2:], names=("W", "b"), line=7)
    tc.runtime.distinct_arrays(a, 0.5, names=("W", "dt"), line=7)
    with pytest.raises(TangentCkptError, match=r"'W' and 'b' share memory.*at line 7"):
        tc.runtime.distinct_arrays(a[:3], a[2:], names=("W", "b"), line=7)
    with pytest.raises(TangentCkptError, match="'W' and 'b'"):
        tc.runtime.distinct_arrays(a, a, names=("W", "b"), line=7)


# --- a helper given one variable for a parameter it writes and one it reads after ---
def _advance(u, f):
    u += np.sin(f) * 0.1
    u *= np.cos(f)


def helper_given_one_array_twice(x, n):
    y = x * 1.0
    for t in range(n):
        _advance(y, y)  # CALL
    return np.sum(y ** 2)


def helper_given_two_arrays(x, n):
    y = x * 1.0
    z = x * 2.0
    for t in range(n):
        _advance(y, z)
    return np.sum(y ** 2) + np.sum(z)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_helper_given_one_variable_for_both_reads_its_own_write(options):
    """Once a silent wrong gradient (the inlined helper read the caller's 'y' as it
    was before its own write), then refused at the call; desugar now binds both
    parameters to 'y' as Python does (``u = y; f = y``), so ``u *= np.cos(f)``
    reads the array ``u += ...`` wrote."""
    check_grad(helper_given_one_array_twice, (vec(4), 3),
               df=tc.grad(helper_given_one_array_twice, **options))


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_helper_given_two_arrays_gets_the_exact_gradient(options):
    check_grad(helper_given_two_arrays, (vec(4), 3),
               df=tc.grad(helper_given_two_arrays, **options))


# --- a helper that writes into its parameter, given a subscript of an array --------
def _bump(u):
    u += 0.5 * u * u
    return u * 2.0


def element_of_a_vector(x, n):
    y = x * 1.0
    s = 0.0
    for t in range(n):
        r = _bump(y[0])  # a number: += makes a new one, y is unchanged
        s = s + r
    return s + np.sum(y ** 2)


def fancy_index_copy(x, n):
    y = x * 1.0
    s = 0.0
    for t in range(n):
        r = _bump(y[[0, 2]])  # a copy: the write cannot reach y
        s = s + np.sum(r)
    return s + np.sum(y ** 2)


def row_of_a_matrix(X, n):
    Y = X * 1.0
    s = 0.0
    for t in range(n):
        r = _bump(Y[0])  # CALL: a view of Y, which the write changes
        s = s + np.sum(r)
    return s + np.sum(Y ** 2)


def slice_of_a_vector(x):
    y = x * 1.0
    r = _bump(y[1:])  # CALL
    return np.sum(y ** 2) + np.sum(r)


def item_of_a_list(x):
    ys = [x * 1.0, x * 2.0]
    r = _bump(ys[0])  # CALL: the array the list holds
    return np.sum(ys[0] ** 2) + np.sum(r)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn", [element_of_a_vector, fancy_index_copy])
def test_a_helper_writing_an_argument_that_is_not_a_view_is_exact(fn, options):
    check_grad(fn, (vec(4), 3), df=tc.grad(fn, **options))


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn, args", [
    (row_of_a_matrix, (np.full((2, 3), 0.3), 2)),
    (slice_of_a_vector, (vec(4),)),
], ids=["row_of_a_matrix", "slice_of_a_vector"])
def test_a_helper_writing_through_a_view_argument_writes_the_callers_array(fn, args, options):
    """Once a silent wrong gradient (the inliner wrote into its own copy of the
    argument, and the caller's array kept its old values), then refused at the
    call; inlined by desugar, the parameter is the view itself, whose write the
    view pass carries to the caller's array: exact."""
    check_grad(fn, args, df=tc.grad(fn, **options))


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_helper_writing_into_an_item_of_a_list_is_refused_at_its_write(options):
    with pytest.raises(TransformError) as info:
        tc.grad(item_of_a_list, **options)(vec(4))
    message = str(info.value)
    assert f"{HERE}:{line_of(_bump, 'u +=')}:" in message, message
    assert f"(in _bump(), called at line {line_of(item_of_a_list, '# CALL')})" in message, \
        message
    assert "a write into 'u' may also change 'ys'" in message, message


def _advance_front(u, f):
    u[:3] += np.sin(f) * 0.1
    u[:3] *= np.cos(f)


def helper_given_an_array_and_its_view(x, n):
    y = x * 1.0
    z = y[1:]
    for t in range(n):
        _advance_front(y, z)
    return np.sum(y ** 2)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_helper_given_two_names_of_shared_memory_is_exact(options):
    """Once a silent wrong gradient (inside the inlined helper 'f' kept the values
    'y' had before the helper's write into 'u'), then stopped at the call; inlined
    by desugar, 'f' is the caller's view 'z' of 'y', which the view pass follows."""
    check_grad(helper_given_an_array_and_its_view, (vec(4), 2),
               df=tc.grad(helper_given_an_array_and_its_view, **options))


# a helper given a lambda: desugar binds the lambda where the loop runs and
# inlines it (it was a call the lowering inlined, stopped at the call)
def _advance_front_shaped(u, f, shaped):
    u[:3] += shaped(np.sin(f)) * 0.1
    u[:3] *= np.cos(f)


def helper_given_a_lambda_an_array_and_its_view(x, n):
    y = x * 1.0
    z = y[1:]
    for t in range(n):
        _advance_front_shaped(y, z, lambda v: v)
    return np.sum(y ** 2)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_helper_given_a_lambda_and_shared_memory_is_exact(options):
    check_grad(helper_given_a_lambda_an_array_and_its_view, (vec(4), 2),
               df=tc.grad(helper_given_a_lambda_an_array_and_its_view, **options))


# a helper with an array default it only reads: desugar inlines it, the default
# read as the object it is (it was a call the lowering inlined, stopped at the call)
def _advance_front_total(u, f, scale=np.array([0.1])):
    u[:3] += np.sin(f) * scale[0]
    u[:3] *= np.cos(f)


def helper_with_an_array_default_given_an_array_and_its_view(x, n):
    y = x * 1.0
    z = y[1:]
    for t in range(n):
        _advance_front_total(y, z)
    return np.sum(y ** 2)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_helper_with_an_array_default_given_shared_memory_is_exact(options):
    """Was stopped at the call by the lowering's guard (the helper's array default
    kept the call out of desugar); now inlined, 'f' is the caller's view 'z' of
    'y', which the view pass follows: Python's value, and its gradient."""
    f = helper_with_an_array_default_given_an_array_and_its_view
    assert "as the lowering inlines it" not in desugared(f)
    np.testing.assert_allclose(tc.value_and_grad(f, **options)(vec(4), 2)[0], f(vec(4), 2),
                               rtol=1e-12)
    check_grad(f, (vec(4), 2), df=tc.grad(f, **options))


# a helper with a dict default stays a call for the lowering, which checks the sharing
def _advance_front_keyed(u, f, scale={"s": 0.1}):
    u[:3] += np.sin(f) * scale["s"]
    u[:3] *= np.cos(f)


def helper_with_a_dict_default_given_an_array_and_its_view(x, n):
    y = x * 1.0
    z = y[1:]
    for t in range(n):
        _advance_front_keyed(y, z)  # CALL
    return np.sum(y ** 2)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_helper_the_lowering_inlines_given_shared_memory_is_stopped_at_the_call(options):
    with pytest.raises(TransformError) as info:
        tc.grad(helper_with_a_dict_default_given_an_array_and_its_view, **options)(vec(4), 2)
    message = str(info.value)
    line = line_of(helper_with_a_dict_default_given_an_array_and_its_view, "# CALL")
    assert f"{HERE}:{line}:" in message, message
    assert "_advance_front_keyed() is given arrays that share memory for its " \
        "parameters 'u' and 'f'" in message, message


def test_the_call_guard_reads_as_one_line_in_the_step():
    source = tc.grad(helper_with_a_dict_default_given_an_array_and_its_view, checkpoint=True,
                     snapshots=2).source
    step = source.split("\ndef ")[0]
    assert "observed = rt.distinct_arrays(y, z, names=('u', 'f'), " \
        f"line={line_of(_advance_front_keyed, 'u[:3] +=')}, " \
        "function='_advance_front_keyed')" in step, step


def test_no_call_guard_for_new_arrays_the_fence_proved_separate():
    """y = x * 1.0 and z = x * 2.0 are new arrays: the helper's call needs no check."""
    for options in OPTIONS:
        assert "distinct_arrays" not in tc.grad(helper_given_two_arrays, **options).source


class _Stepper:
    def __init__(self, k):
        self.k = k

    def bump(self, u):
        u += self.k * u * u
        return u * 2.0


def method_given_a_slice(x):
    stepper = _Stepper(0.5)
    y = x * 1.0
    r = stepper.bump(y[1:])  # CALL
    return np.sum(y ** 2) + np.sum(r)


def method_given_an_element(x):
    stepper = _Stepper(0.5)
    y = x * 1.0
    r = stepper.bump(y[1])
    return np.sum(y ** 2) + r


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_method_writing_through_a_view_argument_writes_the_callers_array(options):
    """``stepper.bump(y[1:])`` adding into its parameter: stopped at the call while
    the lowering inlined methods ("bump() writes into its parameter 'u'"); desugar
    now inlines it with ``u`` the caller's view, which the view pass follows."""
    check_grad(method_given_a_slice, (vec(4),), df=tc.grad(method_given_a_slice, **options))


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_method_given_a_number_is_exact(options):
    check_grad(method_given_an_element, (vec(4),), df=tc.grad(method_given_an_element, **options))


def local_function_given_a_slice(x):
    def bump(u):
        u += 0.5 * u * u
        return u * 2.0
    y = x * 1.0
    r = bump(y[1:])
    return np.sum(y ** 2) + np.sum(r)


def local_function_given_an_element(x):
    def bump(u):
        u += 0.5 * u * u
        return u * 2.0
    y = x * 1.0
    r = bump(y[2])
    return np.sum(y ** 2) + r


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_local_function_writing_through_a_view_argument_writes_the_callers_array(options):
    """Refused at the call before desugar inlined local functions: the parameter
    is now the slice itself, whose write the view pass carries to 'y'."""
    check_grad(local_function_given_a_slice, (vec(4),),
               df=tc.grad(local_function_given_a_slice, **options))


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_local_function_given_a_number_is_exact(options):
    check_grad(local_function_given_an_element, (vec(4),),
               df=tc.grad(local_function_given_an_element, **options))


# --- a write into what a black box returned (a function with a registered adjoint,
# whose body the compiler never reads) while its argument is read later ------------
def _squash(x):
    return np.tanh(x) * 2.0  # a new array


def _passthrough(x):
    return x  # its argument itself


tc.register_adjoint(_squash, lambda g, ans, x: (g * (2.0 - ans * ans / 2.0),))
tc.register_adjoint(_passthrough, lambda g, ans, x: (g,))


def black_box_in_a_loop(x, n):
    h = x * 1.0
    for t in range(n):
        w = _squash(h)
        w *= 0.5  # WRITE
        h = h * 0.9 + w
    return np.sum(h ** 2)


def black_box_passing_through(x, n):
    h = x * 1.0
    for t in range(n):
        w = _passthrough(h)
        w *= 0.5  # WRITE
        h = h * 0.9 + w
    return np.sum(h ** 2)


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_black_box_result_written_is_exact_when_it_is_new(options):
    df = tc.grad(black_box_in_a_loop, **options)
    check_grad(black_box_in_a_loop, (vec(4), 3), df=df)
    guard = "rt.distinct_arrays(w, h, names=('w', 'h'), " \
        f"line={line_of(black_box_in_a_loop, '# WRITE')}, black_box=True)"
    assert guard in df.source, df.source


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_a_black_box_returning_its_argument_is_stopped_at_the_write(options):
    with pytest.raises(TransformError) as info:
        tc.grad(black_box_passing_through, **options)(vec(4), 3)
    message = str(info.value)
    assert f"{HERE}:{line_of(black_box_passing_through, '# WRITE')}:" in message, message
    assert "'w' and 'h' share memory" in message, message
    assert "registered adjoint" in message, message


# A list, tuple or dict argument whose items are updated in place (ws[k] -= v): the
# caller's container may hold one array at two places, or an array also given for
# another parameter; each place is followed as an array of its own, so such calls
# would get the gradient of another program (a wrong gradient before these guards).

def list_items_updated(ws, g):
    for i in range(len(ws)):
        ws[i] -= 0.1 * g  # WRITE
    return np.sum(ws[0] ** 2) + np.sum(ws[1] ** 3)


def list_items_updated_by_position(ws, g):
    ws[0] -= 0.1 * g  # WRITE
    ws[1] *= g
    return np.sum(ws[0] ** 2) + np.sum(ws[1] ** 3) + np.sum(g ** 3)


def dict_item_updated(ps, g):
    ps["W"] -= 0.1 * g  # WRITE
    return np.sum(ps["W"] ** 2) + np.sum(ps["b"] ** 3)


ITEM_UPDATES = [
    # fn, the container given separate arrays, the same one at two places
    (list_items_updated, lambda a: [a, a.copy() + 0.3], lambda a: [a, a]),
    (list_items_updated, lambda a: [a, a.copy() + 0.3], lambda a: [a, a[::-1]]),
    (list_items_updated_by_position, lambda a: [a, a.copy() + 0.3], lambda a: [a, a]),
    (dict_item_updated, lambda a: {"W": a, "b": a.copy() + 0.3}, lambda a: {"W": a, "b": a}),
]
ITEM_IDS = ["list", "views", "by-position", "dict"]


@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn, separate, shared", ITEM_UPDATES, ids=ITEM_IDS)
def test_items_updated_in_place_of_separate_arrays_get_the_exact_gradient(
        fn, separate, shared, options):
    check_grad(fn, (separate(vec(3)), vec(3, 0.5)), wrt=(1,),
               df=tc.grad(fn, wrt=(1,), **options))


@pytest.mark.parametrize("wrt", [(1,), (0, 1)], ids=["wrt-g", "wrt-both"])
@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
@pytest.mark.parametrize("fn, separate, shared", ITEM_UPDATES, ids=ITEM_IDS)
def test_one_array_at_two_places_of_a_container_updated_in_place_is_refused(
        fn, separate, shared, options, wrt):
    container = shared(vec(3))
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=wrt, **options)(container, vec(3, 0.5))
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
    assert "holds the same array at two places" in message, message


def test_one_array_at_two_places_really_changes_the_value():
    """Not vacuous: Python, running the function on a container holding one array
    twice, computes another value than on copies (what the gradient follows)."""
    for fn, _, shared in ITEM_UPDATES:
        container = shared(vec(3))
        copies = type(container)({k: v.copy() for k, v in container.items()}) \
            if isinstance(container, dict) else type(container)(v.copy() for v in container)
        assert not np.isclose(fn(container, vec(3, 0.5)), fn(copies, vec(3, 0.5)))


@pytest.mark.parametrize("wrt", [(1,), (0, 1)], ids=["wrt-g", "wrt-both"])
@pytest.mark.parametrize("options", OPTIONS, ids=OPTION_IDS)
def test_an_item_that_is_also_another_argument_is_refused(options, wrt):
    g = vec(3, 0.5)
    with pytest.raises(TransformError) as info:
        tc.grad(list_items_updated_by_position, wrt=wrt, **options)([g, vec(3)], g)
    message = str(info.value)
    line = line_of(list_items_updated_by_position, "# WRITE")
    assert f"{HERE}:{line}:" in message, message
    assert "'ws' and 'g' share memory" in message, message


def test_the_runtime_item_guard_passes_arrays_numbers_and_separate_items():
    from tangent_ckpt.runtime.alias_guards import distinct_arrays, distinct_items
    a = vec(4)
    for fine in (a, 3.0, [a[:2], a[2:]], {"p": a, "q": [a.copy()]}, (1.0, 1.0)):
        distinct_items(fine, "ws")
    for shared in ([a, a], [a[:3], a[2:]], {"p": [a], "q": (a.T,)}):
        with pytest.raises(TangentCkptError, match="'ws' holds the same array"):
            distinct_items(shared, "ws", line=4)
    distinct_arrays([a[:2]], a[2:], names=("ws", "g"))
    with pytest.raises(TangentCkptError, match="'ws' and 'g' share memory"):
        distinct_arrays({"k": [a[1:]]}, a, names=("ws", "g"))


def element_of_an_array_updated(x, y):
    x[0] += y[1]  # WRITE
    return np.sum(x[0] * y) + np.sum(x[1])


def test_no_item_guard_where_the_call_gives_an_array():
    """An array's rows are no objects of their own: ``x[0] += v`` on an array
    argument reads as before; a list given for it is checked."""
    df = tc.grad(element_of_an_array_updated, wrt=(1,))
    check_grad(element_of_an_array_updated, (vec(3), vec(3, 0.5)), wrt=(1,), df=df)
    assert "distinct_items" not in df.source, df.source
    df([vec(3), vec(3)], vec(3, 0.5))
    assert "rt.distinct_items(x, 'x', line=" in df.source, df.source
