"""What a user's method writes (compiler/desugar/method_writes.py), as the aliasing fence
and the lowering use it: a method named like a builtin's (``kf.update(z)``) is the
user's own; a method adding into an attribute in place (``self.P += Q``) changes
the array the caller may also name -- refused then, differentiated otherwise."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.compiler.desugar.method_writes import writes_self_in_place
from tangent_ckpt.errors import TransformError

HERE = "test_method_writes.py"


class Filter:
    def __init__(self, P, R):
        self.P = P
        self.R = R

    def update(self):  # dict.update's name: the fence must look the method up
        S = self.P @ self.R
        self.P = self.P - 0.5 * S
        return S


def filtered(P0, R):
    kf = Filter(P0, R)
    total = 0.0
    for k in range(3):
        S = kf.update()
        total = total + np.sum(S)
    return total + np.sum(kf.P)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}], ids=["taped", "checkpointed"])
def test_a_method_named_update_is_the_users_own(options):
    df = tc.grad(filtered, wrt=(0, 1), **options)
    check_grad(filtered, (np.eye(2) + 0.1, 0.3 * np.eye(2)), wrt=(0, 1), df=df)


class Bumper:
    def __init__(self, P):
        self.P = P

    def bump(self, x):
        self.P += x  # in place when P is an array
        return 1.0

    def bump_twice(self, x):
        self.bump(x)
        self.bump(x)


def bumped_while_named(x):
    P = x * 1.0
    m = Bumper(P)
    r = m.bump(x)  # WRITE: Python changes P too
    return np.sum(P * x) * r


def bumped_through_another_method(x):
    P = x * 1.0
    m = Bumper(P)
    m.bump_twice(x)  # WRITE
    return np.sum(P * x)


@pytest.mark.parametrize("fn", [bumped_while_named, bumped_through_another_method])
def test_a_method_adding_into_an_array_the_caller_names_changes_it(fn):
    """``self.P += x`` where ``self.P`` is the caller's ``P``: refused while the
    lowering inlined the method ("a write into 'm' may also change 'P'"); desugar
    now writes the object as the name ``m_P``, and the view pass carries the
    write into ``P``."""
    check_grad(fn, (np.array([1.0, 2.0]),))


def bumped_fresh(x):
    m = Bumper(x * 1.0)
    m.bump(x)
    m.bump_twice(x)
    return np.sum(m.P * x)


def test_a_method_adding_into_an_array_only_the_object_holds_is_differentiated():
    check_grad(bumped_fresh, (np.array([1.0, 2.0]),))


def bumped_from_a_dict(x):
    P = x * 1.0
    ms = {"m": Bumper(P)}
    ms["m"].bump(x)  # a dict of constant keys only read: the name ms_m (object_lists.py)
    return np.sum(P * x)


def bumped_from_a_list(x):
    P = x * 1.0
    ms = [Bumper(P)]
    ms[0].bump(x)  # a list only read: the object is the name ms_0 (object_lists.py)
    return np.sum(P * x)


@pytest.mark.parametrize("f", [bumped_from_a_list, bumped_from_a_dict],
                         ids=lambda f: f.__name__)
def test_a_method_writing_in_place_on_an_object_in_a_container_is_differentiated(f):
    """Once refused in a dict ("Bumper.bump() writes in place": the fence did not
    know what ``ms["m"]`` was); the object is now a name, the write one into P."""
    value, _ = tc.value_and_grad(f)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(value, f(np.array([1.0, 2.0])), rtol=1e-12)
    check_grad(f, (np.array([1.0, 2.0]),))


def bumped_from_a_dict_stored_into(x):
    P = x * 1.0
    ms = {"m": Bumper(P)}
    ms["n"] = 1.0    # stored into: the dict stays the lowering's
    ms["m"].bump(x)  # WRITE: the fence does not know what ms["m"] is
    return np.sum(P * x)


def test_a_method_writing_in_place_on_an_object_the_fence_cannot_name_is_refused():
    f = bumped_from_a_dict_stored_into
    with pytest.raises(TransformError, match=rf"{HERE}:{line_of(f, '# WRITE')}"
                                             r": Bumper.bump\(\) writes in place"):
        tc.grad(f)(np.array([1.0, 2.0]))


def test_what_counts_as_writing_in_place():
    assert writes_self_in_place(Bumper.bump)
    assert writes_self_in_place(Bumper.bump_twice)  # through self.bump
    assert not writes_self_in_place(Filter.update)  # rebinds self.P only
    assert not writes_self_in_place(Bumper.__init__)


class Made:
    def __init__(self, w):
        self.w = w

    def fill(self):
        self.acc = np.zeros(3)  # a new array the method itself makes
        for j in range(3):
            self.acc[j] = self.w[j] * 2.0 + np.sum(self.acc[:j])
        self.acc += self.w

    def fill_a_view(self):
        self.acc = np.asarray(self.w)  # the object's own w, not a new array
        self.acc += 1.0

    def fill_and_keep(self):
        self.acc = np.zeros(3)
        self.last = self.acc  # a second name for it: the caller reads last
        self.acc += 1.0

    def fill_and_hand_on(self, sink):
        self.acc = np.zeros(3)
        sink(self)  # may keep self.acc
        self.acc += 1.0

    def fill_twice(self, other):
        self.acc = np.zeros(3)
        self.acc = other
        self.acc += 1.0


def test_writes_into_an_array_the_method_made_before_do_not_count():
    """Writes into ``self.acc`` right after ``self.acc = np.zeros(3)`` change an
    array nothing outside the call holds; any other binding or use that may
    keep it keeps them counting."""
    assert not writes_self_in_place(Made.fill)
    for method in (Made.fill_a_view, Made.fill_and_keep, Made.fill_and_hand_on,
                   Made.fill_twice):
        assert writes_self_in_place(method), method.__name__


# --- a counter attribute (self.t += 1) is a number, rebound: it writes no array ---------
class Counter:
    def __init__(self, lr, decay):
        self.lr = lr
        self.decay = decay  # the caller's array, read after the calls
        self.t = 0

    def step(self, p, g):
        self.t += 1
        return p - self.lr * g / self.t * self.decay


def counted_steps(x, decay):
    opt = Counter(0.1, decay)
    for i in range(3):
        x = opt.step(x, 2 * x)
    return np.sum(x * decay)


class CounterFromAnArgument:
    def __init__(self, t0):
        self.t = t0  # maybe the caller's array: += writes into it

    def tick(self):
        self.t += 1.0
        return self.t


def ticks_an_argument(x, t0):
    c = CounterFromAnArgument(t0)
    y = c.tick()  # WRITE
    return np.sum(y * x * t0)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 1}],
                         ids=["taped", "checkpointed"])
def test_a_counter_attribute_added_to_is_no_write_into_the_objects_arrays(options):
    """``self.t += 1`` where every store of ``t`` binds a number: NumPy rebinds it, so
    the constructor argument ``decay`` the caller reads later is not written (it was
    refused as "a write into 'opt' may also change 'decay'")."""
    x, decay = np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.7, 0.9])
    check_grad(counted_steps, (x, decay), wrt=(0, 1),
               df=tc.grad(counted_steps, wrt=(0, 1), **options))


def test_an_attribute_bound_to_an_argument_and_added_to_is_still_a_write():
    """``self.t += 1.0`` where ``self.t`` is the caller's ``t0``: a write into
    ``t0``, which the caller reads after (refused while the lowering inlined the
    method; the object is now the name ``c_t``, and the view pass follows it)."""
    check_grad(ticks_an_argument, (np.ones(3) * 1.3, np.ones(3) * 0.7), wrt=(0, 1))


class _Quiet:
    def __init__(self, w):
        super().__init__()  # object.__init__
        self.w = w

    def step(self):
        self.w = self.w * 0.5

    def helper(self):
        self.w = self.w + 1.0

    def calls_helper(self):
        self.helper()


class _Loud(_Quiet):
    def step(self):
        self.w += 1.0

    def helper(self):
        self.w *= 2.0


class _Middle(_Quiet):
    def step(self):
        super().step()


class _Diamond(_Middle, _Loud):
    pass


def test_super_and_overridden_methods_are_judged_for_the_objects_class():
    """``super().step()`` runs the next ``step`` in the MRO of the object's class
    (on a ``_Diamond``, ``_Middle.step`` reaches ``_Loud.step``, which writes in
    place); ``self.helper()`` runs the subclass's override.  Without the class,
    a ``super()`` call is a write (unsure)."""
    assert not writes_self_in_place(_Quiet.__init__, cls=_Quiet)
    assert not writes_self_in_place(_Middle.step, cls=_Middle)
    assert writes_self_in_place(_Middle.step, cls=_Diamond)
    assert writes_self_in_place(_Middle.step)
    assert not writes_self_in_place(_Quiet.calls_helper, cls=_Quiet)
    assert writes_self_in_place(_Quiet.calls_helper, cls=_Loud)


def _rebind(obj):
    obj.w = obj.w * 2.0


def _bump(obj):
    obj.w += 1.0


def _fill(a):
    a[0] = 1.0


class _HandsItselfOn(_Quiet):
    def __init__(self, w):
        _Quiet.__init__(self, w)      # the base's __init__ by name: rebinds only
        _rebind(self)

    def bump(self):
        _bump(self)

    def fill(self):
        _fill(self.w)


def test_an_object_handed_to_a_function_by_name_is_followed_into_it():
    """``Base.__init__(self)``, ``helper(self)``: the function's writes through the
    parameter that gets the object (it was always "unsure", so q32v's
    ``Activation.__init__`` calling ``Layer.__init__(self)`` was taken for a
    write); an attribute handed on (``fill(self.w)``) may still be written."""
    assert not writes_self_in_place(_HandsItselfOn.__init__, cls=_HandsItselfOn)
    assert writes_self_in_place(_HandsItselfOn.bump, cls=_HandsItselfOn)
    assert writes_self_in_place(_HandsItselfOn.fill, cls=_HandsItselfOn)
