"""The adjoint registry: signatures, binding, template validation, user rules."""

import numpy as np
import pytest

import tangent_ckpt as tc
import tangent_ckpt.adjoints.numpy_rules  # noqa: F401
from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.lower import calls
from tangent_ckpt.compiler.package import next_state
from tangent_ckpt.adjoints.evaluation import evaluate
from tangent_ckpt.adjoints.registry import defadjoint, defconstant, lookup, register_adjoint
from tangent_ckpt.adjoints.rule_text import REQUIRED, parse_signature, template_free_names


@pytest.fixture
def scratch():
    """Functions registered by a test are removed afterwards (the registry is global)."""
    tables = (registry._RULES, registry._METHODS, registry._PURE_METHODS, registry._FACTS,
              registry._METHOD_FACTS, registry._ATTRIBUTES)
    before = [table.copy() for table in tables]
    yield
    for table, old in zip(tables, before):
        table.clear()
        table.update(old)


def _fn(*args, **kwargs):
    return None


# --- signatures and bind ----------------------------------------------------------

def test_parse_signature_kinds_and_defaults():
    params = parse_signature("a, /, b=(0, 1), *, c=np.float32, d, **kw")
    assert params == [("a", REQUIRED, "positional"), ("b", (0, 1), "positional"),
                      ("c", np.float32, "keyword"), ("d", REQUIRED, "keyword"),
                      ("kw", REQUIRED, "varkeywords")]
    assert parse_signature("*arrays, axis=0") == [
        ("arrays", REQUIRED, "varargs"), ("axis", 0, "keyword")]


@pytest.mark.parametrize("bad", ["a,, b", "a=1, b", "1a", "a, a"])
def test_bad_signature_raises(bad, scratch):
    with pytest.raises((ValueError, SyntaxError)):
        defadjoint(_fn, bad)


def test_bind_positional_keyword_and_defaults():
    rule = lookup(np.sum)
    assert rule.bind(["x"], {}) == {"a": "x", "axis": None, "dtype": None, "out": None,
                                    "keepdims": False, "initial": None}
    bound = rule.bind(["x", 1], {"keepdims": True})
    assert bound["axis"] == 1 and bound["keepdims"] is True
    assert rule.bind([], {"a": "x", "axis": (0, 1)})["axis"] == (0, 1)
    assert rule.bind(["x", 0, None, None, True])["keepdims"] is True
    clip = lookup(np.clip).bind(["x"], {"max": 1.0})
    assert clip["max"] == 1.0 and clip["a_min"] is None and clip["min"] is None


def test_bind_errors():
    rule = lookup(np.sum)
    with pytest.raises(TypeError, match="missing"):
        rule.bind([], {})
    with pytest.raises(TypeError, match="unexpected"):
        rule.bind(["x"], {"where": True})
    with pytest.raises(TypeError, match="multiple values"):
        rule.bind(["x", 0], {"axis": 1})
    with pytest.raises(TypeError, match="positional"):
        lookup(np.tanh).bind(["x", "y"], {})
    with pytest.raises(TypeError):                     # x1 is positional-only, as in NumPy
        lookup(np.add).bind([], {"x1": 1, "x2": 2})
    with pytest.raises(TypeError):                     # keyword-only parameter
        lookup(np.clip).bind(["a", None, None, None, 0.0], {})


def test_bind_varargs_and_varkeywords(scratch):
    defconstant(_fn, "a, *rest, k=1, **extra")
    rule = lookup(_fn)
    assert rule.bind([1, 2, 3], {"k": 4, "z": 5}) == {"a": 1, "rest": (2, 3), "k": 4,
                                                      "extra": {"z": 5}}
    assert rule.bind([1], {}) == {"a": 1, "rest": (), "k": 1, "extra": {}}


def test_bind_works_on_ast_nodes():
    import gast
    call = gast.parse("np.sum(x, axis=1)", mode="eval").body
    bound = lookup(np.sum).bind(call.args, {k.arg: k.value for k in call.keywords})
    assert isinstance(bound["a"], gast.Name) and isinstance(bound["axis"], gast.Constant)


# --- template validation ------------------------------------------------------------

def test_template_names_are_validated(scratch):
    with pytest.raises(ValueError, match="neither a parameter nor a runtime helper"):
        defadjoint(_fn, "x", x="g * not_a_helper(x)")
    with pytest.raises(ValueError, match="not in signature"):
        defadjoint(_fn, "x", y="g")
    with pytest.raises(ValueError, match="'i'"):          # i only for sequence parameters
        defadjoint(_fn, "xs", xs="g[i]")
    with pytest.raises(ValueError, match="'ys' is not in signature"):
        defadjoint(_fn, "xs", sequence=("ys",), xs="g[i]")
    defadjoint(_fn, "xs, axis=0", sequence=("xs",), xs="np.take(g, i, axis) + unbroadcast(g, ans)")
    assert lookup(_fn).sequence_params == {"xs"}
    assert template_free_names("unbroadcast(g * x2, x1)") == {"unbroadcast", "g", "x1", "x2"}


def test_every_numpy_template_uses_known_names():
    import builtins
    from tangent_ckpt import runtime
    for rule in registry.all_rules():
        allowed = {"g", "ans", "np", "i"} | set(rule.param_names)
        for expression in list(rule.templates.values()) + list(rule.whole.values()):
            for name in template_free_names(expression):
                assert name in allowed or hasattr(runtime, name) or hasattr(builtins, name), \
                    (rule, name)


def test_runtime_all_lists_helpers():
    from tangent_ckpt.runtime.primitive_adjoints import numpy_adjoints
    for name in numpy_adjoints.__all__:
        assert callable(getattr(numpy_adjoints, name))
    import tangent_ckpt.runtime as rt
    assert rt.accumulate_at and rt.setitem_adjoint_value and rt.setitem_adjoint_array


# --- user rules ---------------------------------------------------------------------

def test_register_adjoint_user_callable(scratch):
    def scale(x, k=2.0, *, shift=0.0):
        return k * x + shift

    def scale_vjp(g, ans, x, k=2.0, *, shift=0.0):
        return g * k, np.sum(g * x)

    assert tc.register_adjoint(scale, scale_vjp) is scale_vjp
    rule = lookup(scale)
    assert rule.vjp is scale_vjp and rule.differentiable_params() == ["x", "k"]
    x = np.arange(3.0)
    assert rule.bind([x], {"shift": 1.0})["k"] == 2.0
    np.testing.assert_array_equal(evaluate(scale, "x", np.ones(3), None, [x, 3.0]), [3, 3, 3])
    assert evaluate(scale, "k", np.ones(3), None, [x], {"shift": 1.0}) == 3.0


def test_register_adjoint_decorator_single_value_and_varargs(scratch):
    def double(x):
        return 2 * x

    @register_adjoint(double, None)
    def double_vjp(g, ans, x):
        return 2 * g

    assert evaluate(double, "x", 1.5, 3.0, [1.5]) == 3.0

    def total(*xs):
        return sum(xs)

    register_adjoint(total, lambda g, ans, *xs: tuple(g for _ in xs))
    assert evaluate(total, "xs", 2.0, None, [1.0, 2.0], index=1) == 2.0
    with pytest.raises(TypeError):
        register_adjoint(total, "not callable")


def test_register_adjoint_builtin_without_signature(scratch):
    import math
    register_adjoint(math.hypot, lambda g, ans, *xs: tuple(g * x / ans for x in xs))
    rule = lookup(math.hypot)
    assert rule.bind([3.0, 4.0], {}) == {"args": (3.0, 4.0), "kwargs": {}}
    assert evaluate(math.hypot, "args", 1.0, 5.0, [3.0, 4.0], index=1) == 0.8


def test_lookup_unregistered_and_unhashable():
    assert lookup(np.fft.hfft) is None
    assert lookup([]) is None
    with pytest.raises(KeyError):
        evaluate(np.fft.hfft, "a", 1.0, 1.0, [1.0])


def test_rule_names():
    assert lookup(np.add).name == "np.add"
    assert lookup(np.linalg.norm).name == "np.linalg.norm"
    assert lookup(abs).name == "abs"
    assert "np.tanh" in repr(lookup(np.tanh))


# --- one declaration: the compiler's tables are read from the registry -------------

def test_method_tables_are_the_registry():
    assert calls.METHODS is registry.methods()
    assert registry.methods()["var"] is np.var and registry.methods()["flatten"] is np.ravel
    assert "reshape" in calls.VARARGS_METHODS
    assert set(registry.methods()) <= next_state._PURE_METHODS
    assert "astype" in next_state._PURE_METHODS and "astype" not in registry.methods()


def test_a_declared_method_is_usable(scratch):
    def double(x):
        return 2.0 * x

    defadjoint(double, "x", methods="doubled_for_test", x="2.0 * g")
    assert registry.methods()["doubled_for_test"] is double
    assert "doubled_for_test" in registry.pure_methods()
    assert lookup(double).static_params() == []


def test_static_and_piecewise_parameters():
    assert lookup(np.sum).static_params() == ["axis", "dtype", "out", "keepdims", "initial"]
    assert "condition" not in lookup(np.where).static_params()
    assert lookup(np.linalg.qr).only == {"mode": ("reduced",)}


def test_unknown_domain_is_rejected(scratch):
    with pytest.raises(ValueError, match="unknown domain"):
        defadjoint(_fn, "x", domain="complex", x="g")


# --- one row per primitive: what the compiler knows besides the derivative ---------

def test_rows_carry_their_facts():
    assert registry.facts(np.reshape).view == ("a",)
    assert lookup(np.reshape).facts is registry.facts(np.reshape)
    assert registry.facts(np.sum).view is False and registry.facts(np.sum).reduces
    assert registry.facts(np.sum).pure and not registry.facts(np.sum).keeps_shape
    assert registry.facts(np.roll).keeps_shape and not registry.facts(np.roll).reduces
    assert registry.facts(np.exp).view is False and registry.facts(np.exp).fusable
    assert not registry.facts(np.matmul).fusable
    assert registry.facts(np.array).new_unless == "copy"
    assert registry.facts(np.diff).view == ("a",) and registry.facts(np.diff).new_unless == "n"
    assert registry.facts(np.zeros).view is False              # defconstant rows too
    # facts-only rows: no rule, so a differentiated call is still refused
    assert registry.facts(np.copyto).writes == "dst" and lookup(np.copyto) is None
    assert registry.facts(np.meshgrid).view is True and registry.facts(np.meshgrid).new_unless \
        == "copy"   # a rule (copy=True only), whose facts say copy=False makes views
    assert registry.facts(np.fft.hfft) is None
    # whether the row's expressions hold for complex arguments (else refused for them)
    assert lookup(np.exp).complex_input and lookup(np.fft.fft).complex_input
    assert lookup(np.conjugate).complex_input and lookup(np.atleast_2d).complex_input
    assert not lookup(np.arctan2).complex_input and not lookup(np.maximum).complex_input


def test_methods_take_the_facts_of_their_function_unless_the_row_says():
    assert registry.method_facts("reshape").view == ("a",)
    assert registry.method_facts("sum").view is False
    assert registry.method_facts("flatten").view is False       # np.ravel's row: it copies
    assert registry.method_facts("conj").view == ("x",)         # x itself for a real x
    assert registry.method_facts("fill").writes == "self"
    assert registry.method_facts("view").view is True
    assert registry.method_facts("sum").returns == "array or scalar"   # np.sum's
    assert registry.method_facts("astype").returns == "array or scalar"
    assert registry.method_facts("tolist").returns is None          # a list
    assert registry.attribute_functions() == {"real": np.real, "imag": np.imag}   # x.real


def _numpy_rows():
    return [f for f in registry.all_facts() if registry.is_numpy_function(f.fn)]


def test_every_numpy_row_says_whether_it_returns_a_view():
    """A NumPy function's row that left ``view=`` out would have been refused
    when it was registered: every one says False, True or the parameters."""
    rows = _numpy_rows()
    assert len(rows) > 150
    for facts in rows:
        assert facts.view is False or facts.view is True or \
            (isinstance(facts.view, tuple) and facts.view), facts


# calls that return memory of an argument: each function's row must say view=
# (and, with new_unless=, that this call does not leave the parameter at its default)
_VIEW_CALLS = [
    (np.reshape, lambda a: np.reshape(a, (3, 2))),
    (np.diff, lambda a: np.diff(a, 0)),
    (np.polyder, lambda a: np.polyder(a[0], 0)),
    (np.nan_to_num, lambda a: np.nan_to_num(a, copy=False)),
    (np.array, lambda a: np.array(a, copy=False)),
    (np.asarray, lambda a: np.asarray(a)),
    (np.squeeze, lambda a: np.squeeze(a)),
    (np.real, lambda a: np.real(a)),
    (np.atleast_2d, lambda a: np.atleast_2d(a)),
    (np.einsum, lambda a: np.einsum("ij->ji", a)),
    (np.meshgrid, lambda a: np.meshgrid(a[0], copy=False)[0]),
    (np.ndarray, lambda a: np.ndarray((6,), buffer=a)),
    (np.broadcast_arrays, lambda a: np.broadcast_arrays(a, a)[0]),
    (np.trim_zeros, lambda a: np.trim_zeros(a[0])),
    (np.lib.stride_tricks.sliding_window_view, lambda a: np.lib.stride_tricks.sliding_window_view(a[0], 2)),
]


@pytest.mark.parametrize("fn, call", _VIEW_CALLS, ids=[f.__name__ for f, _ in _VIEW_CALLS])
def test_a_function_that_returns_a_view_says_so_in_its_row(fn, call):
    a = np.arange(1.0, 7.0).reshape(2, 3)
    assert np.shares_memory(call(a), a)        # the case does return a's memory
    assert registry.facts(fn).view not in (False, None)


def test_a_numpy_row_without_view_fails_loudly(scratch):
    with pytest.raises(ValueError, match="view="):
        defadjoint(np.resize, "a, new_shape", a="g")
    with pytest.raises(ValueError, match="view="):
        defconstant(np.resize, "*args, **kwargs")
    assert lookup(np.resize) is None and registry.facts(np.resize) is None
    with pytest.raises(ValueError, match="view="):
        registry.defmethod("scratch_method_for_test")
    defadjoint(np.negative, "x, /", x="-g")                  # a ufunc: new by nature
    assert registry.facts(np.negative).view is False
    defadjoint(_fn, "x", x="g")                              # not NumPy: a possible view
    assert registry.facts(_fn).view is None


@pytest.mark.parametrize("facts, message", [
    (dict(view="b"), "not a parameter"),
    (dict(view="a", new_unless="c"), "not a parameter"),
    (dict(view=False, new_unless="a"), "needs view="),
    (dict(view=False, keeps_shape=True, reduces=True), "exclude"),
    (dict(view=False, fusable=True), "ufuncs"),
    (dict(view="a", methods="m1", method_views={"m2": False}), "not in methods"),
    (dict(view=False, returns="list"), "returns="),
    (dict(view=False, ndim=1), "ndim="),                   # ndim= needs returns="array"
    (dict(view=False, returns="array", ndim="a"), "ndim="),
    (dict(view="a", advanced_index=True), "advanced_index="),  # a mask is new
    (dict(view=False, complex_result="yes"), "complex_result="),
])
def test_a_row_with_inconsistent_facts_fails_loudly(facts, message, scratch):
    with pytest.raises(ValueError, match=message):
        defadjoint(np.resize, "a, new_shape", a="g", **facts)


def test_register_adjoint_keeps_a_numpy_functions_facts(scratch):
    register_adjoint(np.reshape, lambda g, ans, a, shape: (np.reshape(g, np.shape(a)), None))
    assert registry.facts(np.reshape).view == ("a",)
    assert lookup(np.reshape).facts is registry.facts(np.reshape)


# --- what a row says about its result (returns=, ndim=, advanced_index=, complex_result=)

_A = np.arange(1.0, 7.0).reshape(2, 3)
_Z = _A + 1j   # complex
# one call of each function whose row says something about its result: every such row
# needs one here, so that NumPy itself checks what the row says
_SAMPLE_CALLS = {
    np.copy: lambda: np.copy(_A), np.array: lambda: np.array(_A),
    np.zeros: lambda: np.zeros((2, 3)), np.ones: lambda: np.ones((2, 3)),
    np.empty: lambda: np.empty((2, 3)), np.full: lambda: np.full((2, 3), 1.0),
    np.zeros_like: lambda: np.zeros_like(_A), np.ones_like: lambda: np.ones_like(_A),
    np.empty_like: lambda: np.empty_like(_A), np.full_like: lambda: np.full_like(_A, 1.0),
    np.arange: lambda: np.arange(3), np.linspace: lambda: np.linspace(0.0, 1.0, 3),
    np.logspace: lambda: np.logspace(0.0, 1.0, 3), np.geomspace: lambda: np.geomspace(1.0, 2.0, 3),
    np.eye: lambda: np.eye(3), np.identity: lambda: np.identity(3),
    np.concatenate: lambda: np.concatenate([_A, _A]), np.stack: lambda: np.stack([_A, _A]),
    np.vstack: lambda: np.vstack([_A, _A]), np.hstack: lambda: np.hstack([_A, _A]),
    np.sum: lambda: np.sum(_A), np.mean: lambda: np.mean(_A), np.var: lambda: np.var(_A),
    np.std: lambda: np.std(_A), np.prod: lambda: np.prod(_A), np.max: lambda: np.max(_A),
    np.min: lambda: np.min(_A), np.amax: lambda: np.amax(_A), np.amin: lambda: np.amin(_A),
    np.cumsum: lambda: np.cumsum(_A), np.cumprod: lambda: np.cumprod(_A),
    np.clip: lambda: np.clip(_A, 2.0, 3.0), np.dot: lambda: np.dot(_A, _A.T),
    np.outer: lambda: np.outer(_A[0], _A[1]), np.inner: lambda: np.inner(_A[0], _A[1]),
    np.kron: lambda: np.kron(_A, _A), np.cross: lambda: np.cross(_A[0], _A[1]),
    np.tensordot: lambda: np.tensordot(_A, _A.T, 1), np.trace: lambda: np.trace(_A),
    np.roll: lambda: np.roll(_A, 1), np.repeat: lambda: np.repeat(_A, 2),
    np.tile: lambda: np.tile(_A, 2), np.convolve: lambda: np.convolve(_A[0], _A[1]),
    np.interp: lambda: np.interp(1.5, [1.0, 2.0], [3.0, 4.0]),
    np.isnan: lambda: np.isnan(_A), np.isinf: lambda: np.isinf(_A),
    np.isfinite: lambda: np.isfinite(_A), np.signbit: lambda: np.signbit(_A),
    np.equal: lambda: np.equal(_A, 2.0), np.not_equal: lambda: np.not_equal(_A, 2.0),
    np.less: lambda: np.less(_A, 2.0), np.less_equal: lambda: np.less_equal(_A, 2.0),
    np.greater: lambda: np.greater(_A, 2.0), np.greater_equal: lambda: np.greater_equal(_A, 2.0),
    np.logical_and: lambda: np.logical_and(_A > 1, _A < 4),
    np.logical_or: lambda: np.logical_or(_A > 1, _A < 4),
    np.logical_not: lambda: np.logical_not(_A > 1),
    np.logical_xor: lambda: np.logical_xor(_A > 1, _A < 4),
    np.isclose: lambda: np.isclose(_A, 2.0), np.nonzero: lambda: np.nonzero(_A > 2),
    np.where: lambda: np.where(_A > 2), np.isneginf: lambda: np.isneginf(_A),
    np.isposinf: lambda: np.isposinf(_A), np.flatnonzero: lambda: np.flatnonzero(_A > 2),
    np.argwhere: lambda: np.argwhere(_A > 2), np.ix_: lambda: np.ix_([0, 1], [0, 2]),
    np.argsort: lambda: np.argsort(_A),
    np.bincount: lambda: np.bincount(np.array([0, 2, 2]), weights=np.array([0.5, 1.0, 2.0])),
    np.isin: lambda: np.isin(_A, [2.0, 3.0]),
    np.round: lambda: np.round(_A), np.around: lambda: np.around(_A),
    np.conjugate: lambda: np.conjugate(_Z), np.reshape: lambda: np.reshape(_A, 6),
    np.ravel: lambda: np.ravel(_A), np.transpose: lambda: np.transpose(_A),
    np.squeeze: lambda: np.squeeze(_A),
    np.fft.fft: lambda: np.fft.fft(_A), np.fft.ifft: lambda: np.fft.ifft(_A),
    np.fft.rfft: lambda: np.fft.rfft(_A), np.fft.fft2: lambda: np.fft.fft2(_A),
    np.fft.ifft2: lambda: np.fft.ifft2(_A), np.fft.fftn: lambda: np.fft.fftn(_A),
    np.fft.ifftn: lambda: np.fft.ifftn(_A), np.fft.rfft2: lambda: np.fft.rfft2(_A),
    np.fft.rfftn: lambda: np.fft.rfftn(_A),
    np.real: lambda: np.real(_Z), np.imag: lambda: np.imag(_Z),
    np.absolute: lambda: np.absolute(_Z), np.fabs: lambda: np.fabs(_A), abs: lambda: abs(_Z),
    np.angle: lambda: np.angle(_Z), np.fft.irfft: lambda: np.fft.irfft(_Z),
    np.fft.irfft2: lambda: np.fft.irfft2(_Z), np.fft.irfftn: lambda: np.fft.irfftn(_Z),
}
for _name in ("row_stack",):   # only some NumPy releases
    if registry.facts(getattr(np, _name, None)) is not None:
        _SAMPLE_CALLS[getattr(np, _name)] = lambda: np.vstack([_A, _A])


def _saying_rows():
    return [f for f in registry.all_facts() if f.returns or f.ndim is not None or
            f.advanced_index or f.complex_result is not None]


def test_every_row_that_says_what_it_returns_is_checked_against_numpy():
    missing = [f.name for f in _saying_rows() if f.fn not in _SAMPLE_CALLS]
    assert missing == []
    assert len(_saying_rows()) > 70


@pytest.mark.parametrize("facts", _saying_rows(), ids=lambda f: f.name)
def test_a_row_says_what_numpy_returns(facts):
    with np.errstate(all="ignore"):
        result = _SAMPLE_CALLS[facts.fn]()
    if facts.returns == "array":
        assert isinstance(result, np.ndarray)
    elif facts.returns == "array or scalar":
        assert isinstance(result, (np.ndarray, np.generic, float, int))
    if isinstance(facts.ndim, int):
        assert result.ndim == facts.ndim
    elif facts.ndim == "shape":
        assert result.shape == (2, 3)
    elif facts.ndim == "like":
        assert result.ndim == _A.ndim
    if facts.advanced_index:   # a mask or integer index arrays: x[result] is a copy
        parts = result if isinstance(result, tuple) else (result,)
        assert all(p.dtype == bool or np.issubdtype(p.dtype, np.integer) for p in parts)
    if facts.complex_result is not None:
        assert np.iscomplexobj(result) is facts.complex_result


def test_a_function_without_a_row_says_nothing_about_its_result():
    """Each fact's absence is the safe side: not known to be an array, a mask, real."""
    from tangent_ckpt.compiler import ir
    from tangent_ckpt.compiler.analyze import complex_values
    from tangent_ckpt.compiler.memory_sharing import INDEX_FUNCTIONS
    from tangent_ckpt.compiler.transform import owned_adjoints
    assert registry.facts(np.unique) is None
    assert not any(f is np.unique for f in INDEX_FUNCTIONS)
    assert id(np.unique) not in complex_values.REAL_RESULTS
    unique = ir.Prim(np.unique, [ir.Name("x")], {}, "np.unique({0})")
    zeros = ir.Prim(np.zeros, [ir.Const(3)], {}, "np.zeros({0})")
    assert not owned_adjoints._makes_an_array(unique)
    assert owned_adjoints._makes_an_array(zeros)
