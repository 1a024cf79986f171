"""container_args.py + lower/containers.py: ``wrt`` naming an object -- a
``@dataclass`` instance or a plain object -- whose float attributes are the
parameters.  The body reads ``params.W`` and calls ``params.method(x)``
(inlined on the attributes' variables); the gradient is a shallow copy of the
object with each float attribute set to its gradient; the user's object is
never changed.  Objects inside a wrt list (a list of dataclass layers) too."""

import copy
import dataclasses

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_structured_leaves, numeric_grad
from tangent_ckpt.container_args import leaves_of
from tangent_ckpt.errors import TangentCkptError, WrtError

RNG = np.random.default_rng(18)
X = RNG.standard_normal(3)
TAPED = {}
CHECKPOINTED = {"checkpoint": True, "snapshots": 2}


@dataclasses.dataclass
class Params:
    W1: np.ndarray
    b1: np.ndarray
    W2: np.ndarray
    b2: np.ndarray
    steps: int = 3

    def hidden(self, x):
        return np.tanh(self.W1 @ x + self.b1)


class Model:
    """A plain class: its float attributes (an array and a float) are the
    parameters, its int attribute a constant of the compiled gradient."""

    def __init__(self, W, scale):
        self.W = W
        self.scale = scale
        self.steps = 4

    def step(self, h):
        return np.sin(self.W @ h) * self.scale

    def loss(self, x):
        h = x
        for _ in range(self.steps):
            h = self.step(h)
        return np.sum(h ** 2)


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray

    def forward(self, h):
        return np.tanh(self.W @ h + self.b)


def mlp_params():
    return Params(RNG.standard_normal((4, 3)) * 0.5, RNG.standard_normal(4),
                  RNG.standard_normal((2, 4)) * 0.5, RNG.standard_normal(2))


def mlp_loss(params, x):
    h = x
    for _ in range(params.steps):  # a loop the checkpointed form checkpoints
        h = np.cos(h) * 0.9
    h = params.hidden(h)
    return np.sum((params.W2 @ h + params.b2) ** 2)


def layers_loss(layers, x):
    h = x
    for t in range(3):
        for layer in layers:
            h = layer.forward(h)
    return np.sum(h ** 2) + np.sum(layers[0].W ** 2)


def first_layer_loss(layers, x):
    first = layers[0]
    return np.sum(first.forward(x) * layers[1].b)


def check_object_grad(f, args, wrt=(0,), **options):
    """tc.grad(f, wrt) of object arguments: the gradient has each argument's type
    and structure, its leaves match central finite differences, the arguments
    are unchanged; returns the gradients."""
    before = copy.deepcopy(args)
    got = tc.grad(f, wrt=wrt, **options)(*args)
    check_structured_leaves(f, args, wrt, got)
    for k, g in zip(wrt, got):
        assert type(g) is type(args[k]) and g is not args[k]
    for old, new in zip(leaves_of(before), leaves_of(args)):
        np.testing.assert_array_equal(old, new)  # the user's objects are not touched
    return got


@pytest.mark.parametrize("options", [TAPED, CHECKPOINTED], ids=["taped", "checkpointed"])
def test_a_dataclass_mlp_has_a_gradient_of_its_type(options):
    params = mlp_params()
    (g,) = check_object_grad(mlp_loss, [params, X], **options)
    assert isinstance(g, Params) and g.steps == 3  # the int field is kept as it was
    assert g.W1.shape == (4, 3) and g.b2.shape == (2,)
    assert params.W1 is not g.W1


def test_checkpointed_equals_taped_for_a_dataclass():
    params = mlp_params()
    taped = tc.grad(mlp_loss)(params, X)
    df = tc.grad(mlp_loss, **CHECKPOINTED)
    checkpointed = df(params, X)
    for a, b in zip(leaves_of(taped), leaves_of(checkpointed)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert "CheckpointedLoop" in df.source
    assert "def dmlp_loss(params_W1, params_b1, params_W2, params_b2, x" in df.source


@pytest.mark.parametrize("options", [TAPED, CHECKPOINTED], ids=["taped", "checkpointed"])
def test_a_plain_object_through_its_unbound_method(options):
    model = Model(RNG.standard_normal((3, 3)) * 0.6, 0.8)
    (g,) = check_object_grad(Model.loss, [model, X], **options)
    assert isinstance(g, Model) and g.steps == 4
    assert np.ndim(g.scale) == 0 and g.W.shape == (3, 3)


def test_a_plain_object_and_another_argument_together():
    model = Model(RNG.standard_normal((3, 3)) * 0.6, 0.8)
    g_model, g_x = check_object_grad(Model.loss, [model, X], wrt=(0, 1))
    assert isinstance(g_model, Model) and g_x.shape == X.shape


@pytest.mark.parametrize("options", [TAPED, CHECKPOINTED], ids=["taped", "checkpointed"])
def test_a_list_of_dataclass_layers(options):
    layers = [Layer(RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal(3))
              for _ in range(2)]
    (g,) = check_object_grad(layers_loss, [layers, X], **options)
    assert isinstance(g, list) and len(g) == 2 and all(isinstance(x, Layer) for x in g)


def test_an_object_taken_from_a_list_by_a_constant_index():
    layers = [Layer(RNG.standard_normal((3, 3)), RNG.standard_normal(3)) for _ in range(2)]
    (g,) = check_object_grad(first_layer_loss, [layers, X])
    assert np.any(g[1].b != 0) and np.all(g[1].W == 0)  # layers[1].W is not read


def test_another_constant_attribute_compiles_another_gradient():
    model = Model(RNG.standard_normal((3, 3)) * 0.6, 0.8)
    df = tc.grad(Model.loss)
    first = df(model, X)
    model.steps = 2
    second = df(model, X)
    assert not np.allclose(first.W, second.W)
    check_object_grad(Model.loss, [model, X])


def test_a_frozen_dataclass():
    @dataclasses.dataclass(frozen=True)
    class Frozen:
        W: np.ndarray

    frozen = Frozen(RNG.standard_normal((3, 3)))
    (g,) = check_object_grad(lambda p, x: np.sum(np.tanh(p.W @ x)), [frozen, X])
    assert isinstance(g, Frozen)


@dataclasses.dataclass
class Net:
    """Objects hold containers and objects: a list of arrays, a layer, a name."""
    Ws: list
    head: Layer
    name: str = "net"


def net_loss(net, x):
    h = x
    for _ in range(2):
        for W in net.Ws:
            h = np.tanh(W @ h)
    return np.sum(net.head.forward(h) * net.Ws[0][0, :2])


@pytest.mark.parametrize("options", [TAPED, CHECKPOINTED], ids=["taped", "checkpointed"])
def test_an_object_holding_a_list_and_an_object(options):
    net = Net([RNG.standard_normal((3, 3)) * 0.6 for _ in range(2)],
              Layer(RNG.standard_normal((2, 3)), RNG.standard_normal(2)))
    (g,) = check_object_grad(net_loss, [net, X], **options)
    assert isinstance(g.Ws, list) and isinstance(g.head, Layer) and g.name == "net"
    assert g.head is not net.head and g.Ws is not net.Ws


def test_a_dict_of_objects():
    layers = {"a": Layer(RNG.standard_normal((3, 3)), RNG.standard_normal(3)),
              "b": Layer(RNG.standard_normal((3, 3)), RNG.standard_normal(3))}
    (g,) = check_object_grad(lambda d, x: np.sum(d["a"].forward(x) * d["b"].b), [layers, X])
    assert list(g) == ["a", "b"] and isinstance(g["a"], Layer)


def assigns_an_attribute(params, x):
    params.b1 = params.b1 * 2.0
    return np.sum(params.hidden(x))


class Slotted:
    __slots__ = ("W",)

    def __init__(self, W):
        self.W = W


class WithIndices:
    def __init__(self, W):
        self.W = W
        self.rows = np.arange(3)


def test_assigning_an_attribute_of_a_wrt_object_is_differentiated():
    """``params.b1 = params.b1 * 2.0``: from there on ``params.b1`` is a variable of
    the gradient, as an object made in the function holds it; the gradient is
    with respect to the attributes' values at the call, and the caller's object is
    never changed (lower/outside_objects.py)."""
    check_object_grad(assigns_an_attribute, (mlp_params(), X), wrt=(0, 1))


@pytest.mark.parametrize("obj, words", [
    (Slotted(np.ones((3, 3))), "__slots__"),
    (WithIndices(np.ones((3, 3))), ".rows is a ndarray of dtype int64"),
], ids=["slots", "int-array"])
def test_objects_that_cannot_be_followed_are_refused(obj, words):
    with pytest.raises(WrtError) as info:
        tc.grad(lambda p, x: np.sum(p.W @ x))(obj, X)
    assert words in str(info.value)


def puts_a_layer_in_a_list(layers, x):
    held = [layers[0]]
    return np.sum(held[0].W @ x)


def test_an_object_of_a_wrt_list_put_in_a_list_is_followed():
    # [layers[0]] holds the object itself (a list of objects, unrolled like one
    # made inside: probe_findings F14), no longer refused as an object used as a value
    layers = [Layer(RNG.standard_normal((3, 3)), RNG.standard_normal(3))]
    (g,) = check_object_grad(puts_a_layer_in_a_list, [layers, X])
    assert np.any(g[0].W != 0) and np.all(g[0].b == 0)


def prints_a_layer(layers, x):
    print(layers[0])
    return np.sum(layers[0].W @ x)


def test_an_object_of_a_wrt_list_used_as_a_value_is_refused():
    layers = [Layer(np.ones((3, 3)), np.ones(3))]
    with pytest.raises(TangentCkptError) as info:
        tc.grad(prints_a_layer)(layers, X)
    assert "test_object_wrt.py:" in str(info.value) and info.value.construct == "layers[0]"


def test_flat_gradients_of_an_object_are_refused():
    with pytest.raises(TangentCkptError, match="ravel"):
        tc.grad(mlp_loss, flat=True)(mlp_params(), X)


# --- the bound self of tc.grad(model.loss), not in wrt -------------------------------
class Printed(Model):
    def loss(self, x):
        print("model", self)  # self used as a value: read when the code runs
        return np.sum(np.sin(self.W @ x) * self.scale)


@pytest.mark.parametrize("options", [TAPED, CHECKPOINTED], ids=["taped", "checkpointed"])
def test_a_bound_method_calls_the_methods_of_its_self(options):
    """tc.grad(model.loss): self.step(h) is inlined on self's attributes (passed as
    parameters, not differentiated); the gradient is the input's."""
    model = Model(RNG.standard_normal((3, 3)) * 0.6, 0.8)
    W_before = model.W.copy()
    check_grad(model.loss, (X,), df=tc.grad(model.loss, **options))
    np.testing.assert_array_equal(model.W, W_before)


def test_a_bound_self_used_as_a_value_is_read_when_the_code_runs(capsys):
    model = Printed(RNG.standard_normal((3, 3)), 0.5)
    check_grad(model.loss, (X,))
    assert "model <" in capsys.readouterr().out


# --- objects passed outside wrt, their methods called ---------------------------------
class Dense:
    """A layer as numpy MLPs write it: its activation a NumPy function it holds."""

    def __init__(self, W, b, act=np.tanh):
        self.W = W
        self.b = b
        self.act = act

    def forward(self, x):
        return self.act(self.W @ x + self.b)


class Network:
    def __init__(self, layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def loss(self, x, y):
        return np.mean((self.forward(x) - y) ** 2)


class Cell:
    def __init__(self, Wx, Wh):
        self.Wx = Wx
        self.Wh = Wh

    def step(self, h, x):
        return np.tanh(self.Wx @ x + self.Wh @ h)


class Caching(Dense):
    def forward(self, x):
        self.output = self.act(self.W @ x + self.b)  # stored on the caller's object
        return self.output


def predict(x, layers):
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x ** 2)


def network_loss(x, y, net):
    return net.loss(x, y)


def one_layer(x, layer):
    return np.sum(layer.forward(x) * x)


def rnn_loss(xs, h, cell):
    for t in range(xs.shape[0]):
        h = cell.step(h, xs[t])
    return np.sum(h ** 2)


def _layers():
    return [Dense(RNG.standard_normal((4, 3)) * 0.5, RNG.standard_normal(4)),
            Dense(RNG.standard_normal((3, 4)) * 0.5, RNG.standard_normal(3), act=np.sin)]


OUTSIDE = {
    "predict": (predict, lambda: (X, _layers()), (0,)),
    "network_loss": (network_loss, lambda: (X, RNG.standard_normal(3), Network(_layers())),
                     (0, 1)),
    "one_layer": (one_layer, lambda: (X, Dense(RNG.standard_normal((3, 3)), X * 0.5,
                                               act=np.sin)), (0,)),
    "rnn": (rnn_loss, lambda: (RNG.standard_normal((6, 3)), np.zeros(3),
                               Cell(RNG.standard_normal((3, 3)) * 0.4,
                                    RNG.standard_normal((3, 3)) * 0.4)), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_a_method_of_an_object_passed_outside_wrt_is_inlined_for_its_structure(name):
    """``predict(x, layers)``, ``net.loss(x, y)``, ``cell.step(h, x)`` with the
    objects passed outside ``wrt`` (their activation ``np.tanh`` held as an
    attribute): refused as run-time values, the gradient is compiled for their
    structure (their attributes passed as parameters, the function a constant);
    value, taped and checkpointed gradients exact, the objects unchanged."""
    f, make, wrt = OUTSIDE[name]
    args = make()
    before = copy.deepcopy(args)
    value, _ = tc.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(f(*copy.deepcopy(before)), rel=1e-12)
    taped = tc.grad(f, wrt=wrt)(*args)
    checkpointed = tc.grad(f, wrt=wrt, checkpoint=True, snapshots=2)(*args)
    for expected, a, b in zip(numeric_grad(f, args, wrt), taped, checkpointed):
        np.testing.assert_allclose(a, expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)
    for old, new in zip(leaves_of(before), leaves_of(args)):
        np.testing.assert_array_equal(old, new)


def stored_on_a_passed_layer(x, layer):
    y = layer.forward(x)
    return np.sum(y * layer.output)


def caching_layers(x, layers):
    for layer in layers:
        x = layer.forward(x)
    return np.sum(x * layers[0].output)


def reads_the_module_level_layer(x, layer):
    layer.forward(x)
    return np.sum(SHARED_LAYER.output * x)


SHARED_LAYER = Caching(np.eye(3) * 0.5, np.ones(3))


@pytest.mark.parametrize("f, given", [
    (stored_on_a_passed_layer, lambda: Caching(np.eye(3) * 0.5, np.ones(3))),
    (caching_layers, lambda: [Caching(np.eye(3) * 0.5, np.ones(3)),
                              Caching(np.eye(3) * 0.3, np.ones(3), act=np.sin)]),
], ids=["stored", "caching-list"])
def test_a_layer_passed_outside_wrt_caching_its_output_is_exact(f, given):
    """``self.output = ...`` in ``forward`` (as numpy MLPs write it): followed as
    a variable; the caller's object is not changed (as for an object in wrt)."""
    layers = given()
    before = copy.deepcopy(layers)
    value, (g,) = tc.value_and_grad(f, wrt=(0,))(X, layers)
    assert value == pytest.approx(f(X, copy.deepcopy(before)), rel=1e-12)
    np.testing.assert_allclose(g, numeric_grad(f, (X, before), (0,))[0], rtol=1e-6, atol=1e-8)
    for old, new in zip(leaves_of(before), leaves_of(layers)):
        np.testing.assert_array_equal(old, new)


@pytest.mark.parametrize("f, given", [
    (caching_layers, lambda: [SHARED_LAYER, SHARED_LAYER]),
    (reads_the_module_level_layer, lambda: SHARED_LAYER),
], ids=["listed-twice", "module-level"])
def test_a_layer_passed_outside_wrt_that_is_one_the_code_reaches_otherwise_is_refused(
        f, given):
    """(Its attributes are parameters, its stores variables: the same object
    read under another name would be read as it was when called.)"""
    with pytest.raises(WrtError, match="are one object"):
        tc.grad(f, wrt=(0,))(X, given())


class Stepper:
    def __init__(self, W):
        self.W = W
        self.h = np.zeros(3)

    def step(self, x):
        self.h = np.tanh(self.W @ self.h + x)
        return self.h


def steps_each(cells, x):
    for c in cells:
        x = c.step(x)
    return np.sum(x)


def steps_one_reads_the_other(a, b, x):
    a.step(x)
    return np.sum(b.h * x)


@pytest.mark.parametrize("f, given", [
    (steps_each, lambda c: ([c, c],)),
    (steps_one_reads_the_other, lambda c: (c, c)),
], ids=["listed-twice", "passed-twice"])
def test_one_object_given_twice_to_code_storing_on_it_is_refused(f, given):
    """The gradient follows ``self.h = ...`` as a variable of each argument's
    attributes: one object given twice would be two (a wrong value before:
    the second ``step`` started from the object's old ``h``)."""
    W = RNG.standard_normal((3, 3)) * 0.4
    args = given(Stepper(W)) + (X,)
    with pytest.raises(WrtError, match=r"one object, and the function stores an attribute"):
        tc.grad(f, wrt=tuple(range(len(args) - 1)))(*args)
    distinct = given(Stepper(W))  # two objects: exact
    distinct = tuple([copy.copy(o) for o in d] if isinstance(d, list) else d
                     for d in distinct)
    if f is steps_one_reads_the_other:
        distinct = (Stepper(W), Stepper(W))
    value, _ = tc.value_and_grad(f, wrt=tuple(range(len(distinct))))(*distinct, X)
    assert value == pytest.approx(f(*copy.deepcopy(distinct), X), rel=1e-12)
