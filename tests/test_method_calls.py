"""Which method ``obj.m(...)`` surely runs (compiler/desugar/method_calls.py): the
class's own, for an object the function makes and uses only as ``obj.attr``;
nothing where another callable could stand in the method's place."""

import gast
import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.desugar.method_calls import MethodCalls
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.errors import TransformError


class Step:
    def __init__(self, k):
        self.k = k

    def update(self, p, g):
        p -= self.k * g
        return p


def _other(p, g):
    return p * 2.0


class Swapped:
    def __init__(self, swap):
        if swap:
            self.update = _other

    def update(self, p, g):
        p -= 0.1 * g
        return p


class Computed:
    def __init__(self, name):
        setattr(self, name, _other)

    def update(self, p, g):
        p -= 0.1 * g
        return p


def made_and_called(x):
    opt = Step(0.1)
    p = x * 1.0
    p = opt.update(p, x)
    return np.sum(p ** 2)


def attribute_stored_by_the_function(x):
    opt = Step(0.1)
    opt.update = _other
    p = x * 1.0
    p = opt.update(p, x)
    return np.sum(p ** 2)


def handed_on(x):
    opt = Step(0.1)
    p = x * 1.0
    q = opt.update(p, x)
    return np.sum(p ** 2) + len(str(opt)) * np.sum(q)


def bound_twice(x, c):
    opt = Step(0.1)
    if c > 0:
        opt = Step(0.2)
    p = x * 1.0
    return np.sum(opt.update(p, x))


def shadowed_in_init(x):
    opt = Swapped(False)
    p = x * 1.0
    p = opt.update(p, x)
    return np.sum(p ** 2)


def set_by_a_computed_name(x):
    opt = Computed("other")
    p = x * 1.0
    p = opt.update(p, x)
    return np.sum(p ** 2)


def _method_of_the_call(fn):
    parsed = parse_function(fn)
    fnode = parsed.node
    local = {a.id for a in fnode.args.args} | {
        n.id for n in gast.walk(fnode) if isinstance(n, gast.Name) and
        isinstance(n.ctx, gast.Store)}
    methods = MethodCalls(fnode, lambda f: resolve_dotted(f, parsed.resolve, local), local)
    calls = [n for n in gast.walk(fnode) if isinstance(n, gast.Call) and
             isinstance(n.func, gast.Attribute) and n.func.attr == "update"]
    return [methods.method(c.func) for c in calls]


def test_a_method_of_an_object_made_in_the_function_is_the_classes_own():
    assert _method_of_the_call(made_and_called) == [Step.update]
    assert _method_of_the_call(bound_twice) == [Step.update]  # one class either way


@pytest.mark.parametrize("fn", [attribute_stored_by_the_function, handed_on, shadowed_in_init,
                                set_by_a_computed_name], ids=lambda f: f.__name__)
def test_no_method_where_another_callable_may_stand_in_its_place(fn):
    assert _method_of_the_call(fn) == [None]


@pytest.mark.parametrize("run", [dict(), dict(checkpoint=True)], ids=["taped", "checkpoint"])
def test_the_methods_write_into_its_parameter_is_written_back(run):
    check_grad(made_and_called, (np.array([0.3, -0.2, 0.5]),),
               df=tc.grad(made_and_called, **run))


def test_a_method_the_instance_may_hide_stays_refused():
    """``Swapped.update`` may be replaced by ``self.update = _other``: its write
    into ``p`` is not followed through the call, and the call is refused."""
    with pytest.raises(TransformError, match="'p'"):
        tc.grad(shadowed_in_init)(np.array([0.3, -0.2, 0.5]))
