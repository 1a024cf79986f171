"""compiler/fence/aliasing.py + alias_values.py: what the aliasing fence proves
separate (issue #29, static precision).  Each program below writes in place
beside a name that does NOT share the written memory; the fence must let it
through, and its gradient (taped, and checkpointed with two snapshots) must
equal central finite differences.  The programs after them DO share memory
the write changes, and must still be refused, naming both names and the line.
"""

import functools
import math
import os
import re

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of, names_line
from tangent_ckpt.errors import TangentCkptError, TransformError

HERE = os.path.basename(__file__)
MODES = {"taped": {}, "checkpointed": {"checkpoint": True, "snapshots": 2}}


# --- a helper's result is what the helper returns ---------------------------------
def get_acc(pos, vel, nu):
    a = -pos
    a -= nu * vel
    return a


def leapfrog_with_a_helper_acceleration(pos, nu, n):
    """The #29 example: acc is a new array, never vel nor the float nu."""
    vel = np.zeros(pos.shape)
    acc = get_acc(pos, vel, nu)
    for i in range(n):
        vel += acc * 0.1 / 2
        pos = pos + vel * 0.1
        acc = get_acc(pos, vel, nu)
        vel += acc * 0.1 / 2
    return np.sum(pos ** 2) + np.sum(vel * pos)


def diffuse(x, k):
    return x + k * (np.roll(x, 1) - 2 * x + np.roll(x, -1))


def step_after_an_in_place_write(x, nu, n):
    x = x * 1.0
    for i in range(n):
        x += 0.01 * x ** 2
        x = diffuse(x, nu * 0.1)
    return np.sum(x ** 2)


def new_pair(x):
    return x * 2.0, np.zeros(x.shape)


def pair_from_a_helper_written(x):
    a, b = new_pair(x)
    a += 1.0
    b += a * x
    return np.sum(a * b)


def energy(v):
    return 0.5 * np.sum(v ** 2)


def reduction_from_a_helper_beside_a_write(x, n):
    v = x * 1.0
    e = energy(v)
    for i in range(n):
        v += 0.1 * np.sin(v) * e
        e = energy(v)
    return e + np.sum(v)


class Momentum:
    def __init__(self, rate):
        self.rate = rate
        self.t = 0

    def step(self, params, grads):
        self.t += 1  # a write into the object (an array for all the fence knows)
        return params - self.rate * grads


def method_result_beside_a_write_into_its_object(target, rate):
    opt = Momentum(rate)
    params = target * 0.0 + 1.0
    for i in range(3):
        grads = 2.0 * (params - target)
        params = opt.step(params, grads)
    return np.sum(params ** 2)


# --- a boolean-mask or fancy-index read is a copy ------------------------------------
def masked_copy_restored(F, w, n):
    F = F * 1.0
    mask = F[:, 0] > 0.5
    for i in range(n):
        b = F[mask, :]
        F += w * np.tanh(F)
        F[mask, :] = b
    return np.sum(F ** 2)


def fancy_rows_kept(F, w):
    F = F * 1.0
    kept = F[[0, 2]]
    F *= w
    return np.sum(F * F) + np.sum(kept * w)


# --- buffer swaps -----------------------------------------------------------------------
def buffer_swap_after_copyto(g, k, n):
    grid = g * 1.0
    scratch = np.zeros_like(grid)
    for i in range(n):
        np.copyto(scratch, grid)
        scratch[1:-1] += k * (grid[2:] - 2 * grid[1:-1] + grid[:-2])
        grid, scratch = scratch, grid
    return np.sum(grid ** 2)


def buffer_swap_after_out(g, k, n):
    grid = g * 1.0
    scratch = np.empty_like(grid)
    for i in range(n):
        np.multiply(grid, 1.0 - k, out=scratch)
        scratch += k * np.tanh(grid)
        grid, scratch = scratch, grid
    return np.sum(grid ** 2)


# --- a multi-part subscript store copies values ------------------------------------
def row_stored_from_another_array(ey, src, n):
    ey = ey * 1.0
    for t in range(n):
        ey[0, :] = src[t]
        ey[1:, :] -= 0.5 * ey[:-1, :]
    return np.sum(ey ** 2) + np.sum(src)


# --- a constructor writing into its argument ------------------------------------------
class Smoothed:
    def __init__(self, pi, eps):
        pi[pi == 0] = eps
        self.pi = pi

    def score(self, x):
        return np.sum(np.log(self.pi) * x)


def constructor_writes_a_local_array(x, w):
    p = np.abs(w) * 1.0
    p[0] = 0.0
    m = Smoothed(p, 1e-3)
    return m.score(x) + np.sum(p * x)


def copied_into_a_buffer_made_like_the_state(u0, s, n):
    """Copy-and-update with a preallocated buffer (un[:] = u copies u's numbers)."""
    u = u0 * 1.0
    un = np.empty_like(u)
    for t in range(n):
        un[:] = u
        u[1:-1] = un[1:-1] + s * (un[2:] - 2.0 * un[1:-1] + un[:-2])
    return np.sum(u ** 2)


def copied_into_a_float_buffer_like_the_state(u0, s, n):
    u = u0 * 1.0
    prev = np.zeros_like(u, dtype=float)
    for t in range(n):
        prev[...] = u
        u *= np.tanh(prev * s)
    return np.sum(u + prev)


def batchnorm_reading_its_settings_with_get(x, gamma, bn_param):
    """cs231n's batchnorm_forward: d.get(key, default) is an item of d or the
    default, never d, so a later d[key] = v changes nothing read before (the
    fence took eps for bn_param itself)."""
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    running_mean = bn_param.get("running_mean", np.zeros(x.shape[1]))
    mu = np.mean(x, axis=0)
    xhat = (x - mu) / np.sqrt(np.var(x, axis=0) + eps)
    cache = (xhat, gamma, eps)
    bn_param["running_mean"] = momentum * running_mean + (1 - momentum) * mu
    return np.sum((cache[1] * cache[0]) ** 2) + np.sum(bn_param["running_mean"])


def dict_written_while_its_keys_are_iterated(x):
    """for k in d: the keys, never d itself (the fence took k for d: 'a write into
    d may also change k')."""
    d = {"a": x * 1.0, "b": x * 2.0}
    for k in d:
        d["b"] = d["b"] + d[k]
    return np.sum(d["b"] ** 2)


def list_item_rebound_while_it_is_iterated(x):
    lst = [x * 1.0, x * 2.0]
    total = 0.0
    for item in lst:
        lst[1] = item * 3.0  # (the loop then reads the new item, as Python's does)
        total = total + np.sum(item)
    return total + np.sum(lst[1])


def _vector(rng, *shape):
    return rng.normal(size=shape)


ACCEPTED = [
    (leapfrog_with_a_helper_acceleration, lambda r: (_vector(r, 3, 2), 0.3, 3), (0, 1)),
    (step_after_an_in_place_write, lambda r: (_vector(r, 5) * 0.5, 0.7, 3), (0, 1)),
    (pair_from_a_helper_written, lambda r: (_vector(r, 3),), (0,)),
    (reduction_from_a_helper_beside_a_write, lambda r: (_vector(r, 3), 3), (0,)),
    (method_result_beside_a_write_into_its_object, lambda r: (_vector(r, 3), 0.2), (0, 1)),
    (masked_copy_restored, lambda r: (r.uniform(size=(4, 3)), 0.3, 3), (0, 1)),
    (fancy_rows_kept, lambda r: (_vector(r, 3, 2), 0.7), (0, 1)),
    (buffer_swap_after_copyto, lambda r: (_vector(r, 6), 0.2, 3), (0, 1)),
    (buffer_swap_after_out, lambda r: (_vector(r, 6), 0.2, 3), (0, 1)),
    (row_stored_from_another_array, lambda r: (_vector(r, 3, 4), _vector(r, 3, 4), 3),
     (0, 1)),
    (constructor_writes_a_local_array, lambda r: (_vector(r, 3), _vector(r, 3)), (0, 1)),
    (copied_into_a_buffer_made_like_the_state, lambda r: (_vector(r, 6), 0.2, 3), (0, 1)),
    (copied_into_a_float_buffer_like_the_state, lambda r: (_vector(r, 4), 0.7, 3), (0, 1)),
    (dict_written_while_its_keys_are_iterated, lambda r: (_vector(r, 3),), (0,)),
    (list_item_rebound_while_it_is_iterated, lambda r: (_vector(r, 3),), (0,)),
    (batchnorm_reading_its_settings_with_get,
     lambda r: (_vector(r, 4, 3), _vector(r, 3), {"mode": "train"}), (0, 1)),
]


@pytest.mark.parametrize("fn, make, wrt", ACCEPTED, ids=[a[0].__name__ for a in ACCEPTED])
@pytest.mark.parametrize("mode", list(MODES))
def test_writes_beside_memory_the_fence_proves_separate_are_differentiated(fn, make, wrt,
                                                                            mode):
    args = make(np.random.default_rng(3))
    df = tc.grad(fn, wrt=wrt, **MODES[mode])
    check_grad(fn, args, wrt=wrt, df=df, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, make, wrt", ACCEPTED[:2] + ACCEPTED[5:9],
                         ids=[a[0].__name__ for a in ACCEPTED[:2] + ACCEPTED[5:9]])
def test_checkpointed_gradient_equals_taped(fn, make, wrt):
    args = make(np.random.default_rng(5))
    taped = tc.grad(fn, wrt=wrt)(*args)
    checkpointed = tc.grad(fn, wrt=wrt, **MODES["checkpointed"])(*args)
    for a, b in zip(taped, checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


# --- real sharing is still refused ------------------------------------------------------
def same(a):
    return a


def helper_returning_its_argument_written(x):
    a = x * 1.0
    b = same(a)
    b += 1.0  # WRITE
    return np.sum(a * b)


def interior(U):
    return U[1:-1]


def helper_returning_a_view_written(x):
    U = x * 1.0
    u = interior(U)
    u *= 2.0  # WRITE
    return np.sum(U * U) + np.sum(u)


def both(a, b):
    return [a, b]


def helper_returning_a_list_of_its_arguments(x):
    a = x * 1.0
    pair = both(a, x * 2.0)
    pair[0] += 1.0  # WRITE
    return np.sum(a) + np.sum(pair[1])


def keep_in(box, a):
    box.append(a)
    return a * 2.0


def helper_storing_its_argument_into_a_list(x):
    a = x * 1.0
    box = [x * 3.0]
    y = keep_in(box, a)
    box[1] += 1.0  # WRITE
    return np.sum(a * y)


def swap_with_a_view(g):
    grid = g * 1.0
    scratch = grid[::-1]
    for i in range(2):
        scratch += 1.0  # WRITE
        grid, scratch = scratch, grid
    return np.sum(grid)


def conditional_swap(g, n):
    grid = g * 1.0
    scratch = np.zeros_like(grid)
    for i in range(n):
        if i % 2:
            grid, scratch = scratch, grid
        else:
            scratch = grid
        scratch += 1.0  # WRITE
    return np.sum(grid)


def slice_index_is_a_view(F):
    F = F * 1.0
    rows = slice(0, 2)
    b = F[rows, :]
    F += 1.0  # WRITE
    return np.sum(F) + np.sum(b)


def copy_of_a_list_holds_its_items(x):
    a = x * 1.0
    lst = [a]
    b = lst.copy()
    b[0] += 1.0  # WRITE
    return np.sum(a * a)


def buffer_of_objects_holds_what_is_stored(x):
    a = x * 1.0
    box = np.empty_like(a, dtype=object)
    box[0] = a
    a += 1.0  # WRITE
    return np.sum(box[0] * a)


def item_got_from_a_dict_written(x):
    d = {"w": x * 1.0, "b": x * 2.0}
    w = d.get("w", None)
    w += 1.0  # WRITE
    return np.sum(d["w"] * d["b"])


REFUSED = [
    (item_got_from_a_dict_written, (np.array([0.3, -0.2]),), "w", "d"),
    (buffer_of_objects_holds_what_is_stored, (np.array([0.3, -0.2]),), "a", "box"),
    (copy_of_a_list_holds_its_items, (np.array([0.3, -0.2]),), "b", "a"),
    (helper_returning_a_list_of_its_arguments, (np.array([0.3, -0.2]),), "pair", "a"),
    (helper_storing_its_argument_into_a_list, (np.array([0.3, -0.2]),), "box", "a"),
    (swap_with_a_view, (np.array([0.3, -0.2, 0.5]),), "scratch", "grid"),
    (conditional_swap, (np.array([0.3, -0.2, 0.5]), 3), "scratch", "grid"),
    (slice_index_is_a_view, (np.ones((3, 2)),), "F", "b"),
]


@pytest.mark.parametrize("fn, args, written, other", REFUSED, ids=[r[0].__name__ for r in REFUSED])
@pytest.mark.parametrize("mode", list(MODES))
def test_writes_into_memory_another_live_name_shares_are_still_refused(fn, args, written,
                                                                        other, mode):
    # (a helper inlined by desugar is refused at its own line, naming the call)
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=(0,), **MODES[mode])(*args)
    message = str(info.value)
    assert names_line(message, HERE, line_of(fn, '# WRITE')), message
    assert f"'{written}'" in message and f"'{other}'" in message, message


FOLLOWED_THROUGH_HELPERS = [
    (helper_returning_its_argument_written, (np.array([0.3, -0.2]),)),
    (helper_returning_a_view_written, (np.array([0.3, -0.2, 0.1, 0.4]),)),
]


@pytest.mark.parametrize("fn, args", FOLLOWED_THROUGH_HELPERS,
                         ids=[r[0].__name__ for r in FOLLOWED_THROUGH_HELPERS])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_write_through_what_a_helper_returns_is_followed(fn, args, mode):
    """``b = same(a); b += 1.0`` and ``u = interior(U); u *= 2.0``: refused while the
    lowering inlined the helper (what it returned was a value of its own);
    inlined by desugar, ``b`` is ``a`` and ``u`` a view of ``U``, which the view
    pass follows."""
    check_grad(fn, args, df=tc.grad(fn, wrt=(0,), **MODES[mode]))


def swap_beside_a_name_kept_from_the_last_step(g):
    grid = g * 1.0
    scratch = np.zeros_like(grid)
    keep = grid
    total = 0.0
    for i in range(3):
        np.copyto(scratch, grid * 0.5)  # WRITE
        total = total + np.sum(keep)
        grid, scratch = scratch, grid
        keep = scratch
    return np.sum(grid) + total


def test_a_name_kept_across_a_swap_still_shares_what_it_named():
    """``keep`` names the array the swap hands to ``scratch``: the next step's
    write into ``scratch`` changes it (the renaming of swapped arrays renames
    every name, and the fence looks it up under its new name)."""
    fn = swap_beside_a_name_kept_from_the_last_step
    for mode in MODES.values():
        with pytest.raises(TransformError) as info:
            tc.grad(fn, **mode)(np.array([0.3, -0.2, 0.5]))
        message = str(info.value)
        assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
        assert "'scratch'" in message and "'keep'" in message, message


def keep_through(box, a):
    return keep_in(box, a)


def helper_storing_through_another_helper(x):
    a = x * 1.0
    box = [x * 3.0]
    y = keep_through(box, a)
    box[1] += 1.0  # WRITE
    return np.sum(a * y)


def test_what_a_helper_stores_through_the_helper_it_returns_from_is_seen():
    """``return keep_in(box, a)``: the store happens in the return statement."""
    fn = helper_storing_through_another_helper
    with pytest.raises(TransformError) as info:
        tc.grad(fn)(np.array([0.3, -0.2]))
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
    assert "'box'" in message and "'a'" in message, message


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@_logged
def same_through_a_decorator(a):
    return a


def decorated_helper_returning_its_argument(x):
    a = x * 1.0
    b = same_through_a_decorator(a)
    b += 1.0  # WRITE
    return np.sum(a * b)


def test_a_decorated_helper_is_judged_by_the_code_that_runs():
    """``functools.wraps`` gives the wrapper the helper's signature; what runs is
    the wrapper, which returns whatever the helper returns: ``b`` is ``a``."""
    fn = decorated_helper_returning_its_argument
    with pytest.raises(TransformError) as info:
        tc.grad(fn)(np.array([0.3, -0.2]))
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
    assert "'b'" in message and "'a'" in message, message


def keep_through_another_name(box, a):
    held = box
    held.append(a)
    return a * 2.0


def helper_storing_through_another_name(x):
    a = x * 1.0
    box = [x * 3.0]
    y = keep_through_another_name(box, a)
    box[1] += 1.0  # WRITE
    return np.sum(a * y)


def test_what_a_helper_stores_through_another_name_is_seen():
    """``held = box; held.append(a)``: ``box``'s list holds ``a`` afterwards."""
    fn = helper_storing_through_another_name
    with pytest.raises(TransformError) as info:
        tc.grad(fn)(np.array([0.3, -0.2]))
    message = str(info.value)
    assert names_line(message, HERE, line_of(fn, '# WRITE')) or \
        names_line(message, HERE, line_of(keep_through_another_name, 'held.append')), message
    assert "'box'" in message, message


# --- a method's arithmetic on the attributes of an object made in the function ----------
# (compiler/fence/object_facts.py) read alone, ``self.gain * (...)`` might be a list
# repeated, holding the object's arrays; for an object made here whose every attribute
# store binds an array or a number, it is NumPy arithmetic: a new array.
class Cells:
    """Two coupled state vectors updated in place (a neuron model's shape)."""

    def __init__(self, gain, leak, v0, n=3):
        self.gain = gain
        self.leak = leak
        self.v = np.full(n, v0)
        self.w = np.zeros(n) + 0.1

    def step(self, drive, dt):
        dv = 0.5 * self.v - self.w * self.v + drive
        dw = self.gain * (self.leak * self.v - self.w)
        self.v += dv * dt  # WRITE (dw is read below)
        self.w += dw * dt
        return self.v > 10.0


def cells_updated_in_place(drive, gain):
    cells = Cells(gain, 0.3, 0.2)
    for t in range(4):
        cells.step(drive, 0.05)
    return np.sum(cells.v ** 2) + np.sum(cells.w)


class Ring:
    """A ring of oscillators advanced by Runge-Kutta through a method's results."""

    def __init__(self, forcing, x0, damping=0.4, dt=0.05):
        self.forcing = forcing
        self.damping = damping
        self.dt = dt
        self.x = x0 * 1.0
        self.weights = np.cos(np.linspace(0.0, np.pi, x0.shape[-1])) ** 2

    def rate(self):
        left = np.roll(self.x, 1, axis=-1)
        right = np.roll(self.x, -1, axis=-1)
        return (right - left) * self.x - self.damping * self.weights * self.x + self.forcing

    def advance(self):
        h = self.dt
        half = 0.5 * h
        x = self.x
        k1 = self.rate()
        self.x = x + half * k1  # WRITE (k1 and x are read below)
        k2 = self.rate()
        self.x = x + half * k2
        k3 = self.rate()
        self.x = x + h * k3
        k4 = self.rate()
        self.x = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def ring_advanced_by_runge_kutta(x0, forcing):
    ring = Ring(forcing, x0)
    for t in range(3):
        ring.advance()
    return np.sum(ring.x ** 2)


class Scaled:
    def __init__(self, a):
        self.a = a * 1.0
        self.k = 2.0
        self.p = a * 3.0

    def step(self):
        grown = self.a * self.k
        self.p += 1.0  # WRITE
        return grown


def scaled_by_a_number(x):
    s = Scaled(x)
    g = s.step()
    return np.sum(g * g) + np.sum(s.p * x)


def scaled_list_set_outside(x):
    """``s.a`` and ``s.k`` replaced by a list holding ``s.p`` and an int:
    ``self.a * self.k`` repeats the list, so the write into ``self.p`` changes
    ``grown[0]`` and ``grown[2]``."""
    s = Scaled(x)
    s.a = [s.p, x * 1.0]
    s.k = 2
    g = s.step()
    return np.sum(g[0]) + np.sum(g[2])


class Repeated:
    def __init__(self, a, k):
        self.p = a * 1.0
        self.parts = [self.p, a * 2.0]  # a list: self.parts * self.k repeats it
        self.k = k

    def step(self):
        grown = self.parts * self.k
        self.p += 1.0  # WRITE
        return grown


def list_attribute_repeated(x):
    r = Repeated(x, 2)
    g = r.step()
    return np.sum(g[0]) + np.sum(g[2])


OBJECTS = [
    (cells_updated_in_place, lambda r: (_vector(r, 3), 0.7), (0, 1)),
    (ring_advanced_by_runge_kutta, lambda r: (_vector(r, 2, 5), 0.8), (0, 1)),
    (scaled_by_a_number, lambda r: (_vector(r, 3),), (0,)),
]


@pytest.mark.parametrize("fn, make, wrt", OBJECTS, ids=[a[0].__name__ for a in OBJECTS])
@pytest.mark.parametrize("mode", list(MODES))
def test_method_arithmetic_on_attributes_of_an_object_made_here_is_differentiated(
        fn, make, wrt, mode):
    args = make(np.random.default_rng(7))
    df = tc.grad(fn, wrt=wrt, **MODES[mode])
    check_grad(fn, args, wrt=wrt, df=df, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, make, wrt", OBJECTS[:2], ids=[a[0].__name__ for a in OBJECTS[:2]])
def test_checkpointed_object_loop_equals_taped(fn, make, wrt):
    args = make(np.random.default_rng(9))
    taped = tc.grad(fn, wrt=wrt)(*args)
    checkpointed = tc.grad(fn, wrt=wrt, **MODES["checkpointed"])(*args)
    for a, b in zip(taped, checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, method, other", [
    (scaled_list_set_outside, Scaled.step, "grown"),
    (list_attribute_repeated, Repeated.step, "grown"),
], ids=["attribute_set_to_a_list_outside", "attribute_that_is_a_list"])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_list_attribute_repeated_by_a_method_is_still_refused(fn, method, other, mode):
    with pytest.raises(TransformError) as info:
        tc.grad(fn, **MODES[mode])(np.array([0.3, -0.2]))
    message = str(info.value)
    assert f"{HERE}:{line_of(method, '# WRITE')}:" in message, message
    # the object's attribute as the code spells it (s.p): desugar writes the
    # object as names, the method's lines inlined into the caller's
    assert re.search(r"a write into '\w\.p'", message) and f"'{other}'" in message, message


def test_a_method_read_alone_still_refuses_arithmetic_it_cannot_prove():
    """The same method reached without an object made here (the fence reads it
    alone) keeps the refusal: only the object's own stores prove its attributes."""
    from tangent_ckpt.compiler.fence.aliasing import check_writes
    from tangent_ckpt.compiler.frontend.parse import parse_function
    with pytest.raises(TransformError) as info:
        check_writes(parse_function(Scaled.step))
    assert "'grown'" in str(info.value)


def damped(v, rate):
    return v * rate


class Leaky:
    def __init__(self, v0):
        self.v = v0 * 1.0
        self.rate = 0.9

    def step(self, drive):
        kept = damped(self.v, self.rate) + drive
        leak = self.rate * (self.v - kept)
        self.v += 0.1 * kept  # WRITE (leak is read below)
        return leak


def leaky_through_a_helper_only_its_method_calls(v0, drive):
    cell = Leaky(v0)
    total = 0.0
    for t in range(3):
        total = total + np.sum(cell.step(drive))
    return total + np.sum(cell.v ** 2)


@pytest.mark.parametrize("mode", list(MODES))
def test_a_helper_only_a_refused_method_calls_is_fenced_for_its_object(mode):
    """``damped`` is named only in ``Leaky.step``, which the fence refuses when read
    alone: it is fenced too, so the version for an object made here inlines it."""
    fn = leaky_through_a_helper_only_its_method_calls
    args = (np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.2, -0.1]))
    check_grad(fn, args, wrt=(0, 1), df=tc.grad(fn, wrt=(0, 1), **MODES[mode]),
               rtol=1e-5, atol=1e-7)


# --- an element of an array is a number, never a view (issue #29) -----------------------
def _rates(r, t):
    return np.array([r[1], -np.sin(r[0]) * t])


def elements_kept_in_lists_while_the_array_is_updated(x):
    """r[0] of the 1-d r (np.array of a display with a number in it) is a NumPy
    scalar, a copy: the in-place r += ... changes no item of the lists (an RK-style
    loop with a helper, as the outside program p20)."""
    r = np.array([x[0], 0.5], float)
    first, second = [], []
    for t in range(4):
        first.append(r[0])
        second.append(r[1])
        r += 0.1 * _rates(r, t * 0.5)  # r stays the 1-d array it was
    for i in range(len(first)):
        first[i] *= 2.0
    return first[2] + second[-1] + np.sum(np.array(first)) * 0.1


def euler(x, v, dt):
    x += v * dt
    v -= x * dt
    return x, v


def elements_kept_while_a_helper_writes_in_place(v0):
    """The outside program p38: positions kept, the arrays written by a helper."""
    x = np.zeros(2)
    v = np.array([v0[0], v0[1]])
    xs, ys = [], []
    for t in range(3):
        xs.append(x[0])
        ys.append(x[1])
        euler(x, v, 0.1)
    return xs[-1] + ys[-1] + sum(ys) * 0.5


def element_bound_to_a_name_then_written_beside(x):
    r = np.zeros(3)
    r[1:] = x
    a = r[1]
    r += np.array([1.0, r[2], 0.0])
    return a * r[1]


def elements_of_a_matrix_by_loop_counters(x):
    S = np.zeros((2, 2))
    S[0], S[1] = x[:2], x[2:]
    kept = []
    for i in range(2):
        for j in range(2):
            kept.append(S[i, j])
            S *= 1.5
    return kept[1] * kept[3] + np.sum(S)


ELEMENTS = [
    (elements_kept_in_lists_while_the_array_is_updated, lambda r: (_vector(r, 2),), (0,)),
    (elements_kept_while_a_helper_writes_in_place, lambda r: (_vector(r, 2),), (0,)),
    (element_bound_to_a_name_then_written_beside, lambda r: (_vector(r, 2),), (0,)),
    (elements_of_a_matrix_by_loop_counters, lambda r: (_vector(r, 4),), (0,)),
]


@pytest.mark.parametrize("fn, make, wrt", ELEMENTS, ids=[a[0].__name__ for a in ELEMENTS])
@pytest.mark.parametrize("mode", list(MODES))
def test_an_element_kept_beside_a_write_into_its_array_is_differentiated(fn, make, wrt, mode):
    args = make(np.random.default_rng(7))
    check_grad(fn, args, wrt=wrt, df=tc.grad(fn, wrt=wrt, **MODES[mode]), rtol=1e-5,
               atol=1e-7)


@pytest.mark.parametrize("fn, make, wrt", ELEMENTS, ids=[a[0].__name__ for a in ELEMENTS])
def test_checkpointed_element_loop_equals_taped(fn, make, wrt):
    args = make(np.random.default_rng(8))
    taped = tc.grad(fn, wrt=wrt)(*args)
    checkpointed = tc.grad(fn, wrt=wrt, **MODES["checkpointed"])(*args)
    np.testing.assert_allclose(checkpointed, taped, rtol=1e-10, atol=1e-12)


def row_of_a_matrix_kept(x):
    S = np.zeros((2, 2))
    S[0] = x
    keep = []
    for t in range(2):
        keep.append(S[0])  # a row: a view of S
        S += 1.0  # WRITE
    return np.sum(keep[0] * keep[1])


def item_of_an_array_of_unknown_ndim_kept(x):
    r = x * 1.0  # 1-d or 2-d: only the call decides
    keep = [r[0]]
    r += 1.0  # WRITE
    return np.sum(keep[0])


def item_of_an_array_of_objects_kept(x):
    a = x * 1.0
    box = np.empty(2, dtype=object)
    box[0] = a
    kept = box[0]  # the object box holds: a itself
    a += 1.0  # WRITE
    return np.sum(kept)


PAIR = np.dtype([("a", float), ("b", float)])


def element_of_a_structured_array_kept(x):
    r = np.zeros(2, dtype=PAIR)
    keep = [r[0]]  # a NumPy void: a view of r's first record
    r[0] = (x[0], x[1])  # WRITE
    return keep[0][0] * 1.0


def element_of_a_structured_array_kept_dtype_in_place(x):
    r = np.full(2, 0.0, PAIR)  # dtype given positionally
    keep = [r[1]]
    r[1] = (x[0], x[1])  # WRITE
    return keep[0][1] * 1.0


@pytest.mark.parametrize("fn, args, written, other", [
    (row_of_a_matrix_kept, (np.array([0.3, -0.2]),), "S", "keep"),
    (element_of_a_structured_array_kept, (np.array([0.3, -0.2]),), "r", "keep"),
    (element_of_a_structured_array_kept_dtype_in_place, (np.array([0.3, -0.2]),), "r",
     "keep"),
    (item_of_an_array_of_unknown_ndim_kept, (np.ones((2, 2)),), "r", "keep"),
    (item_of_an_array_of_objects_kept, (np.array([0.3, -0.2]),), "a", "kept"),
], ids=["row_of_a_matrix", "structured", "structured_positional", "unknown_ndim",
        "array_of_objects"])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_view_or_object_an_element_read_gives_is_still_refused(fn, args, written, other,
                                                                 mode):
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=(0,), **MODES[mode])(*args)
    message = str(info.value)
    assert names_line(message, HERE, line_of(fn, '# WRITE')), message
    assert f"'{written}'" in message and f"'{other}'" in message, message


# --- a method's writes into an array it makes itself change nothing the caller holds -----
OBSERVED = [0, 1, 1]  # module-level: the object holds it, nothing writes it


class Tally:
    def __init__(self, w, obs):
        self.w = w
        self.obs = obs

    def run(self, scale):
        self.acc = np.zeros(self.w.shape)  # a new array, made by the method itself
        for j in range(len(self.obs)):
            self.acc += self.w[self.obs[j]] * scale * self.acc[j]  # WRITE
            self.acc += self.w * scale


def tally_of_a_module_level_list(w, n):
    total = 0.0
    m = Tally(w, OBSERVED)
    for t in range(n):
        m.run(0.5 + 0.1 * t)  # a new self.acc each time
        total = total + np.sum(m.acc * m.acc)
    return total


def tally_of_a_copied_module_level_list(w):
    m = Tally(w, list(OBSERVED))
    m.run(2.0)
    return np.sum(np.sin(m.acc))


@pytest.mark.parametrize("fn, args", [
    (tally_of_a_module_level_list, (np.array([0.3, -0.2, 0.5]), 3)),
    (tally_of_a_copied_module_level_list, (np.array([0.3, -0.2, 0.5]),)),
], ids=["module_level_list", "copied_module_level_list"])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_method_writing_into_an_array_it_made_is_differentiated(fn, args, mode):
    """The object holds the module-level OBSERVED, but Tally.run writes only into
    the array it binds to self.acc just before: no memory the caller can name."""
    check_grad(fn, args, df=tc.grad(fn, **MODES[mode]), rtol=1e-5, atol=1e-7)
    if mode == "checkpointed":
        np.testing.assert_allclose(tc.grad(fn, **MODES[mode])(*args), tc.grad(fn)(*args),
                                   rtol=1e-10, atol=1e-12)


class KeptTally(Tally):
    def run(self, scale, kept):
        self.acc = np.zeros(self.w.shape)
        kept.append(self.acc)  # the caller's list holds the new array
        for j in range(len(self.obs)):
            self.acc += self.w * scale  # WRITE


def tally_kept_by_the_caller(w):
    kept = []
    m = KeptTally(w, OBSERVED)
    m.run(2.0, kept)
    return np.sum(kept[0])


class CopiedFirstTally(Tally):
    def run(self, scale):
        self.acc = self.w  # no new array: the caller's w
        for j in range(len(self.obs)):
            self.acc += self.w * scale  # WRITE


def tally_into_an_argument(w):
    v = w * 1.0
    m = CopiedFirstTally(v, OBSERVED)
    m.run(2.0)
    return np.sum(v)


def test_a_method_writing_into_an_array_a_callers_list_holds_is_still_refused():
    with pytest.raises(TransformError) as info:
        tc.grad(tally_kept_by_the_caller)(np.array([0.3, -0.2, 0.5]))
    assert "'m.acc'" in str(info.value) and "'kept'" in str(info.value), str(info.value)


def test_a_method_writing_into_the_callers_array_it_holds_changes_it():
    """``self.acc = self.w; self.acc += ...`` with ``self.w`` the caller's ``v``:
    refused while the lowering inlined the method; the object is now the names
    ``m_w``, ``m_acc``, and the view pass carries the write into ``v``."""
    check_grad(tally_into_an_argument, (np.array([0.3, -0.2, 0.5]),))


# --- an advanced index makes a copy (outside programs q02, q07) ---------------------------
def rows_by_an_index_array_written(X, n):
    """X[np.array([0, 2])]: integer index arrays, a copy of two rows; writing into
    it leaves X as it was (k-means' centres picked from the data)."""
    C = X[np.array([0, 2])]
    for t in range(n):
        C[0] = C[0] * 0.5 + X[1] * 0.5
        C += 0.1 * X[2]
    return np.sum(C ** 2) + np.sum(X * C[1])


def rows_by_argsort_written(X):
    order = np.argsort(X[:, 0])
    S = X[order]
    S[1:] -= S[:-1] * 0.5
    return np.sum(S ** 2) + np.sum(X ** 3)


def rows_by_a_drawn_index_written(X, n):
    """np.random.choice(n, size=k): an array of k integers (a particle filter's
    resampling), X[idx] a copy."""
    rs = np.random.RandomState(4)
    for t in range(n):
        idx = rs.choice(3, size=4)
        Y = X[idx]
        Y += 0.1 * rs.standard_normal(Y.shape)
        X = X * 0.5 + np.mean(Y, axis=0)
    return np.sum(X ** 2)


def rows_by_a_permutation_written_in_a_closure(X):
    def shuffled(P):
        new = P[np.random.RandomState(1).permutation(3)]
        new *= 2.0
        return new
    return np.sum(shuffled(X) * X)


def list_of_fresh_arrays_updated(x, n):
    """[np.zeros(2) for _ in range(k)]: k new arrays (the comprehension reads np
    only to call np.zeros: the list holds nothing of the module)."""
    rows = [np.zeros(2) for _ in range(3)]
    for t in range(n):
        rows[2] += x * (t + 1.0)
        rows[0] *= 0.9
        rows[0] += rows[2] * x
    return np.sum(rows[1] * np.array([1.0, 3.0])) + np.sum(rows[0] ** 2) + np.sum(rows[2])


ADVANCED = [
    (rows_by_an_index_array_written, lambda r: (_vector(r, 3, 2), 3), (0,)),
    (rows_by_argsort_written, lambda r: (_vector(r, 4, 2),), (0,)),
    (rows_by_a_drawn_index_written, lambda r: (_vector(r, 3, 2), 3), (0,)),
    (rows_by_a_permutation_written_in_a_closure, lambda r: (_vector(r, 3, 2),), (0,)),
    (list_of_fresh_arrays_updated, lambda r: (_vector(r, 2), 4), (0,)),
]


@pytest.mark.parametrize("fn, make, wrt", ADVANCED, ids=[a[0].__name__ for a in ADVANCED])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_copy_made_by_advanced_indexing_written_is_differentiated(fn, make, wrt, mode):
    args = make(np.random.default_rng(11))
    check_grad(fn, args, wrt=wrt, df=tc.grad(fn, wrt=wrt, **MODES[mode]), rtol=1e-5,
               atol=1e-7)


@pytest.mark.parametrize("fn, make, wrt", ADVANCED, ids=[a[0].__name__ for a in ADVANCED])
def test_checkpointed_advanced_index_loop_equals_taped(fn, make, wrt):
    args = make(np.random.default_rng(12))
    taped = tc.grad(fn, wrt=wrt)(*args)
    checkpointed = tc.grad(fn, wrt=wrt, **MODES["checkpointed"])(*args)
    np.testing.assert_allclose(checkpointed, taped, rtol=1e-10, atol=1e-12)


def row_by_one_drawn_integer_written(X):
    rs = np.random.RandomState(0)
    r = X[rs.choice(3)]  # no size: one integer, r a row of X (a view)
    r += 1.0  # WRITE
    return np.sum(X)


def row_by_argmax_written(X):
    r = X[np.argmax(X[:, 0])]  # one integer: a row, a view
    r *= 2.0  # WRITE
    return np.sum(X)


def row_by_a_draw_of_unknown_size_written(X, k):
    r = X[np.random.RandomState(0).choice(3, size=k)]  # k may be None: one integer
    r *= 2.0  # WRITE
    return np.sum(X)


def list_repeating_one_array_by_comprehension(x):
    a = x * 1.0
    rows = [a for _ in range(2)]
    rows[0] += 1.0  # WRITE
    return np.sum(a)


GRID = np.ones(2)


def list_of_a_module_array_by_comprehension(x):
    rows = [GRID for _ in range(2)]
    rows[0] += x  # WRITE
    return np.sum(rows[1])


@pytest.mark.parametrize("fn, args, written, other", [
    (row_by_one_drawn_integer_written, (np.ones((3, 2)),), "r", "X"),
    (row_by_argmax_written, (np.ones((3, 2)),), "r", "X"),
    (row_by_a_draw_of_unknown_size_written, (np.ones((3, 2)), None), "r", "X"),
    (list_repeating_one_array_by_comprehension, (np.ones(2),), "rows", "a"),
    (list_of_a_module_array_by_comprehension, (np.ones(2),), "rows", "GRID"),
], ids=["one_draw", "argmax", "unknown_size", "repeated", "module_array"])
@pytest.mark.parametrize("mode", list(MODES))
def test_an_index_that_may_be_one_integer_is_still_refused(fn, args, written, other, mode):
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=(0,), **MODES[mode])(*args)
    message = str(info.value)
    assert names_line(message, HERE, line_of(fn, '# WRITE')), message
    assert f"'{written}'" in message and f"'{other}'" in message, message
    assert "'np'" not in message, message


# --- what a function passed in returns (a Newton step, outside program q29) ---------------
def damped_newton(F, step, x0):
    """x -= s with s returned by the function given for ``step``: a new array when
    that function returns one, which each call of damped_newton checks."""
    x = np.copy(x0)
    k = 0
    while True:
        s = step(x, F(x))
        x -= s  # WRITE
        k += 1
        if np.linalg.norm(s) < 1e-12 or k == 3:
            break
    return x


def half_newton_step(x, f):
    return 0.5 * np.linalg.solve(np.diag(3.0 * x ** 2), f)


def newton_with_module_level_callables(x0, a):
    def F(x):
        return x ** 3 - a
    return np.sum(damped_newton(F, half_newton_step, x0) ** 2)


def newton_with_local_callables(x0, a):
    def F(x):
        return x ** 3 - a

    def step(x, f):
        J = np.diag(3.0 * x ** 2)
        return 0.5 * np.linalg.solve(J, f)
    return np.sum(damped_newton(F, step, x0) * np.array([1.0, 2.0]))


CALLABLES = [
    (newton_with_module_level_callables,
     lambda r: (np.array([1.2, 0.9]) + 0.1 * _vector(r, 2), np.array([2.0, 0.5])), (0, 1)),
    (newton_with_local_callables,
     lambda r: (np.array([1.2, 0.9]) + 0.1 * _vector(r, 2), np.array([2.0, 0.5])), (0, 1)),
]


@pytest.mark.parametrize("fn, make, wrt", CALLABLES, ids=[a[0].__name__ for a in CALLABLES])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_write_beside_what_a_function_passed_in_returns_new_is_differentiated(fn, make,
                                                                                 wrt, mode):
    args = make(np.random.default_rng(13))
    check_grad(fn, args, wrt=wrt, df=tc.grad(fn, wrt=wrt, **MODES[mode]), rtol=1e-5,
               atol=1e-7)


@pytest.mark.parametrize("fn, make, wrt", CALLABLES, ids=[a[0].__name__ for a in CALLABLES])
def test_checkpointed_newton_loop_equals_taped(fn, make, wrt):
    args = make(np.random.default_rng(14))
    taped = tc.grad(fn, wrt=wrt)(*args)
    checkpointed = tc.grad(fn, wrt=wrt, **MODES["checkpointed"])(*args)
    for a, b in zip(taped, checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def step_returning_its_argument(x, f):
    return f


STEP = np.array([0.01, 0.02])


def step_returning_a_module_array(x, f):
    return STEP


def newton_given_its_residual_as_the_step(x0, a):
    def F(x):
        return x ** 3 - a
    return np.sum(damped_newton(F, step_returning_its_argument, x0))


def newton_given_a_module_array_as_the_step(x0, a):
    def F(x):
        return x ** 3 - a
    return np.sum(damped_newton(F, step_returning_a_module_array, x0))


def newton_given_a_local_step_returning_the_iterate(x0, a):
    def F(x):
        return x ** 3 - a

    def step(x, f):
        return x
    return np.sum(damped_newton(F, step, x0))


@pytest.mark.parametrize("fn", [newton_given_its_residual_as_the_step,
                                newton_given_a_module_array_as_the_step,
                                newton_given_a_local_step_returning_the_iterate])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_function_passed_in_that_may_return_old_memory_is_followed(fn, mode):
    """Refused while the lowering inlined damped_newton (what ``step`` returns might
    be ``x`` itself); inlined by desugar, ``s = x`` is an alias the view pass
    follows (``x -= s`` zeroes both)."""
    check_grad(fn, (np.array([1.2, 0.9]), np.array([2.0, 0.5])),
               df=tc.grad(fn, wrt=(0,), **MODES[mode]))


def list_of_arrays_scaled_by_module_constants(x):
    """np.pi, math.e: numbers, so rows holds two new arrays and nothing of np or
    math (the fence named 'np' as what the write may change)."""
    rows = [x * np.pi for _ in range(2)] + [x * math.e]
    rows[0] += 1.0
    rows[2] *= rows[1]
    return np.sum(rows[0] * rows[1]) + np.sum(rows[2])


@pytest.mark.parametrize("mode", list(MODES))
def test_module_constants_hold_no_memory_of_their_module(mode):
    fn = list_of_arrays_scaled_by_module_constants
    check_grad(fn, (np.array([0.3, -0.7]),), df=tc.grad(fn, **MODES[mode]), rtol=1e-5,
               atol=1e-7)


DTYPE = np.float64


def buffer_of_the_module_dtype(x):
    """A dtype (float, np.float64, a module-level name for one) given to a call
    that may return its argument holds no memory: buf is a new array."""
    buf = np.asarray(x * 1.0, dtype=DTYPE)
    buf[0] = 2.0 * buf[1] + np.float32(0.5)
    total = np.asarray(buf * x, float)
    total *= 3.0
    return np.sum(total)


@pytest.mark.parametrize("mode", list(MODES))
def test_a_dtype_given_to_a_call_holds_no_memory(mode):
    fn = buffer_of_the_module_dtype
    check_grad(fn, (np.array([0.3, -0.7, 0.2]),), df=tc.grad(fn, **MODES[mode]), rtol=1e-5,
               atol=1e-7)


def asarray_with_a_dtype_written(y, x):
    z = np.asarray(y, dtype=float)
    z += x  # WRITE
    return np.sum(z * y)


def test_a_write_through_asarray_names_the_array_not_the_dtype():
    """np.asarray(y, dtype=float) may be y itself: refused, naming y (it named
    the module-level object 'float')."""
    with pytest.raises(TransformError) as info:
        tc.grad(asarray_with_a_dtype_written)(np.ones(2), np.ones(2))
    message = str(info.value)
    assert names_line(message, HERE, line_of(asarray_with_a_dtype_written, "# WRITE")), message
    assert "'y'" in message and "float" not in message, message


def resampled_in_a_closure(X, n):
    """The particle filter's resampling (outside program q07): size=N with N the
    particles' count, in a function defined inside the differentiated one."""
    def resample(particles, rs):
        N = particles.shape[0]
        idx = rs.choice(np.arange(N), size=N)
        new = particles[idx]
        new += 0.1 * rs.standard_normal(new.shape)
        return new
    rs = np.random.RandomState(2)
    for t in range(n):
        X = 0.5 * resample(X, rs) + 0.5 * X
    return np.sum(X ** 2)


def row_by_a_draw_sized_by_an_attribute_written(X, cfg):
    rs = np.random.RandomState(0)
    r = X[rs.choice(3, size=cfg.size)]  # cfg.size may be None: one integer, a row
    r *= 2.0  # WRITE
    return np.sum(X)


class _Config:
    size = None


@pytest.mark.parametrize("mode", list(MODES))
def test_a_copy_by_a_draw_sized_by_a_length_in_a_closure_is_differentiated(mode):
    fn = resampled_in_a_closure
    check_grad(fn, (_vector(np.random.default_rng(15), 4, 2), 3), df=tc.grad(fn, **MODES[mode]),
               rtol=1e-5, atol=1e-7)


def test_a_draw_sized_by_any_attribute_is_still_refused():
    with pytest.raises(TransformError) as info:
        tc.grad(row_by_a_draw_sized_by_an_attribute_written)(np.ones((3, 2)), _Config())
    message = str(info.value)
    assert f"{HERE}:{line_of(row_by_a_draw_sized_by_an_attribute_written, '# WRITE')}:" in \
        message, message


# --- items unpacked from an index array are integers: x[i, :] is a view -------------
def _rows_unpacked_from_a_display(x0):
    x = x0 * 1.0
    i, j = np.array([0, 2])
    v = x[i, :]  # a view of row 0
    x[i, :] = x[j, :] * 2.0  # WRITE: v sees it
    return np.sum(v * np.arange(2.0)) + np.sum(x)


def _rows_unpacked_from_a_draw(x0):
    x = x0 * 1.0
    rng = np.random.default_rng(0)
    i, j = rng.choice(3, 2, replace=False)
    k = i
    v = x[k, :]
    x[i, :] = x[j, :] * 2.0  # WRITE
    return np.sum(v * np.arange(2.0)) + np.sum(x)


@pytest.mark.parametrize("f", [_rows_unpacked_from_a_display, _rows_unpacked_from_a_draw])
def test_an_item_unpacked_from_an_index_array_indexes_a_view(f):
    """``i, j = np.array([0, 2])`` (or a draw of two indices): ``x[i, :]`` is a row,
    a view; taken for an index array's copy, the write through ``x`` was missed
    (a silent wrong gradient on the session-10 merge, q37's chain swap): refused."""
    with pytest.raises(tc.TangentCkptError, match="may also change 'v'"):
        tc.grad(f)(np.random.default_rng(1).normal(size=(3, 2)))


# --- what leaves a loop by break, continue or return ------------------------------
def _iterate_until(x0, rate, n):
    """Returns from inside ``while True`` (desugar: ``result = x; break``)."""
    x = np.copy(x0)
    steps = 0
    while True:
        s = rate * np.sin(x)
        x -= s
        steps += 1
        if steps >= n:
            return x


def alias_made_just_before_a_return_in_a_loop(x0, rate):
    x = _iterate_until(x0, rate, 4)
    return np.sum(x ** 2) + np.sum(x0 * x)


def alias_made_just_before_a_break(x, n):
    y = x * 1.0
    i = 0
    while True:
        y -= 0.1 * np.sin(y)
        i += 1
        if i >= n:
            result = y
            break
    return np.sum(result ** 2) + np.sum(y)


def alias_carried_by_a_continue(x, n):
    y = x * 1.0
    kept = x * 0.0
    for i in range(n):
        if i == 0:
            kept = y
            continue
        y -= 0.1 * np.sin(y)  # WRITE
    return np.sum(kept * y)


def alias_leaving_by_a_break_then_written(x, n):
    y = x * 1.0
    kept = x * 0.0
    for i in range(n):
        y = y + 0.1 * np.sin(y)
        if i == 1:
            kept = y
            break
    y += 1.0  # WRITE
    return np.sum(kept * y)


@pytest.mark.parametrize("fn, args, wrt", [
    (alias_made_just_before_a_return_in_a_loop, (np.array([0.3, -0.2, 0.9]), 0.2), (0, 1)),
    (alias_made_just_before_a_break, (np.array([0.3, -0.2, 0.9]), 3), (0,)),
], ids=["return", "break"])
@pytest.mark.parametrize("mode", list(MODES))
def test_an_alias_made_as_a_loop_is_left_is_not_carried_around_it(fn, args, wrt, mode):
    """``result = x; break`` (or ``return x`` inside ``while True``, which desugar
    writes so): the alias exists only after the loop, so the next iteration's
    ``x -= s`` changes no name read later (NumCSE's Newton iteration was refused)."""
    check_grad(fn, args, wrt=wrt, df=tc.grad(fn, wrt=wrt, **MODES[mode]), rtol=1e-5,
               atol=1e-7)


@pytest.mark.parametrize("fn, args", [
    (alias_carried_by_a_continue, (np.array([0.3, -0.2]), 3)),
    (alias_leaving_by_a_break_then_written, (np.array([0.3, -0.2]), 3)),
], ids=["continue", "break"])
def test_an_alias_a_continue_or_break_carries_is_still_refused(fn, args):
    """A ``continue`` hands its aliases to the next iteration, a ``break`` to the
    code after the loop: a write there still changes both names."""
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=(0,))(*args)
    message = str(info.value)
    assert names_line(message, HERE, line_of(fn, '# WRITE')), message
    assert "'y'" in message and "'kept'" in message, message


def accumulated_then_written(x, n):
    y = x * 1.0
    for t in range(n):
        y += x
        y[0] += y[1]
    return np.sum(y)


def scaled_copy_updated_by_rows(x, n):
    v = x * 0.5
    for t in range(n):
        v -= 0.1 * np.tanh(v) * x
        v[1:] += 0.2 * v[:-1]
    return np.sum(v ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [accumulated_then_written, scaled_copy_updated_by_rows],
                         ids=lambda f: f.__name__)
def test_an_array_of_float_arithmetic_updated_by_an_argument_holds_nothing_of_it(f, mode):
    """``y = x * 1.0; y += x; y[0] += y[1]``: ``y`` is a number or an array of
    numbers (float arithmetic), so ``y += x`` adds numbers into it, no objects
    of ``x``; ``y[0] += ...`` was refused as a write that 'may also change x'."""
    x = np.array([1.1, 2.2, 3.3])
    check_grad(f, (x, 3), df=tc.grad(f, **MODES[mode]))


# --- dict(d): a new dict holding d's items --------------------------------------------
# A "scientific script" copies its parameter dict and sets a key of the copy
# (p = dict(defaults); p["vmax"] = v): the key store changes the new dict only,
# never d, which is read afterwards.  An array d holds is shared by the copy, and a
# write into it still changes d.
def traffic_flux_with_a_copied_parameter_dict(rho, v):
    defaults = {"vmax": 1.0, "rho_max": 2.0}
    p = dict(defaults)
    p["vmax"] = v
    flux = p["vmax"] * rho * (1 - rho / p["rho_max"])
    return np.sum(flux * defaults["vmax"]) + np.sum(p["vmax"] * rho)


def dict_copy_with_a_keyword(rho, v):
    base = {"a": 1.5, "b": rho}
    p = dict(base, a=v)
    p["b"] = rho * p["a"]
    return np.sum(p["b"] * base["b"]) + base["a"] * v


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("fn", [traffic_flux_with_a_copied_parameter_dict,
                                dict_copy_with_a_keyword])
def test_a_key_stored_into_a_dict_copy_leaves_the_original(fn, mode):
    rho = np.array([0.2, 0.7, 1.1])
    check_grad(fn, (rho, 0.8), wrt=(0, 1), df=tc.grad(fn, wrt=(0, 1), **MODES[mode]))


def a_write_into_an_array_a_dict_copy_shares(w):
    base = {"w": w * 1.0}
    p = dict(base)
    p["w"][0] = 5.0
    return np.sum(base["w"] * w)


def test_a_write_into_an_array_a_dict_copy_shares_is_still_refused():
    with pytest.raises(TransformError, match=HERE):
        tc.grad(a_write_into_an_array_a_dict_copy_shares)(np.array([1.0, 2.0]))


MODULE_PARAMETERS = {"vmax": 1.0, "rho_max": 2.0}


def copies_a_module_level_dict(rho, v):
    p = dict(MODULE_PARAMETERS)
    p["vmax"] = v
    return np.sum(p["vmax"] * rho / p["rho_max"])


def test_a_copy_of_a_module_level_dict_is_refused_as_a_dict_call():
    # the fence sees a new dict (it said 'p' may change MODULE_PARAMETERS and
    # offered np.array); the lowering does not know its keys
    with pytest.raises(TangentCkptError, match=r"dict\(\) of a value whose keys"):
        tc.grad(copies_a_module_level_dict)(np.array([0.2, 0.7]), 0.8)


# --- a new array rebinding the loop's state, written in place before it does ------
def pinned_step(g):
    x = np.ones((4, 3))
    for t in range(3):
        x_new = x + g
        x_new[1] += 0.1 * x_new[2]
        x = x_new
    return np.sum(x ** 2)


def pinned_step_by_a_parameter(x0, g):
    x = x0 * 2.0
    for t in range(3):
        x_new = x * g
        for k in range(2):
            x_new[1] -= 0.1
        x = x_new
    return np.sum(x ** 2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, args", [
    (pinned_step, (np.array([0.3, 1.0, -0.2]),)),
    (pinned_step_by_a_parameter, (np.arange(6.0).reshape(2, 3), np.array([0.3, 1.0, -0.2]))),
], ids=["sum", "product"])
def test_an_array_op_a_parameter_written_in_place_in_a_loop_is_followed(f, args, mode):
    # x_new = x + g of a 2-d x is an array (2-d or more) whatever g is, so the write
    # x_new[1] += ... changes no 'g' ("a write into 'x_new' may also change 'g'":
    # x_new was taken for a list that x + g might concatenate, round the loop)
    wrt = tuple(range(len(args)))
    check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **MODES[mode]))


def rotated_verlet_state(g, damping):
    x = np.ones((3, 2))
    x_prev = x.copy()
    for t in range(3):
        x_new = x + (x - x_prev) * damping + g
        x_new[1] += 0.1 * x_new[0]
        x_prev, x = x, x_new
    return np.sum(x ** 2)


@pytest.mark.parametrize("mode", MODES)
def test_a_state_rotated_by_a_tuple_display_stays_an_array(mode):
    # x_prev, x = x, x_new binds each name to its item of the display: x stays the
    # 2-d array it was, so (x - x_prev) * damping is no list repeated and the write
    # x_new[1] += ... changes no 'damping' (refused: "may also change 'damping'")
    args = (np.array([0.3, -1.0]), 0.9)
    check_grad(rotated_verlet_state, args, wrt=(0, 1),
               df=tc.grad(rotated_verlet_state, wrt=(0, 1), **MODES[mode]))


# --- a store keyed by a name bound to a list: an index array, the store a copy --------
def cloth_pinned_by_a_list(g, pin_pos, damping):
    # a Jakobsen cloth step: springs relaxed in place, then the pinned points put
    # back, pinned = [0, 3] (a list: no list or dict takes it as a key)
    n = 4
    x = np.zeros((n, 2))
    x[:, 0] = np.arange(n) * 0.5
    x_old = x.copy()
    pinned = [0, 3]
    springs = [(i, i + 1, 0.5) for i in range(n - 1)]
    for t in range(2):
        x_new = x + (x - x_old) * damping + g * 0.0025
        for it in range(2):
            for i, j, rest in springs:
                d = x_new[j] - x_new[i]
                dist = np.sqrt(np.dot(d, d))
                corr = 0.5 * (dist - rest) / dist * d
                x_new[i] += corr
                x_new[j] -= corr
            x_new[pinned] = pin_pos
        x_old, x = x, x_new
    return np.sum(x[:, 1]) + np.sum(x[:, 0] ** 2)


def pinned_by_a_comprehension(a, p):
    x = np.zeros(4) + a
    ends = [k * 2 for k in range(2)]
    for t in range(2):
        x[ends] = p
        x[1] *= x[2]
    return np.sum(x ** 2) * np.sum(p)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, args", [
    (cloth_pinned_by_a_list,
     (np.array([0.5, -9.8]), np.array([[0.0, 0.0], [1.5, 0.1]]), 0.99)),
    (pinned_by_a_comprehension, (np.array([0.5, -1.0, 2.0, 0.3]), np.array([0.7, 1.2]))),
], ids=["display", "comprehension"])
def test_a_store_keyed_by_a_list_copies_into_the_array(f, args, mode):
    # x_new[pinned] = pin_pos with pinned bound only to a list: an index array
    # (a list indexes no list, and no dict hashes it), so the store copies
    # pin_pos's numbers and x_new holds no reference to it (refused: "a write into
    # 'x_new' may also change 'pin_pos'", as x_new was taken for a list or dict)
    wrt = tuple(k for k, a in enumerate(args) if not isinstance(a, int))
    check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **MODES[mode]), rtol=1e-5)


def stored_under_a_tuple_name(a, b):
    d = {}
    key = (0, 1)
    d[key] = a
    for k in range(2):
        d[key] += b
    return np.sum(d[key] * a)


def test_a_store_keyed_by_a_tuple_name_still_holds_the_value():
    # a tuple is a dict key: d[key] = a makes d hold 'a' itself
    with pytest.raises(TangentCkptError, match="a write into 'd' may also change 'a'") as err:
        tc.grad(stored_under_a_tuple_name, wrt=(0, 1))(np.ones(3), np.arange(3.0))
    assert names_line(str(err.value), HERE, line_of(stored_under_a_tuple_name, "d[key] += b"))


# --- a loop over a list of index tuples an object holds, writing its arrays ----------
class FactorisedRatings:
    """Matrix factorisation by SGD as a class (the recommender tutorials' MF:
    samples of (i, j, R[i, j]), biases and factors updated in place by row)."""

    def __init__(self, R, P0, Q0, alpha, beta):
        self.R = R
        self.num_users, self.num_items = R.shape
        self.alpha = alpha
        self.beta = beta
        self.P = P0.copy()
        self.Q = Q0.copy()
        self.b_u = np.zeros(self.num_users)
        self.b_i = np.zeros(self.num_items)
        self.b = 0.5
        self.samples = [(i, j, self.R[i, j]) for i in range(2) for j in range(3)]

    def sgd(self):
        for i, j, r in self.samples:
            prediction = self.b + self.b_u[i] + self.b_i[j] + self.P[i, :].dot(self.Q[j, :].T)
            e = r - prediction
            self.b_u[i] += self.alpha * (e - self.beta * self.b_u[i])
            self.b_i[j] += self.alpha * (e - self.beta * self.b_i[j])
            self.P[i, :] += self.alpha * (e * self.Q[j, :] - self.beta * self.P[i, :])
            self.Q[j, :] += self.alpha * (e * self.P[i, :] - self.beta * self.Q[j, :])


def factorise_ratings(P0, Q0, R):
    mf = FactorisedRatings(R, P0, Q0, 0.1, 0.01)
    for it in range(2):
        mf.sgd()
    return np.sum(mf.P ** 2) + np.sum(mf.Q) + np.sum(mf.b_u * mf.b_i[:2])


@pytest.mark.parametrize("mode", MODES)
def test_a_loop_over_index_tuples_an_object_holds_is_not_changed_by_its_writes(mode):
    # self.samples is only ever a list of (range counter, range counter, R[i, j]):
    # the writes into self.b_u[i], self.P[i, :] change no place of it, and i, j
    # are numbers (refused: "a write into 'self' inside the loop over
    # self.samples may change the rows it has still to visit")
    R = np.array([[5.0, 3.0, 0.0], [4.0, 0.0, 1.0]])
    args = (np.full((2, 2), 0.3), np.full((3, 2), 0.2) + np.arange(6.0).reshape(3, 2) * 0.05,
            R)
    check_grad(factorise_ratings, args, wrt=(0, 1, 2),
               df=tc.grad(factorise_ratings, wrt=(0, 1, 2), **MODES[mode]), rtol=1e-5)


class RowViewPairs:
    def __init__(self, x):
        self.b = x * 1.0
        self.rows = [(i, self.b[i:i + 1]) for i in range(3)]

    def sweep(self, g):
        total = 0.0
        for i, v in self.rows:
            self.b[i] += g
            total = total + v[0]  # v is a view of self.b: it sees the write
        return total


def sweeps_row_views(x, g):
    o = RowViewPairs(x)
    t = o.sweep(g)
    return t + o.sweep(g)


def test_an_item_that_may_be_a_view_of_the_written_array_is_still_refused():
    with pytest.raises(TangentCkptError, match="a write into 'self' may also change 'v'"):
        tc.grad(sweeps_row_views, wrt=(0, 1))(np.array([1.0, 2.0, 3.0]), 0.5)


# --- a list grown by appends keeps its items by place --------------------------------
# The tridiagonal (Thomas) solver of CFD scripts copies its four diagonals with
# `ac, bc, cc, dc = map(np.array, (a, b, c, d))` (the TDMAsolver gist everyone
# copies); desugar writes the map as appends to a new list, which is then unpacked.
# Each name is its own new array, so the writes into bc and dc change no other name
# (refused: "a write into 'bc' may also change 'ac'").
# (the solver, as tests/test_real_programs.py holds it)
from test_real_programs import tdma_solver as tdma_solve  # noqa: E402


def tdma_energy(a, b, c, d):
    x = tdma_solve(a, b, c, d)
    return np.sum(x ** 2)


def comprehension_unpacked(a, b, g):
    u, v = [np.array(w) for w in (a, b)]
    v[0] = u[1] * g
    v += g
    return np.sum(u * v)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, args", [
    (tdma_energy, (np.array([-0.5, -0.4, -0.3]), np.array([2.0, 2.5, 2.2, 1.9]),
                   np.array([-0.6, -0.2, -0.4]), np.array([1.0, 0.5, -0.3, 0.8]))),
    (comprehension_unpacked, (np.array([1.0, 2.0]), np.array([0.5, -1.0]), 0.7)),
])
def test_names_unpacked_from_a_list_of_new_arrays_are_separate(f, args, mode):
    wrt = tuple(range(len(args)))
    check_grad(f, args, wrt=wrt, df=tc.grad(f, wrt=wrt, **MODES[mode]))


def same_array_appended_twice(a, g):
    items = []
    w = np.array(a)
    items.append(w)
    items.append(w)
    u, v = items
    v[0] = g  # u is the same array: it changes too
    return np.sum(u * g)


def appended_while_another_name_holds_it(a, b, g):
    items = []
    kept = items
    items.append(np.array(a))
    items.append(np.array(b))
    u, v = kept
    v[0] = g
    return np.sum(u * v)


def test_one_array_appended_twice_is_still_refused():
    with pytest.raises(TangentCkptError, match="a write into 'v' may also change 'u'"):
        tc.grad(same_array_appended_twice, wrt=(0, 1))(np.array([1.0, 2.0]), 0.5)


def test_a_list_another_name_holds_is_not_followed_by_place():
    # (refused at the append, which grows the list `kept` names too; the items are
    # followed by place only where one name holds the list)
    with pytest.raises(TangentCkptError, match="a write into 'items' may also change 'kept'"):
        tc.grad(appended_while_another_name_holds_it, wrt=(0, 1, 2))(
            np.array([1.0, 2.0]), np.array([3.0, 4.0]), 0.5)


def rmsprop_over_zipped_lists(W1, W2, x, n):
    Ws = [W1 * 1.0, W2 * 1.0]
    cache = [np.zeros_like(W1), np.zeros_like(W2)]
    for it in range(n):
        grads = [np.tanh(x @ Ws[0]), np.sin(Ws[1])]
        for W, g, c in zip(Ws, grads, cache):
            c *= 0.9  # WRITE
            W -= 0.01 * g
    return np.sum(Ws[0]) + np.sum(cache[1])


def test_a_zip_loop_target_is_an_item_of_its_own_list_alone():
    """``c`` of ``zip(Ws, grads, cache)`` is an item of ``cache``: the refusal of
    the write into it names ``cache`` (it said 'Ws', a list ``c`` is no item of)."""
    with pytest.raises(tc.UnsupportedSyntaxError) as info:
        tc.grad(rmsprop_over_zipped_lists)(np.eye(2), np.eye(2), np.ones((1, 2)), 2)
    text = str(info.value)
    assert "a write into 'c' may also change 'cache'" in text, text
    assert "'Ws'" not in text.split("(")[0], text
