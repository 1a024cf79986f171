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
    before = dict(registry._RULES), dict(registry._METHODS), set(registry._PURE_METHODS)
    yield
    for table, old in zip((registry._RULES, registry._METHODS, registry._PURE_METHODS), before):
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
