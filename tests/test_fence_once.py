"""The fence runs once, before lowering (compiler/fence/fence_once.py): the functions
the lowering may inline are found from what the code names
(compiler/frontend/reached_functions.py), each is prepared and fenced once however often
it is inlined, a refusal is raised where the lowering inlines the function, and
the lowering never inlines a function the fence did not check."""

import functools
import types

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.compiler.fence import fence_once as fence_module
from tangent_ckpt.compiler.desugar.passes import desugar
from tangent_ckpt.compiler.fence.fence_once import fence_once
from tangent_ckpt.compiler.lower.normalize import normalize
from tangent_ckpt.compiler.frontend import reached_functions as reached
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.frontend.reached_functions import (
    FUNCTION, METHOD, functions_named, functions_of_arguments,
)
from tangent_ckpt.container_args import structure_of
from tangent_ckpt.errors import TangentCkptError, UnsupportedFunctionError

HERE = "test_fence_once.py"


def smooth(u):
    v = u[1:]  # a view of the caller's array, written through below
    v *= 0.5
    return u


def twice_smoothed(x):
    a = x * 1.0
    a = smooth(a)
    a = smooth(a)
    return np.sum(a * a)


def test_a_helper_inlined_twice_is_fenced_once_with_its_caller(monkeypatch):
    fenced = []
    real = fence_module.check_writes

    def counting(parsed, *args, **kwargs):
        fenced.append(parsed.fn)
        return real(parsed, *args, **kwargs)

    monkeypatch.setattr(fence_module, "check_writes", counting)
    df = tc.grad(twice_smoothed)
    check_grad(twice_smoothed, (np.array([0.5, -1.0, 2.0]),), df=df)
    # desugar inlined both calls: the fence runs once, on the one function
    assert fenced == [twice_smoothed]


def aliased_write(a):
    d = {'a': a * 1.0, 'b': a * 2.0}
    e = d['a']
    e[0] = 5.0  # WRITE: changes d['a'], read below
    return np.sum(d['a'] * e)


def never_inlined(x, step=aliased_write):  # named as a default, never called
    return np.sum(x * x)


def test_a_helper_named_but_never_inlined_refuses_nothing():
    parsed = parse_function(never_inlined)
    fenced = fence_once(parsed, desugar(parsed))
    assert "may also change 'd'" in str(fenced.functions[(FUNCTION, aliased_write)].error)
    x = np.array([1.0, 2.0])
    check_grad(never_inlined, (x,), df=tc.grad(never_inlined))


def calls_the_aliased_write(x):
    y = x * 2.0
    return aliased_write(y)


def test_a_helper_refused_is_refused_at_its_own_line():
    with pytest.raises(TangentCkptError) as info:
        tc.grad(calls_the_aliased_write)(np.ones(2))
    assert f"{HERE}:{line_of(aliased_write, 'e[0] = 5.0')}" in str(info.value)
    assert "may also change 'd'" in str(info.value)


def test_the_lowering_never_inlines_a_function_the_fence_did_not_check():
    parsed = parse_function(calls_the_aliased_write)
    with pytest.raises(UnsupportedFunctionError, match="writes were not checked"):
        normalize(parsed)  # no Fenced: nothing was checked


def test_the_lowering_inlines_what_the_fence_prepared():
    parsed = parse_function(twice_smoothed)
    function, _, _ = normalize(parsed, fenced=fence_once(parsed, desugar(parsed)))
    assert function.body


# --- what the code names ---------------------------------------------------------

def scale(x):
    return 2.0 * x


def shift(x, by=scale):
    return x + 1.0


class Layer:
    act = staticmethod(scale)

    def __init__(self, W):
        self.W = W

    @property
    def doubled(self):
        return self.W * 2.0

    def forward(self, x):
        return self.act(x @ self.W)


class Holder:
    def __init__(self):
        self.fn = shift
        self.part = functools.partial(scale)


HOLDER = Holder()


def names_many(x, layer):
    y = HOLDER.fn(x)
    return np.sum(layer.forward(y))


def test_the_functions_named_include_defaults_attributes_and_methods():
    found = set(functions_named(parse_function(names_many)))
    assert {(FUNCTION, shift), (FUNCTION, scale), (METHOD, Holder.__init__)} <= found
    argument = structure_of(Layer(np.eye(2)))
    methods = set(functions_of_arguments({1: argument}))
    assert {(METHOD, Layer.forward), (METHOD, Layer.__init__),
            (METHOD, Layer.doubled.fget), (FUNCTION, scale)} <= methods


def test_a_method_of_an_argument_is_fenced_and_differentiated():
    layer = Layer(np.array([[1.0, 0.5], [-0.5, 2.0]]))
    x = np.array([0.3, -0.7])
    dx, dlayer = tc.grad(names_many, wrt=(0, 1))(x, layer)
    eps = 1e-6
    expected = [(names_many(x + eps * e, layer) - names_many(x - eps * e, layer)) / (2 * eps)
                for e in np.eye(2)]
    np.testing.assert_allclose(dx, expected, rtol=1e-6)
    dW = [(names_many(x, Layer(layer.W + eps * e)) - names_many(x, Layer(layer.W - eps * e)))
          / (2 * eps) for e in np.eye(4).reshape(4, 2, 2)]
    np.testing.assert_allclose(dlayer.W.ravel(), dW, rtol=1e-6)


def _halved(x):
    return np.tanh(x) * 0.5


SETTINGS = types.SimpleNamespace(act=_halved, scale=2.0)


class _Node:
    def __init__(self, children):
        self.children = children


# a module-level graph of many objects of a user's class, none holding a function
FOREST = [_Node([_Node([]) for _ in range(30)]) for _ in range(2000)]


def through_a_namespace(x):
    h = x
    for t in range(3):
        h = SETTINGS.act(h) * SETTINGS.scale + 0.0 * len(FOREST)
    return np.sum(h ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
def test_a_helper_held_by_a_namespace_is_found_and_differentiated(options):
    """CFG = SimpleNamespace(act=f): the standard library's namespace is looked
    through (other installed libraries' objects are not), so the helper is fenced
    and inlined."""
    check_grad(through_a_namespace, (np.linspace(-1.0, 1.0, 4),), wrt=(0,),
               df=tc.grad(through_a_namespace, wrt=(0,), **options))


def test_the_objects_looked_through_are_bounded():
    """However large the module-level object graph, one compilation looks through
    a bounded number of objects (a function reached only past the bound is refused
    where the lowering meets it, never inlined unchecked)."""
    finder = reached._Finder()
    finder.value(FOREST)
    assert len(finder.expanded) <= reached._MOST_EXPANDED
    assert len(finder.expanded) == reached._MOST_EXPANDED  # the forest is larger


def _helper_elsewhere_leaving_a_call(x, c):
    return _scaled_sin(x) if c else x


def _scaled_sin(x, scale=np.array([2.0])):  # (an array default: desugar leaves the call)
    return scale[0] * np.sin(x)


def _in_another_module(x):
    return np.sum(helper(x, True) ** 2)  # noqa: F821 - run in a namespace of its own


def test_a_call_desugar_left_in_code_it_inlined_from_another_module_is_fenced():
    """Code inlined from another module names that module's functions
    (``ParsedFunction.inlined_names``): the fence finds them there (it once
    looked in the caller's module only, and the lowering refused the call as
    one the fence did not foresee)."""
    elsewhere = types.FunctionType(_in_another_module.__code__, {
        "np": np, "helper": _helper_elsewhere_leaving_a_call})  # _scaled_sin not there
    check_grad(elsewhere, (np.array([0.3, 0.4]),))
