"""The public API: grad, value_and_grad, source, the compile cache, register_adjoint,
the callables tc.grad accepts, its options and the output adjoint."""

import functools
import inspect
import math
import pickle

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, numeric_grad

rng = np.random.default_rng(1)


def loss(x, W, b):
    return np.sum(np.tanh(W @ x + b) ** 2)


def vector_out(x, W):
    return np.sin(W @ x)


def test_several_wrt_in_wrt_order():
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    db, dx = tc.grad(loss, wrt=(2, 0))(x, W, b)
    assert db.shape == b.shape and dx.shape == x.shape
    check_grad(loss, (x, W, b), wrt=(2, 0))
    check_grad(loss, (x, W, b), wrt=(0, 1, 2))


def test_an_int_wrt_gives_the_gradient_and_a_tuple_a_tuple_as_jax_argnums():
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    expected = numeric_grad(loss, (x, W, b), (1,))[0]
    for options in ({}, {"checkpoint": True}):
        for wrt in (1, np.int64(1)):
            dW = tc.grad(loss, wrt=wrt, **options)(x, W, b)
            assert isinstance(dW, np.ndarray)
            np.testing.assert_allclose(dW, expected, rtol=1e-6, atol=1e-8)
            assert isinstance(tc.value_and_grad(loss, wrt=wrt, **options)(x, W, b)[1],
                              np.ndarray)
        for wrt in ((1,), [1]):
            got = tc.grad(loss, wrt=wrt, **options)(x, W, b)
            assert type(got) is tuple and len(got) == 1
            np.testing.assert_allclose(got[0], expected, rtol=1e-6, atol=1e-8)
            value, got = tc.value_and_grad(loss, wrt=wrt, **options)(x, W, b)
            assert type(got) is tuple and len(got) == 1
        got = tc.grad_with_checkpointing(loss, wrt=(1,))(x, W, b)
        assert type(got) is tuple and len(got) == 1
    assert isinstance(tc.grad(loss)(x, W, b), np.ndarray)  # the default: wrt=0
    assert repr(tc.grad(loss, wrt=(1,))) == "<gradient of loss wrt (1,)>"
    for wrt, kind in ((1, np.ndarray), ((1,), tuple)):  # a pickled gradient keeps its wrt
        for made in (tc.grad(loss, wrt=wrt), tc.hvp(loss, wrt=wrt)):
            assert made.wrt == wrt
            loaded = pickle.loads(pickle.dumps(made))
            assert loaded.wrt == wrt
        assert type(pickle.loads(pickle.dumps(tc.grad(loss, wrt=wrt)))(x, W, b)) is kind


def test_an_int_wrt_takes_and_gives_one_tangent_a_tuple_a_tuple():
    """jvp and hvp follow grad: one tangent for an int wrt, a tuple for a tuple
    (``tc.hvp(f, wrt=(0,))(x, W, b, (v,))`` failed with 'the tangent of 'x' has
    shape (1, 3)')."""
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    v = rng.standard_normal(3)
    hv = tc.hvp(loss)(x, W, b, v)
    assert isinstance(hv, np.ndarray) and hv.shape == x.shape
    (hv1,) = tc.hvp(loss, wrt=(0,))(x, W, b, (v,))
    np.testing.assert_array_equal(hv1, hv)
    H = tc.hessian(loss)(x, W, b)
    np.testing.assert_allclose(H @ v, hv, rtol=1e-12, atol=1e-14)
    ((H1,),) = tc.hessian(loss, wrt=(0,))(x, W, b)
    np.testing.assert_array_equal(H1, H)
    value, jv = tc.jvp(loss)(x, W, b, v)
    assert tc.jvp(loss, wrt=(0,))(x, W, b, (v,)) == (value, jv)
    assert jv == pytest.approx(np.dot(tc.grad(loss)(x, W, b), v), rel=1e-12)
    with pytest.raises(TypeError, match=r"wrt=\(0,\) is a tuple, so the tangents are a tuple"):
        tc.hvp(loss, wrt=(0,))(x, W, b, v)
    with pytest.raises(TypeError, match="2 tangents expected"):
        tc.jvp(loss, wrt=(0, 1))(x, W, b, (v,))
    for wrt in (0, (0,), (0, 1)):
        assert tc.check_grad(loss, (x, W, b), wrt=wrt,
                             modes=("grad", "checkpoint", "jvp", "hvp")).ok


def test_output_adjoint_argument():
    x, W, seed = rng.standard_normal(3), rng.standard_normal((4, 3)), rng.standard_normal(4)
    df = tc.grad(vector_out, wrt=0)
    positional = df(x, W, seed)
    keyword = df(x, W, bvector_out=seed)
    np.testing.assert_allclose(positional, keyword)
    check_grad(vector_out, (x, W), seed=seed)
    np.testing.assert_allclose(df(x, W), df(x, W, np.ones(4)))  # default: ones


def test_value_and_grad():
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    value, dx = tc.value_and_grad(loss)(x, W, b)
    assert value == pytest.approx(loss(x, W, b))
    np.testing.assert_allclose(dx, tc.grad(loss)(x, W, b))
    value, (dx2, dW) = tc.value_and_grad(loss, wrt=(0, 1))(x, W, b)
    np.testing.assert_allclose(dx2, dx)
    assert dW.shape == W.shape


def test_source_function_and_attribute():
    df = tc.grad(loss, wrt=1)
    assert tc.source(df) == df.source
    assert "def dloss(" in df.source
    with pytest.raises(TypeError):
        tc.source(loss)


def test_repeated_grad_reuses_the_compiled_function():
    first = tc.grad(loss, wrt=(0, 1))
    second = tc.grad(loss, wrt=(0, 1))
    assert first.compile() is second.compile()
    assert first.compile() is not tc.grad(loss, wrt=0).compile()


def test_float32_gradient_keeps_dtype():
    x = rng.standard_normal(3).astype(np.float32)
    W = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    dx, dW = tc.grad(loss, wrt=(0, 1))(x, W, b)
    assert dx.dtype == np.float32 and dW.dtype == np.float32
    ex, eW = tc.grad(loss, wrt=(0, 1))(x.astype(float), W.astype(float), b.astype(float))
    np.testing.assert_allclose(dx, ex, rtol=1e-4, atol=1e-5)


# --- user adjoints for black boxes ---------------------------------------------------
def blackbox(x, w):
    """A Python loop the compiler should not see (think: a call into scipy)."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i]) * w
    return out


def blackbox_adjoint(g, ans, x, w):
    return g * np.cos(x) * w, np.sum(g * np.sin(x))


def scale(x, k):
    return x * k


tc.register_adjoint(blackbox, blackbox_adjoint)
tc.register_adjoint(scale, lambda g, ans, x, k: (g * k, None))


def uses_blackbox(x, w, n):
    for t in range(n):
        x = blackbox(x, w)
    return np.sum(scale(x, 3.0) ** 2)


def test_register_adjoint_for_a_black_box():
    check_grad(uses_blackbox, (rng.standard_normal(3), 0.8, 3), wrt=(0, 1))
    source = tc.grad(uses_blackbox, wrt=(0, 1)).source
    assert "blackbox_adjoint(" in source and "for i in range" not in source


# --- what tc.grad accepts ---------------------------------------------------------------
class Model:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, x, W):
        return np.sum(np.tanh(W @ x) ** 2)

    def __call__(self, x, W):
        return np.sum(np.sin(W @ x))


def test_bound_method_wrt_its_explicit_arguments():
    model = Model(2.0)
    x, W = rng.standard_normal(3), rng.standard_normal((2, 3))
    dx, dW = tc.grad(model.loss, wrt=(0, 1))(x, W)
    ex, eW = check_grad(model.loss, (x, W), wrt=(0, 1))
    np.testing.assert_allclose(dx, ex)
    np.testing.assert_allclose(dW, eW)
    assert repr(tc.grad(model.loss, wrt=1)) == "<gradient of Model.loss wrt 1>"


def test_bound_method_of_two_instances_share_the_compiled_gradient():
    first, second = tc.grad(Model(1.0).loss), tc.grad(Model(2.0).loss)
    assert first.compile() is second.compile()


def test_callable_object_is_differentiated_through_its_call():
    x, W = rng.standard_normal(3), rng.standard_normal((2, 3))
    check_grad(Model(1.0), (x, W), wrt=(0, 1))
    assert "gradient of Model object wrt x" in tc.grad(Model(1.0)).source.header


def test_partial_bound_arguments_are_constants():
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    by_position = functools.partial(loss, x)            # loss(W, b) with x fixed
    dW, db = tc.grad(by_position, wrt=(0, 1))(W, b)
    eW, eb = tc.grad(loss, wrt=(1, 2))(x, W, b)
    np.testing.assert_allclose(dW, eW)
    np.testing.assert_allclose(db, eb)
    by_keyword = functools.partial(loss, b=b)          # loss(x, W) with b fixed
    np.testing.assert_allclose(tc.grad(by_keyword, wrt=1)(x, W), eW)
    with pytest.raises(tc.WrtError, match="'b' of partial\\(loss\\).*bound arguments"):
        tc.grad(by_keyword, wrt=2)


def test_partial_takes_a_trailing_output_adjoint():
    x, W, seed = rng.standard_normal(3), rng.standard_normal((4, 3)), rng.standard_normal(4)
    by_keyword = functools.partial(vector_out, W=W)     # vector_out(x) with W fixed
    np.testing.assert_allclose(tc.grad(by_keyword)(x, seed), tc.grad(vector_out)(x, W, seed))


def test_two_lambdas_on_one_line_each_get_their_own_gradient():
    square = lambda x: np.sum(x ** 2); cube = lambda x: np.sum(x ** 3)  # noqa: E702,E731
    x = rng.standard_normal(4)
    np.testing.assert_allclose(tc.grad(square)(x), 2 * x)
    np.testing.assert_allclose(tc.grad(cube)(x), 3 * x ** 2)
    check_grad(cube, (x,))


def test_lambda_written_inside_the_grad_call():
    x = rng.standard_normal(4)
    df = tc.grad(
        lambda a, b: np.sum(np.sin(a) * b),
        wrt=(0, 1))
    da, db = df(x, 2.0)
    np.testing.assert_allclose(da, np.cos(x) * 2.0)
    assert db == pytest.approx(np.sum(np.sin(x)))


# --- options ---------------------------------------------------------------------------
@pytest.mark.parametrize("api, typo, meant", [
    (tc.grad, "snapshot", "snapshots"), (tc.value_and_grad, "memorybudget", "memory_budget"),
    (tc.grad_with_checkpointing, "shedule", "schedule"), (tc.grad, "checkpointing", "checkpoint"),
])
def test_misspelt_option_names_the_closest_valid_one(api, typo, meant):
    with pytest.raises(tc.OptionError, match=f"no option '{typo}': did you mean '{meant}'"):
        api(loss, **{typo: 3})


@pytest.mark.parametrize("api", [tc.grad, tc.value_and_grad, tc.grad_with_checkpointing,
                                 tc.jvp, tc.hvp])
def test_misspelt_option_is_a_type_error_before_anything_compiles(api):
    with pytest.raises(TypeError, match="no option 'snapshot': did you mean 'snapshots'"
                       if api is not tc.jvp else "no option 'snapshot'"):
        api(loss, snapshot=3)


def test_the_signatures_have_no_catch_all_keywords():
    """A **kwargs catch-all would hide a misspelt option from type checkers."""
    for api in (tc.grad, tc.value_and_grad, tc.grad_with_checkpointing, tc.jvp, tc.hvp):
        kinds = [p.kind for p in inspect.signature(api).parameters.values()]
        assert inspect.Parameter.VAR_KEYWORD not in kinds, api.__name__


def loop_loss(x, n):
    for t in range(n):
        x = np.sin(x) * 0.9
    return np.sum(x)


@pytest.mark.parametrize("options", [{"snapshots": 3}, {"memory_budget": "1MB"},
                                     {"schedule": "online"}, {"verify": True},
                                     {"snapshots": 2, "min_steps": 4}])
def test_checkpoint_only_options_without_checkpointing_are_refused(options):
    df = tc.grad(loop_loss, **options)
    names = ", ".join(f"{k}=" for k in options)
    with pytest.raises(tc.OptionError, match=f"{names} only acts? on checkpointed loops.*"
                                             "checkpoint=True"):
        df(np.ones(3), 4)
    with pytest.raises(tc.OptionError):
        tc.hvp(loop_loss, **options)(np.ones(3), 4, np.ones(3))


def test_an_explicit_checkpoint_false_keeps_the_options_of_a_toggled_call():
    x = np.linspace(0.1, 1.0, 3)
    for flag in (False, True):
        g = tc.grad(loop_loss, checkpoint=flag, snapshots=2)(x, 4)
        np.testing.assert_allclose(g, numeric_grad(loop_loss, (x, 4))[0], rtol=1e-6)


def marked_loop_loss(x, n):
    final, _ = tc.checkpointed_loop(np.sin, x, n, 2)
    return np.sum(final)


def test_checkpoint_only_options_act_on_a_loop_the_function_marks():
    x = np.linspace(0.1, 1.0, 3)
    g = tc.grad(marked_loop_loss, schedule="uniform", verify=True)(x, 5)
    np.testing.assert_allclose(g, tc.grad(marked_loop_loss)(x, 5), rtol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(marked_loop_loss, (x, 5))[0], rtol=1e-6)


def test_unknown_option_lists_the_valid_ones():
    with pytest.raises(tc.TangentCkptError, match="valid options: checkpoint, snapshots"):
        tc.grad(loss, zzz=1)


def test_options_are_documented_keyword_parameters():
    for api in (tc.grad, tc.value_and_grad, tc.grad_with_checkpointing):
        keywords = [name for name, p in inspect.signature(api).parameters.items()
                    if p.kind == inspect.Parameter.KEYWORD_ONLY]
        assert {"snapshots", "memory_budget", "schedule", "flat", "source",
                "progress"} <= set(keywords)
        for name in keywords:
            assert f"``{name}``" in api.__doc__, (api.__name__, name)


# --- the output adjoint ------------------------------------------------------------------
def test_output_adjoint_of_the_wrong_shape_names_both_shapes():
    x, W, b = rng.standard_normal(3), rng.standard_normal((2, 3)), rng.standard_normal(2)
    with pytest.raises(tc.OutputAdjointError, match=r"shape \(2, 3\).*output has shape \(\)"):
        tc.grad(loss)(x, W, b, np.ones((2, 3)))
    with pytest.raises(tc.OutputAdjointError, match=r"shape \(3,\).*output has shape \(4,\)"):
        tc.grad(vector_out)(x, rng.standard_normal((4, 3)), np.ones(3))
    with pytest.raises(tc.OutputAdjointError, match=r"shape \(4, 1\).*shape \(4,\)"):
        tc.value_and_grad(vector_out)(x, rng.standard_normal((4, 3)), np.ones((4, 1)))


def test_output_adjoint_of_the_right_shape_or_a_scalar_is_used():
    x, W, seed = rng.standard_normal(3), rng.standard_normal((4, 3)), rng.standard_normal(4)
    value, dx = tc.value_and_grad(vector_out)(x, W, seed)
    np.testing.assert_allclose(value, vector_out(x, W))
    np.testing.assert_allclose(dx, tc.grad(vector_out)(x, W, seed))
    np.testing.assert_allclose(tc.grad(vector_out)(x, W, np.float64(2.0)),
                               2 * tc.grad(vector_out)(x, W))


def test_library_callables_and_gradients_are_not_unwrapped():
    with pytest.raises(tc.SourceUnavailableError, match="register_adjoint"):
        tc.grad(np.vectorize(np.sin)).compile()
    with pytest.raises(tc.TangentCkptError, match="already a gradient"):
        tc.grad(tc.grad(loss))


def tiny(x):
    return np.sum(x * x)


def test_the_compile_cache_keeps_a_bounded_number_of_gradients_per_function():
    from tangent_ckpt import api
    x = np.ones(2)
    for k in range(api.PER_FUNCTION + 8):   # each min_steps is another compile
        np.testing.assert_allclose(tc.grad(tiny, checkpoint=True, min_steps=k)(x), 2 * x)
    assert len(api._CACHE[tiny]) == api.PER_FUNCTION
    newest = tc.grad(tiny, checkpoint=True, min_steps=api.PER_FUNCTION + 7)
    assert newest.compile() is tc.grad(tiny, checkpoint=True,
                                       min_steps=api.PER_FUNCTION + 7).compile()


# --- outputs: one float or array; (output, aux) with has_aux ------------------------------
from gradcheck import numeric_grad  # noqa: E402


def returns_pair(x, W):
    loss = np.sum(np.tanh(W @ x) ** 2)
    return loss, W @ x


def returns_list(x):
    return [np.sum(x), np.sum(x ** 2)]


def returns_text(x):
    return "done"


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("api", [tc.grad, tc.value_and_grad, tc.grad_with_checkpointing])
@pytest.mark.parametrize("fn, what", [(returns_pair, "tuple of 2 items"),
                                      (returns_list, "list of 2 items"),
                                      (returns_text, "'done'")])
def test_a_tuple_list_or_string_output_is_refused_at_the_return_line(api, fn, what):
    args = (rng.standard_normal(3), rng.standard_normal((2, 3)))
    args = args[:len(inspect.signature(fn).parameters)]
    with pytest.raises(tc.TangentCkptError) as info:
        api(fn)(*args)
    message = str(info.value)
    assert what in message and "has_aux=True" in message
    assert f"test_api.py:{_line_of(fn, '    return ')}" in message


def _check_pair_gradient(fn, args, wrt, got):
    got = (got,) if isinstance(wrt, int) else got
    wrt = (wrt,) if isinstance(wrt, int) else wrt
    expected = numeric_grad(lambda *a: fn(*a)[0], list(args), wrt)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)


def _assert_same_value(got, expected):
    """The aux value comes back as computed: same containers, same leaves."""
    assert type(got) is type(expected)
    if isinstance(expected, dict):
        assert list(got) == list(expected)
        for k in expected:
            _assert_same_value(got[k], expected[k])
    elif isinstance(expected, (list, tuple)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_same_value(g, e)
    else:
        np.testing.assert_array_equal(got, expected)


def trajectory_returned(x, n):
    traj = np.zeros((n, 2))
    for t in range(n):
        x = np.sin(x)
        traj[t] = x
    return traj


def trajectory_as_aux(x, n):
    traj = np.zeros((n, 2))
    for t in range(n):
        x = np.sin(x)
        traj[t] = x
    return np.sum(traj ** 2), {"traj": traj, "last": traj[-1], "first": traj[0, 0]}


def written_once(x, n):
    y = x * 1.0
    y[0] = y[1] * 2.0
    return np.sum(y), y[::-1]


def _leaves(value):
    return [value[k] for k in sorted(value)] if isinstance(value, dict) else [value]


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True,
                                                               "snapshots": 2}])
def test_a_returned_value_written_in_place_is_returned_as_computed(options):
    """The value of value_and_grad and an aux are the arrays the forward sweep
    wrote into; the reverse sweep puts back what each write overwrote, in the
    same memory: they came back as before the writes (a trajectory of zeros)."""
    x = np.array([1.0, 2.0])
    value, _ = tc.value_and_grad(trajectory_returned, **options)(x, 3)
    np.testing.assert_array_equal(value, trajectory_returned(x, 3))
    for f in (trajectory_as_aux, written_once):
        expected = _leaves(f(x, 3)[1])
        _, aux = tc.grad(f, has_aux=True, **options)(x, 3)
        (_, aux_too), _ = tc.value_and_grad(f, has_aux=True, **options)(x, 3)
        for got in (_leaves(aux), _leaves(aux_too)):
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                np.testing.assert_array_equal(g, e)


def test_has_aux_gives_the_gradient_of_the_output_and_the_aux_as_computed():
    x, W = rng.standard_normal(3), rng.standard_normal((2, 3))
    expected_value, expected_aux = returns_pair(x, W)
    g, aux = tc.grad(returns_pair, wrt=(0, 1), has_aux=True)(x, W)
    _check_pair_gradient(returns_pair, (x, W), (0, 1), g)
    _assert_same_value(aux, expected_aux)
    (value, aux), g = tc.value_and_grad(returns_pair, has_aux=True)(x, W)
    assert value == pytest.approx(expected_value)
    _assert_same_value(aux, expected_aux)
    _check_pair_gradient(returns_pair, (x, W), 0, g)


def test_has_aux_keeps_lists_tuples_dicts_strings_and_numbers_of_the_aux():
    def fn(x):
        y = np.sin(x)
        stats = {"mean": np.mean(y), "label": "sin", "parts": [y[0], (y * 2, 3)]}
        return np.sum(y ** 2), [stats, None]

    x = rng.standard_normal(4)
    g, aux = tc.grad(fn, has_aux=True)(x)
    _assert_same_value(aux, fn(x)[1])
    _check_pair_gradient(fn, (x,), 0, g)


def scan_with_aux(x, n):
    total = 0.0
    for t in range(n):
        x = np.sin(x) * 1.1 + 0.1
        total = total + np.sum(x)
    if total > 0:
        return np.sum(x ** 2), (total, x)
    return np.sum(x), (2 * total, x)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True, "snapshots": 2},
                                     {"checkpoint": True, "memory_budget": "100KB"}])
def test_has_aux_computed_in_a_loop_taped_or_checkpointed(options):
    for x in (rng.standard_normal(3), -np.ones(3) * 2):  # both returns
        expected_value, expected_aux = scan_with_aux(x, 7)
        (value, aux), g = tc.value_and_grad(scan_with_aux, has_aux=True, **options)(x, 7)
        assert value == pytest.approx(expected_value, rel=1e-12)
        _assert_same_value(tuple(np.round(a, 12) for a in aux),
                           tuple(np.round(a, 12) for a in expected_aux))
        _check_pair_gradient(scan_with_aux, (x, 7), 0, g)
        taped, _ = tc.grad(scan_with_aux, has_aux=True)(x, 7)
        np.testing.assert_allclose(g, taped, rtol=1e-12, atol=1e-14)


def test_has_aux_in_the_decorator_form_and_with_an_output_adjoint():
    @tc.grad_with_checkpointing(wrt=0, snapshots=2, has_aux=True)
    def fn(x, n):
        for t in range(n):
            x = np.tanh(x) + 0.5 * x
        return x * 2.0, {"last": x}

    x, seed = rng.standard_normal(3), rng.standard_normal(3)
    g, aux = fn(x, 5, seed)
    expected = numeric_grad(lambda x, n: fn.fn(x, n)[0], [x, 5], (0,), seed=seed)[0]
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(aux["last"], fn.fn(x, 5)[1]["last"], rtol=1e-13)
    with pytest.raises(tc.OutputAdjointError, match=r"output has shape \(3,\)"):
        fn(x, 5, np.ones(4))


def output_alone(x):
    return np.sum(x)


def three_items(x):
    return np.sum(x), x, x


def output_pair_and_aux(x):
    return (np.sum(x), x), x


@pytest.mark.parametrize("fn, what", [(output_alone, "pair"), (three_items, "pair"),
                                      (output_pair_and_aux, "tuple of 2 items")])
def test_has_aux_needs_a_pair_whose_output_is_one_value(fn, what):
    with pytest.raises(tc.TangentCkptError, match=what) as info:
        tc.grad(fn, has_aux=True)(np.ones(2))
    assert f"test_api.py:{_line_of(fn, '    return ')}" in str(info.value)


def test_has_aux_is_a_documented_option_of_every_gradient_entry_point():
    for api in (tc.grad, tc.value_and_grad, tc.grad_with_checkpointing, tc.jvp):
        assert "has_aux" in inspect.signature(api).parameters


def returns_list_built_in_a_loop(x, n):
    rows = []
    for i in range(n):
        rows.append(x * i)
    return rows


def test_a_list_built_at_run_time_as_output_is_refused_at_the_return_line():
    with pytest.raises(tc.TangentCkptError, match="list built at run time.*np.stack") as info:
        tc.grad(returns_list_built_in_a_loop)(np.ones(2), 3)
    assert f"test_api.py:{_line_of(returns_list_built_in_a_loop, '    return ')}" in \
        str(info.value)


# --- the default output adjoint of an array output: the gradient of its sum ------------
def stacked_moments(x):
    return np.stack([np.sum(x), np.sum(x ** 2)])


def scalar_plus_vector(a, v):
    return a + v * 2.0


def stacked_in_a_loop(x, n):
    for t in range(n):
        x = np.sin(x) * 1.1
    return np.stack([np.sum(x), np.sum(x ** 2)]) * 0.5


def test_stacked_output_with_the_default_adjoint():
    x = rng.standard_normal(4)
    check_grad(stacked_moments, (x,))
    check_grad(stacked_moments, (x,), seed=np.array([0.3, -2.0]))


def test_scalar_input_broadcast_to_an_array_output_sums_its_adjoint():
    # the default adjoint 1.0 reached rt.unbroadcast as a scalar and came back 1.0, not 3.0
    check_grad(scalar_plus_vector, (1.5, rng.standard_normal(3)), wrt=(0, 1))


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2},
                                     {"checkpoint": True, "memory_budget": "100KB"}])
def test_array_output_of_a_loop_with_the_default_adjoint(options):
    x = rng.standard_normal(3)
    df = tc.grad(stacked_in_a_loop, **options)
    got = check_grad(stacked_in_a_loop, (x, 6), df=df)
    np.testing.assert_allclose(got[0], tc.grad(stacked_in_a_loop)(x, 6), rtol=1e-12)


def scale_in_numpy(x, s):
    return np.sum(np.tanh(x * s))


def scale_in_math(x, s):
    return math.sin(s) * np.sum(x)


def scale_in_a_loop(x, s, n):
    for t in range(n):
        s = math.tanh(s) + 0.5 * s
        x = np.tanh(x) * s
    return np.sum(x)


def scale_unused(x, s):
    return np.sum(x ** 2)


def scale_squared(x, s):
    return s * s


@pytest.mark.parametrize("fn", [scale_in_numpy, scale_in_math, scale_in_a_loop, scale_unused,
                                scale_squared], ids=lambda f: f.__name__)
def test_a_float_arguments_gradient_is_a_numpy_scalar_of_its_dtype_on_every_path(fn):
    """One rule: the gradient of a Python float is an ``np.float64`` (a subclass of
    float), of an ``np.float32`` an ``np.float32`` -- never a Python float on one
    path, a NumPy scalar on another and a 0-d array on a third (the generated code
    returns each of these, depending on the function)."""
    x = rng.standard_normal(3)
    extra = (3,) if fn is scale_in_a_loop else ()
    expected = numeric_grad(fn, (x, 0.7, *extra), (1,))[0]
    for s, kind in ((0.7, np.float64), (np.float64(0.7), np.float64),
                    (np.float32(0.7), np.float32)):
        got = [tc.grad(fn, wrt=1)(x, s, *extra),
               tc.grad(fn, wrt=1, checkpoint=True, snapshots=2)(x, s, *extra),
               tc.value_and_grad(fn, wrt=(0, 1))(x, s, *extra)[1][1],
               tc.value_and_grad(fn, wrt=1, checkpoint=True)(x, s, *extra)[1],
               tc.grad(fn, wrt=(0, 1))(x, s, *extra)[1]]
        for g in got:
            assert type(g) is kind, (type(g), kind)
            np.testing.assert_allclose(g, expected, rtol=1e-4 if kind is np.float32 else 1e-6,
                                       atol=1e-6)
        assert type(tc.hvp(fn, wrt=1)(x, s, *extra, kind(1.0))) is kind


def scale_from_a_dict(x, p):
    return np.sum(np.tanh(x * p["s"])) * p["t"]


def test_a_float_leaf_of_a_container_follows_the_scalar_rule():
    x = rng.standard_normal(3)
    for s, kind in ((0.7, np.float64), (np.float32(0.7), np.float32)):
        for options in ({}, {"checkpoint": True}):
            g = tc.grad(scale_from_a_dict, wrt=1, **options)(x, {"s": s, "t": 2.0})
            assert type(g["s"]) is kind and type(g["t"]) is np.float64
            np.testing.assert_allclose(g["s"], 2.0 * numeric_grad(scale_in_numpy, (x, 0.7),
                                                                  (1,))[0], rtol=1e-4)
