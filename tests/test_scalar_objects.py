"""desugar/scalar_objects.py (with inline_functions.py): an object of the user's
class made in the function is written as one name per attribute, its
``__init__`` and methods inlined with ``self`` standing for it; an object that
is more than its attributes stays an object, for the lowering."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad, check_value_and_grad, numeric_grad
from tangent_ckpt.compiler.pipeline import desugared

RNG = np.random.default_rng(7)
W0 = RNG.normal(size=(3, 3)) * 0.5
XS = RNG.normal(size=(5, 3))


class _Base:
    def __init__(self, n):
        super().__init__()            # object.__init__: nothing
        self.n = n


class _Cell(_Base):
    steps = 0                         # a class default the object adds to
    dt = 0.5                          # read only: the class's number

    def __init__(self, W, n=3):
        super().__init__(n)
        self.W = W
        self.h = np.zeros(n)

    def step(self, x):
        self.h = np.tanh(self.W @ self.h + x) * self.dt + self.h * (1 - self.dt)
        self.steps += 1
        return self.h


def cell_over_inputs(W, xs):
    cell = _Cell(W)
    total = 0.0
    for x in xs:
        total = total + np.sum(cell.step(x) ** 2)
    return total * cell.steps


def test_an_object_made_here_is_one_name_per_attribute():
    text = desugared(cell_over_inputs)
    assert "cell." not in text and "_Cell" not in text and "super" not in text, text
    assert "cell_steps = 0" in text and "cell_steps += 1" in text, text
    assert "cell_h = np.tanh(cell_W @ cell_h + x) * 0.5" in text, text  # dt is the class's
    check_value_and_grad(cell_over_inputs, (W0, XS), wrt=(0, 1))


class _CountingCell:
    """A layer called as a function, counting its calls (cs231n-style modules)."""

    def __init__(self, W):
        self.W = W
        self.calls = 0

    def __call__(self, h):
        self.calls += 1
        return np.tanh(self.W @ h)


COUNTING = _CountingCell(np.array([[0.5, 0.1], [0.2, 0.4]]))


def called_object_made_here(W, h, n):
    cell = _CountingCell(W)
    for t in range(n):
        h = cell(h)
    return np.sum(h) * cell.calls


def called_object_of_the_module(h, n):
    for t in range(n):
        h = COUNTING(h) * 0.5
    return np.sum(h)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_an_object_called_as_a_function_runs_its_call_method_inlined(options):
    """cell(h) is type(cell).__call__(cell, h): written cell.__call__(h), inlined
    like cell.forward(h) (a __call__ counting its calls in place was refused,
    'writes in place into an array its object holds', where forward was not)."""
    text = desugared(called_object_made_here)
    assert "cell_calls += 1" in text and "cell(" not in text, text
    h = np.array([0.3, 0.5])
    check_grad(called_object_made_here, (W0[:2, :2], h, 3), wrt=(0, 1),
               df=tc.grad(called_object_made_here, wrt=(0, 1), **options))
    check_grad(called_object_of_the_module, (h, 3),
               df=tc.grad(called_object_of_the_module, **options))


@pytest.mark.parametrize("options", [{"checkpoint": True, "snapshots": 2}])
def test_an_objects_names_are_checkpointed_like_written_out(options):
    check_grad(cell_over_inputs, (W0, XS), wrt=(0, 1),
               df=tc.grad(cell_over_inputs, wrt=(0, 1), **options))


class _Layer:
    def __init__(self, W):
        self.W = W

    def forward(self, x):
        return np.tanh(self.W @ x)


class _Net:
    def __init__(self, W):
        self.first = _Layer(W)        # an object in an attribute: a later round's
        self.second = _Layer(W.T * 0.5)

    def forward(self, x):
        return self.second.forward(self.first.forward(x))


def net_of_layers(W, x):
    net = _Net(W)
    return np.sum(net.forward(x) ** 2)


def test_objects_held_in_attributes_are_names_too():
    text = desugared(net_of_layers)
    assert "net_first_W = W" in text and "." not in text.replace("np.", "").replace(
        "0.5", "").replace(".T", ""), text
    check_value_and_grad(net_of_layers, (W0, XS[0]), wrt=(0, 1))


def _norm(layer):
    return np.sum(layer.W ** 2)


def handed_to_a_helper(W, x):
    layer = _Layer(W)
    return np.sum(layer.forward(x)) + _norm(layer)   # the helper is inlined: still names


def kept_in_a_list(W, x):
    layer = _Layer(W)
    layers = [layer]                  # the list's item IS layer (object_lists.py)
    return np.sum(layers[0].forward(x) * layer.forward(x))


def kept_in_a_returned_list(W, x):
    layer = _Layer(W)
    layers = [layer]                  # more than its attributes: the lowering's object
    return np.sum(layers[0].forward(x) * layer.forward(x)), layers


def test_an_object_handed_to_a_helper_or_kept_in_a_list_only_read_is_names():
    assert "layer." not in desugared(handed_to_a_helper)
    assert "layer = _Layer(W)" not in desugared(kept_in_a_list)
    assert "layer = _Layer(W)" in desugared(kept_in_a_returned_list)
    for f in (handed_to_a_helper, kept_in_a_list):
        check_value_and_grad(f, (W0, XS[0]), wrt=(0, 1))


class _Scaled:
    def __init__(self, W):
        self.W = W

    @property
    def half(self):
        return self.W * 0.5

    @staticmethod
    def squash(v):
        return np.tanh(v)

    def pairs(self, xs):
        for x in xs:
            yield self.W @ x


def static_and_generator(W, xs):
    m = _Scaled(W)
    total = 0.0
    for y in m.pairs(xs):             # a generator method: its body at each yield
        total = total + np.sum(m.squash(y))
    return total


def read_through_a_property(W, xs):
    m = _Scaled(W)
    return np.sum(m.squash(m.W @ xs[0])) + np.sum(m.half)  # the getter's call, inlined


def test_static_methods_generator_methods_and_properties_keep_their_meaning():
    assert "m." not in desugared(static_and_generator)
    assert "m." not in desugared(read_through_a_property)  # (the lowering's object before)
    assert "half_result = m_W * 0.5" in desugared(read_through_a_property)
    for f in (static_and_generator, read_through_a_property):
        check_value_and_grad(f, (W0, XS), wrt=(0, 1))


def made_in_each_iteration(W, xs):
    total = 0.0
    for x in xs:
        cell = _Cell(W)               # a new object each time: its steps start at 0
        cell.step(x)
        total = total + np.sum(cell.step(x)) * cell.steps
    return total


def test_an_object_made_in_a_loop_starts_from_its_class_defaults_each_time():
    text = desugared(made_in_each_iteration)
    assert text.count("cell_steps = 0") == 1 and "cell." not in text, text
    check_value_and_grad(made_in_each_iteration, (W0, XS), wrt=(0, 1))


class _Shared:
    history = []                      # a class's list: every object appends to it

    def __init__(self, W):
        self.W = W

    def forward(self, x):
        self.history.append(1)
        return self.W @ x


def a_mutable_class_attribute(W, x):
    m = _Shared(W)
    return np.sum(m.forward(x))


def test_an_object_whose_class_holds_a_list_stays_an_object():
    assert "m = _Shared(W)" in desugared(a_mutable_class_attribute)


def _cubic_force(x):
    return -x * (1.0 + 0.1 * x * x)


class _Yoshida:
    w1 = 1.0 / (2.0 - 2.0 ** (1.0 / 3.0))
    w0 = -(2.0 ** (1.0 / 3.0)) * w1
    cs = [w1 / 2, (w0 + w1) / 2, (w0 + w1) / 2, w1 / 2]   # a class's list, only read
    ds = [w1, w0, w1]

    def __init__(self, force, dt):
        self.force = force
        self.dt = dt

    def step(self, x, p):
        for k in range(3):
            x = x + self.cs[k] * self.dt * p
            p = p + self.ds[k] * self.dt * self.force(x)
        return x + self.cs[3] * self.dt * p, p


def yoshida_steps(x0, p0):
    o = _Yoshida(_cubic_force, 0.1)
    x, p = o.step(x0, p0)
    for _ in range(4):
        x, p = o.step(x, p)
    return np.sum(x ** 2 + p ** 2)


def yoshida_looped(x0, p0):
    o = _Yoshida(_cubic_force, 0.1)
    x, p = x0, p0
    for _ in range(4):
        for c in o.cs:
            x = x + c * o.dt * p
        p = p + o.ds[0] * len(o.ds) * o.force(x)
    return np.sum(x ** 2 + p ** 2)


@pytest.mark.parametrize("fn", [yoshida_steps, yoshida_looped])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_a_list_of_the_class_read_only_by_item_len_or_loop_is_the_classs(fn, options):
    # was refused: "a write into 'o' may also change 'p'" (two calls of o.step), and
    # for yoshida_looped "a function stored on 'force'" once the object stayed whole
    text = desugared(fn)
    assert "o = _Yoshida" not in text and "_Yoshida.cs" in text
    args = (np.array([0.3, -0.2]), np.array([0.1, 0.4]))
    check_grad(fn, args, wrt=(0, 1), df=tc.grad(fn, wrt=(0, 1), **options))


def test_a_list_of_the_class_is_read_when_the_gradient_runs():
    df = tc.grad(yoshida_looped, wrt=0)
    args = (np.array([0.3, -0.2]), np.array([0.1, 0.4]))
    df(*args)
    saved = list(_Yoshida.cs)
    try:
        _Yoshida.cs[1] = 0.7              # changed after compiling: Python reads it anew
        assert np.allclose(df(*args), numeric_grad(yoshida_looped, args, (0,))[0], atol=1e-6)
    finally:
        _Yoshida.cs[:] = saved


class _Falling:
    G = np.array([0.0, -9.8])         # the class's array, only read

    def __init__(self, v):
        self.v = v

    def step(self, dt):
        self.v = self.v + self.G * dt


def falling(v0, n):
    body = _Falling(v0)
    for _ in range(n):
        body.step(0.1)
    return np.sum(body.v ** 2)


def test_an_array_of_the_class_the_code_only_reads_is_the_classs():
    text = desugared(falling)
    assert "body_v = body_v + _Falling.G * 0.1" in text, text
    check_value_and_grad(falling, (np.array([1.0, 2.0]), 3))


class _Cached:
    """Made once: ``_Cached(W)`` returns the first object again (its own ``__new__``)."""
    made = None

    def __new__(cls, W):
        if cls.made is None:
            cls.made = super().__new__(cls)
            cls.made.calls = 0
        return cls.made

    def __init__(self, W):
        self.W = W
        self.calls += 1


def made_by_its_own_new(W, x):
    a = _Cached(W)
    b = _Cached(W * 2.0)
    return np.sum(a.W @ x) * a.calls + np.sum(b.W @ x)


def test_a_class_with_its_own_new_stays_an_object():
    """``a`` and ``b`` are one object: one name per attribute for each would give
    ``a.W`` the value ``W`` where Python reads ``W * 2.0``."""
    assert "a = _Cached(W)" in desugared(made_by_its_own_new)


# --- objects the call gives: one parameter per attribute -------------------------
class _GivenLayer:
    scale = 2.0                       # the class's number, read only

    def __init__(self, W, b, steps):
        self.W, self.b, self.steps = W, b, steps
        self.calls = 0

    def forward(self, h):
        self.calls += 1               # a constant of the object's own, stored over
        return np.tanh(self.W @ h + self.b) * self.scale

    def loss(self, x):
        h = x
        for t in range(self.steps):
            h = self.forward(h)
        return np.sum(h ** 2) + 0.01 * self.calls


def layer_loss(layer, x):
    return layer.loss(x)


def test_a_bound_self_is_one_parameter_per_attribute():
    """``tc.grad(layer.loss)``: ``self`` is given; its arrays become parameters,
    its int a constant, and its methods are inlined by desugar."""
    layer = _GivenLayer(W0, RNG.normal(size=3), 3)
    from tangent_ckpt.container_args import structure_of
    text = desugared(_GivenLayer.loss, {0: structure_of(layer)})
    assert text.splitlines()[0] == "def loss(self_W, self_b, x):", text
    assert "self." not in text and "range(3)" in text and "* 2.0" in text, text
    assert "self_calls = 0" in text and "self_calls += 1" in text, text
    x = RNG.normal(size=3)
    # each evaluation of a fresh object: the primal counts its calls on the object
    expected = numeric_grad(lambda x: _GivenLayer(layer.W, layer.b, 3).loss(x), (x,))[0]
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        np.testing.assert_allclose(tc.grad(layer.loss, **options)(x), expected, rtol=1e-6,
                                   atol=1e-8)
    assert layer.calls == 0           # the gradient never changes the object


def test_an_object_in_wrt_is_one_parameter_per_attribute_and_its_gradient_an_object():
    layer = _GivenLayer(W0, RNG.normal(size=3), 2)
    x = RNG.normal(size=3)
    got = tc.grad(layer_loss, wrt=0)(layer, x)
    assert type(got) is _GivenLayer and got.steps == 2
    eps = 1e-6
    for attr in ("W", "b"):
        value = getattr(layer, attr)
        numeric = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            for sign in (1, -1):
                moved = value.copy()
                moved[i] += sign * eps
                other = _GivenLayer(*(moved if a == attr else getattr(layer, a)
                                 for a in ("W", "b")), 2)
                numeric[i] += sign * layer_loss(other, x) / (2 * eps)
        np.testing.assert_allclose(getattr(got, attr), numeric, rtol=1e-6, atol=1e-8)


class _GivenHolder:
    def __init__(self, parts):
        self.parts = parts            # a list: the lowering lays it out


def holder_loss(holder, x):
    return np.sum((holder.parts[0] @ x) ** 2)


def handed_on(layer, x):
    return _apart(layer) * np.sum(x)


def _apart(obj):
    return np.sum(vars(obj)["W"])  # the object handed to a builtin


def test_an_object_that_is_more_than_leaves_stays_the_lowerings():
    from tangent_ckpt.container_args import structure_of
    holder = _GivenHolder([W0])
    text = desugared(holder_loss, {0: structure_of(holder)})
    assert text.splitlines()[0] == "def holder_loss(holder, x):", text
    x = RNG.normal(size=3)
    np.testing.assert_allclose(tc.grad(holder_loss, wrt=1)(holder, x),
                               numeric_grad(holder_loss, (holder, x), wrt=(1,))[0],
                               rtol=1e-6, atol=1e-8)
    layer = _GivenLayer(W0, RNG.normal(size=3), 2)
    assert desugared(handed_on, {0: structure_of(layer)}).splitlines()[0] == \
        "def handed_on(layer, x):"


# --- an array the class holds, which the object stores over -------------------------------
class _Smoothed:
    mem = np.zeros(3)

    def __init__(self, rate):
        self.rate = rate

    def step(self, x):
        self.mem = self.rate * self.mem + x   # reads the class's array, the first time
        return self.mem


class _SmoothedInPlace(_Smoothed):
    def step(self, x):
        self.mem = self.mem * 1.0
        self.mem[0] = x[0]                    # the object's own array by now
        return self.mem


def smoothed_in_a_loop(x, n):
    s = _Smoothed(0.5)
    t = _SmoothedInPlace(0.5)
    for _ in range(n):
        y = s.step(x) + t.step(x)
    return np.sum(y * x) + np.sum(s.mem * _Smoothed.mem)


def test_an_array_class_default_the_object_stores_over_is_bound_where_it_is_made():
    """``self.mem`` reads the class's array until the object stores its own: the
    name starts as ``Cls.mem`` (a write into it in place before that is the
    class's, which the fence refuses naming the line, see test_classes)."""
    text = desugared(smoothed_in_a_loop).split("\n\n\n")[0]
    assert "s_mem = _Smoothed.mem" in text and "t_mem = _SmoothedInPlace.mem" in text and \
        ".step" not in text, text
    x = np.array([0.3, -0.2, 0.5])
    check_value_and_grad(smoothed_in_a_loop, (x, 3), rel=1e-12)
    check_grad(smoothed_in_a_loop, (x, 3),
               df=tc.grad(smoothed_in_a_loop, checkpoint=True, snapshots=2))
    np.testing.assert_array_equal(_Smoothed.mem, 0.0)


# --- a nested function's own variable of the object's name ---------------------------
class _Activated:
    def __init__(self, W, act=np.tanh):
        self.W = W
        self.act = act

    def loss(self, x):
        return np.sum(self.act(self.W @ x) ** 2)


def made_by_a_nested_factory_of_its_own_name(W, x):
    def make(W):
        model = _Activated(W, np.sin)    # make's own ``model``, not the caller's
        return model
    model = make(W)
    return model.loss(x)


def a_nested_function_reading_the_name(W, x):
    model = _Activated(W)
    scale = lambda: np.sum(model.W)      # noqa: E731  (reads the caller's model)
    return model.loss(x) * scale()


def test_a_nested_functions_own_variable_of_the_name_is_no_use_of_the_object():
    """``def make(W): model = ...`` binds make's own ``model``: the caller's
    ``model`` is still one name per attribute (was the lowering's object)."""
    text = desugared(made_by_a_nested_factory_of_its_own_name).split("\n\n\n")[0]
    assert "_Activated" not in text and "model_act = np.sin" in text, text
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        check_grad(made_by_a_nested_factory_of_its_own_name, (W0, XS[0]), wrt=(0, 1),
                   df=tc.grad(made_by_a_nested_factory_of_its_own_name, wrt=(0, 1),
                              **options))
    value, _ = tc.value_and_grad(a_nested_function_reading_the_name, wrt=(0,))(W0, XS[0])
    np.testing.assert_allclose(value, a_nested_function_reading_the_name(W0, XS[0]),
                               rtol=1e-12)
