"""desugar/records.py (with inline_functions.py and scalar_objects.py): a named
tuple or dataclass made in the function is written as one name per field, its
generated constructor as the field stores Python's makes (arguments in the
call's order, defaults, ``default_factory()`` per object, ``init=False``
fields, ``__post_init__``), a named tuple's tuple forms as field reads; an
object that is more than its fields stays the lowering's, as before."""

import collections
import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_value_and_grad
from tangent_ckpt.compiler.pipeline import desugared as desugared_with_helpers
from tangent_ckpt.errors import TangentCkptError

RNG = np.random.default_rng(11)
W0 = RNG.normal(size=(3, 3)) * 0.5
X0 = RNG.normal(size=3)


def desugared(fn):
    """The printed desugared function alone (not the helpers listed after it)."""
    return desugared_with_helpers(fn).split("\n\n\n")[0]


@dataclasses.dataclass
class _Layer:
    W: np.ndarray
    b: np.ndarray = None
    scale: float = 0.5
    calls: int = dataclasses.field(default=0, init=False)
    seen: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        if self.b is None:
            self.b = 0.0 * self.W[0]

    def __call__(self, x):
        self.calls += 1
        self.seen.append(self.calls)
        return np.tanh(self.W @ x + self.b) * self.scale


def dataclass_layer(W, x):
    layer = _Layer(W, scale=0.25)
    for _ in range(2):
        x = layer(x)
    return np.sum(x) * layer.calls + len(layer.seen)


def test_a_dataclass_is_its_fields_bound_as_its_generated_init_binds_them():
    text = desugared(dataclass_layer)
    assert "_Layer" not in text and "layer." not in text, text
    for line in ("layer_W = W", "layer_b = None", "layer_scale = 0.25", "layer_calls = 0",
                 "layer_seen = []"):
        assert line in text, text
    assert text.index("layer_seen = []") > text.index("layer_calls = 0"), text  # field order
    check_value_and_grad(dataclass_layer, (W0, X0), wrt=(0, 1))
    check_grad(dataclass_layer, (W0, X0), wrt=(0, 1),
               df=tc.grad(dataclass_layer, wrt=(0, 1), checkpoint=True, snapshots=2))


class _Gauss(NamedTuple):
    mu: np.ndarray
    var: np.ndarray
    scale: float = 2.0

    @property
    def ratio(self):
        return self.mu / self.var

    def spread(self):
        return np.sum(self.var * self.mu) * self.scale


_Pair = collections.namedtuple("_Pair", "a b")


def named_tuple_forms(x):
    g = _Gauss(x * 2.0, var=x ** 2 + 1.0)
    mu, var, scale = g
    tail = g[1:]
    total = 0.0
    pair = _Pair(x, 3.0 * x)
    for item in pair:
        total = total + np.sum(item)
    return g.spread() + np.sum(g.ratio) + np.sum(g[-2] * mu * tail[0]) * scale + \
        len(g) * isinstance(g, tuple) + total


def test_a_named_tuple_is_its_fields_read_by_name_position_and_unpacking():
    text = desugared(named_tuple_forms)
    assert "_Gauss" not in text and "_Pair" not in text and "g." not in text and \
        "g[" not in text, text
    assert "total = total + np.sum(pair_b)" in text, text  # the loop over its fields, unrolled
    assert "mu = g_mu" in text and "3 * True" in text, text
    check_value_and_grad(named_tuple_forms, (X0,))
    check_grad(named_tuple_forms, (X0,),
               df=tc.grad(named_tuple_forms, checkpoint=True, snapshots=2))


def named_tuple_replaced_and_as_a_dict(x):
    g = _Gauss(x, x)
    h = g._replace(var=x * 3.0)
    d = h._asdict()
    return np.sum(h.mu * h.var) + np.sum(d["var"]) + h.scale


def test_replace_and_asdict_of_a_named_tuple_are_its_fields():
    text = desugared(named_tuple_replaced_and_as_a_dict)
    assert "h_var = var" in text and "h_mu = g_mu" in text, text
    assert "d = {'mu': h_mu, 'var': h_var, 'scale': h_scale}" in text, text
    check_value_and_grad(named_tuple_replaced_and_as_a_dict, (X0,))


def named_tuple_carried(x, n):
    p = _Pair(x, 0.0 * x)
    for _ in range(n):
        p = _Pair(p.a + 0.1 * p.b, p.b - 0.1 * np.sin(p.a))   # both from the old p
    return np.sum(p.a ** 2) + np.sum(p[1])


def test_a_named_tuple_carried_by_a_loop_reads_the_old_fields_for_the_new():
    text = desugared(named_tuple_carried)
    assert "_Pair" not in text, text
    check_value_and_grad(named_tuple_carried, (X0, 5))
    check_grad(named_tuple_carried, (X0, 5),
               df=tc.grad(named_tuple_carried, checkpoint=True, snapshots=2))


def keywords_in_another_order(x):
    draws = np.random.default_rng(0)
    p = _Pair(b=x * draws.normal(), a=x * draws.normal())   # b's draw first
    return np.sum(p.a - 2.0 * p.b)


def test_the_arguments_are_evaluated_in_the_order_the_call_writes_them():
    text = desugared(keywords_in_another_order)
    assert "_Pair" not in text, text
    check_value_and_grad(keywords_in_another_order, (X0,))


@dataclasses.dataclass(frozen=True)
class _Frozen:
    W: np.ndarray


def stores_into_a_frozen_dataclass(W, x):
    f = _Frozen(W)
    f.W = 2.0 * W          # FrozenInstanceError in Python
    return np.sum(f.W @ x)


def test_a_store_python_refuses_keeps_the_object_for_the_lowering():
    assert "_Frozen(W)" in desugared(stores_into_a_frozen_dataclass)
    with pytest.raises(TangentCkptError):
        tc.grad(stores_into_a_frozen_dataclass)(W0, X0)


@dataclasses.dataclass
class _OwnInit:
    x: np.ndarray

    def __init__(self, y):
        self.x = 2.0 * y


def dataclass_with_its_own_init(y):
    p = _OwnInit(y)
    return np.sum(p.x)


def test_a_dataclass_with_an_init_of_its_own_runs_it():
    """Once a wrong gradient (1 for 2): the lowering bound the fields from the
    arguments as a generated ``__init__`` would, not running the class's own."""
    assert "p_x = 2.0 * y" in desugared(dataclass_with_its_own_init)
    check_grad(dataclass_with_its_own_init, (X0,))


@dataclasses.dataclass
class _Plain:
    W: np.ndarray
    scale: float = 0.5


def dataclasses_in_a_list(W, x):
    layers = [_Plain(W), _Plain(W.T, scale=0.1)]
    for layer in layers:
        x = np.tanh(layer.W @ x) * layer.scale
    return np.sum(x)


def named_tuples_in_a_list(x):
    pairs = [_Pair(x, 2.0 * x), _Pair(3.0 * x, x)]
    return sum(np.sum(p.a * p.b) for p in pairs)


def named_tuple_as_a_tuple(x):
    p = _Pair(x, 2.0 * x)
    a, b = tuple(p)
    return np.sum(np.multiply(*p) + a * b)


def named_tuple_spread_into_a_display(x):
    p = _Pair(x, np.exp(x))
    return np.sum(np.stack([*p, x]) ** 2) + np.sum(np.stack(list(p)) * x)


@pytest.mark.parametrize("f", [named_tuple_as_a_tuple, named_tuple_spread_into_a_display],
                         ids=lambda f: f.__name__)
def test_a_named_tuple_made_a_tuple_or_spread_is_its_fields(f):
    """``tuple(p)``, ``list(p)``, ``f(*p)``, ``[*p, x]``: the fields' reads (the
    tuple went to the lowering; ``[*p, x]`` was refused as a starred expression)."""
    text = desugared(f)
    assert "_Pair" not in text and "p_a, p_b" in text, text
    check_value_and_grad(f, (X0,))
    check_grad(f, (X0,), df=tc.grad(f, checkpoint=True, snapshots=2))


@pytest.mark.parametrize("f, args, wrt", [
    (dataclasses_in_a_list, (W0, X0), (0, 1)),
    (named_tuples_in_a_list, (X0,), (0,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_records_in_a_list_only_read_are_their_fields(f, args, wrt):
    """``desugar/object_lists.py`` writes the list as one name per record (and
    ``sum(... for p in pairs)`` as the sum of the items written out)."""
    text = desugared(f)
    assert "_Plain" not in text and "_Pair" not in text, text
    check_grad(f, args, wrt=wrt)


def listed_keywords_in_another_order(x):
    draws = np.random.default_rng(0)
    pairs = [_Pair(b=x * draws.normal(), a=x * draws.normal())]
    return sum(np.sum(p.a - 2.0 * p.b) for p in pairs)


def held_keywords_in_another_order(x):
    draws = np.random.default_rng(0)
    pairs = {"p": _Pair(b=x * draws.normal(), a=x * draws.normal())}
    return np.sum(pairs["p"].a - 2.0 * pairs["p"].b)


@pytest.mark.parametrize("f", [listed_keywords_in_another_order,
                               held_keywords_in_another_order], ids=lambda f: f.__name__)
def test_a_records_arguments_are_evaluated_in_the_order_the_call_writes_them(f):
    """Once a wrong value and gradient: the lowering evaluated the arguments in the
    order of the fields, so ``a``'s draw came first."""
    check_value_and_grad(f, (X0,))


def held_dataclass_with_a_factory(W, x):
    layers = {"a": _Layer(W)}
    return np.sum(layers["a"](x))


def held_dataclass_with_a_factory_stored_into(W, x):
    layers = {"a": _Layer(W)}
    layers["n"] = 1.0                 # stored into: the dict stays the lowering's
    return np.sum(layers["a"](x))


def test_a_field_left_to_its_default_factory_in_the_lowering_is_refused_saying_so():
    with pytest.raises(TangentCkptError, match=r"_Layer\(\) leaves 'seen' to its "
                                               r"default_factory"):
        tc.grad(held_dataclass_with_a_factory_stored_into)(W0, X0)


def listed_dataclass_with_a_factory(W, x):
    layers = [_Layer(W)]
    return np.sum(layers[0](x))


@pytest.mark.parametrize("f, field", [(listed_dataclass_with_a_factory, "layers_0_seen"),
                                      (held_dataclass_with_a_factory, "layers_a_seen")],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_a_dataclass_with_a_factory_in_a_list_or_dict_only_read_is_its_fields(f, field):
    """The list (or the dict of constant keys) is one name per object
    (``object_lists.py``), so desugar binds the factory's field as the generated
    ``__init__`` does (in a dict, once the lowering's: refused)."""
    assert f"{field} = []" in desugared(f)
    check_grad(f, (W0, X0), wrt=(0, 1))


class _Shadowed(_Pair):
    def a(self):                # in the place of the field a: p.a is the method
        return 5.0


def field_shadowed_by_a_method(x):
    pairs = [_Shadowed(x, 2.0 * x)]
    return sum(np.sum(p.a() * p.b) for p in pairs)


def test_a_method_in_the_place_of_a_field_is_the_method():
    """The lowering read ``p.a`` as the field (so ``p.a()`` was refused as a
    method of a tuple)."""
    check_value_and_grad(field_shadowed_by_a_method, (X0,))


@dataclasses.dataclass
class _Scale:
    s: float = 2.0


@dataclasses.dataclass
class _Scaled:
    w: np.ndarray
    scale: _Scale = dataclasses.field(default_factory=_Scale)


def scaled_by_a_factory_record(x):
    o = _Scaled(x * 2.0)
    return np.sum(o.w * o.scale.s)


def test_a_default_factory_that_is_a_dataclass_makes_its_record():
    """The factory's call desugar writes has the field's line (a bare AttributeError
    from the writer before)."""
    x = np.array([0.5, 1.5])
    value, _ = tc.value_and_grad(scaled_by_a_factory_record)(x)
    np.testing.assert_allclose(value, scaled_by_a_factory_record(x))
    check_grad(scaled_by_a_factory_record, (x,))


# --- a field of a replaced named tuple read at once (`m._replace(mu=v).mu`) --------------

def replaced_field_read_at_once(x):
    p = _Pair(x, 3.0 * x)
    return np.sum(p._replace(a=x * 2.0).a * p._replace(a=x).b)


def replaced_field_beside_a_computed_one(x):
    p = _Pair(x, 3.0 * x)
    return np.sum(p._replace(a=x * 2.0, b=np.sin(x)).a)


def test_a_field_of_a_replaced_named_tuple_read_at_once_is_its_value():
    """``p._replace(a=v).a`` is ``v`` (and ``.b`` of it ``p.b``): no tuple made, which
    the lowering made (its construction sat inside an expression); where the call
    computes another value (``b=np.sin(x)``, which Python evaluates) the field is
    read from the display of the values the call gives, which Python evaluates too:
    ``(x * 2.0, np.sin(x))[0]`` (the lowering made the tuple)."""
    text = desugared(replaced_field_read_at_once)
    assert "_Pair" not in text and "np.sum(x * 2.0 * p_b)" in text, text
    text = desugared(replaced_field_beside_a_computed_one)
    assert "_Pair" not in text and "(x * 2.0, np.sin(x))[0]" in text, text
    for f in (replaced_field_read_at_once, replaced_field_beside_a_computed_one):
        check_value_and_grad(f, (X0,))
        check_grad(f, (X0,), df=tc.grad(f, checkpoint=True, snapshots=2))
