"""The aliasing fence (compiler/fence/aliasing.py): a write through a name that may share
memory with another name read later is refused with file:line and both names,
taped and checkpointed; writes that cannot change another live name still work
and agree with finite differences."""

import ast
import copy
import importlib
import math
import os
import random
import warnings

import numpy as np
import pytest

import tangent_ckpt as tc
from coverage_cases import HAVE_SCIPY, all_cases, draw
from gradcheck import check_grad
from source_lines import line_of, names_line
from tangent_ckpt.compiler import memory_sharing
from tangent_ckpt.errors import TransformError

HERE = os.path.basename(__file__)



# --- writes through views the view lowering cannot follow (tests/test_views.py
# holds the ones it follows) -------------------------------------------------------
def view_in_container(x):
    U = x * 1.0
    parts = [U[1:3]]
    parts[0] += 1.0  # WRITE
    return np.sum(U ** 2)


def loop_over_rows(X):
    Y = X * 1.0
    for row in Y:
        row += 1.0
    return np.sum(Y ** 2)


def _interior(U):
    return U[1:-1]


def helper_returns_view(x):
    U = x * 1.0
    u = _interior(U)
    u += 1.0  # WRITE
    return np.sum(U ** 2)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_write_into_the_rows_a_loop_iterates_is_followed(checkpoint):
    """Refused (a write into 'row' may also change 'Y'); desugar's row_loops.py
    writes the loop over indices, ``row = Y[k]`` a view the view pass follows."""
    check_grad(loop_over_rows, (np.arange(6.0).reshape(2, 3) / 4,),
               df=tc.grad(loop_over_rows, wrt=0, checkpoint=checkpoint))


@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_write_through_a_view_a_helper_returns_is_followed(checkpoint):
    """Refused while the lowering inlined ``_interior`` (its result was a value of
    its own); inlined by desugar, ``u`` is a view of ``U`` the view pass follows."""
    check_grad(helper_returns_view, (np.array([0.3, -0.2, 0.1, 0.4]),),
               df=tc.grad(helper_returns_view, wrt=0, checkpoint=checkpoint))


def helper_with_internal_view(x):
    return _bump_interior(x * 1.0)


def _bump_interior(U):
    u = U[1:-1]
    u += 1.0  # WRITE
    return np.sum(U ** 2)


def conj_of_real_is_itself(x):
    y = x.conj()
    y[0] = 0.0  # WRITE
    return np.sum(x * x)


def einsum_transpose_view(a):
    y = np.einsum("ij->ji", a)
    y[0, 1] = 0.0  # WRITE
    return np.sum(a * a)



def local_helper_returning_its_argument(x):
    def keep(*xs):
        return xs[0]
    v = x * 1.0
    w = keep(v, x)  # is v
    v[0] = 0.5  # WRITE
    return np.sum(w * v)

REFUSED = [
    (view_in_container, (np.array([0.3, -0.2, 0.1, 0.4]),), "parts", "U"),
    (conj_of_real_is_itself, (np.array([0.3, -0.2]),), "y", "x"),
    (einsum_transpose_view, (np.ones((2, 2)),), "y", "a"),
    (local_helper_returning_its_argument, (np.array([0.3, -0.2]),), "v", "w"),
]


@pytest.mark.parametrize("fn, args, written, other", REFUSED, ids=[r[0].__name__ for r in REFUSED])
@pytest.mark.parametrize("checkpoint", [False, True])
def test_write_through_alias_is_refused(fn, args, written, other, checkpoint):
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=0, checkpoint=checkpoint)(*args)
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
    assert f"'{written}'" in message and f"'{other}'" in message, message


def test_a_helper_writing_through_a_view_of_its_parameter_writes_the_callers_array():
    """Once refused (the fence saw 'u' and 'U' in the helper); now followed and
    written back to the caller (views.py, lower/calls.py)."""
    check_grad(helper_with_internal_view, (np.array([0.3, -0.2, 0.1, 0.4]),))


# --- writes that cannot change another live name stay differentiable ---------------
def fresh_array_written(x, y):
    a = x * 1.0
    a += y
    a[0] = a[0] * 3.0
    return np.sum(a * a)


def alias_never_read_again(x, y):
    a = x * 1.0
    b = a
    b += y
    return np.sum(b * b)


def loop_keeps_previous_state(h, W, b, n):
    loss = 0.0
    for t in range(n):
        h_prev = h
        h = np.tanh(h @ W)
        h += b
        loss = loss + np.sum(h * h_prev)
    return loss


def copy_breaks_the_alias(x):
    V = np.ones(5)
    v = V[1:4].copy()
    v += x
    return np.sum(np.sin(V)) + np.sum(v ** 2)


def rebinding_is_not_a_write(x):
    V = x * 1.0
    v = V[1:3]
    v = v + 1.0
    return np.sum(V ** 2) + np.sum(v ** 2)


def test_write_into_a_fresh_array():
    check_grad(fresh_array_written, (np.array([0.3, -0.2]), np.array([1.0, 2.0])), wrt=(0, 1))


def test_write_through_an_alias_that_is_never_read_again():
    check_grad(alias_never_read_again, (np.array([0.3, -0.2]), np.array([1.0, 2.0])),
               wrt=(0, 1))


@pytest.mark.parametrize("checkpoint", [False, True])
def test_loop_state_written_in_place_beside_its_previous_value(checkpoint):
    rng = np.random.default_rng(0)
    h, W, b = rng.normal(size=(2, 3)), rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3)
    df = tc.grad(loop_keeps_previous_state, wrt=(0, 1, 2), checkpoint=checkpoint)
    check_grad(loop_keeps_previous_state, (h, W, b, 5), wrt=(0, 1, 2), df=df)


def test_copy_breaks_the_alias():
    check_grad(copy_breaks_the_alias, (np.array([0.3, -0.2, 0.1]),))


def test_rebinding_a_view_is_not_a_write():
    check_grad(rebinding_is_not_a_write, (np.array([0.3, -0.2, 0.1, 0.4]),))


def rows_of_an_array_rebound_in_the_loop(B, s, n):
    B = B * 1.0
    for row0 in B:
        for t1 in range(n):
            if np.sum(np.tanh(B + row0[-1])) > 0.2:
                B = B * np.cos(s)
            else:
                B = 0.5 * B + 0.5 * np.sin(s)
            B[0] = np.tanh(B[1])
    return np.sum(B)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_rows_of_the_array_a_loop_started_with_are_not_its_rebound_successor(checkpoint):
    """`for row0 in B` iterates the array B had when the loop began; writes into
    the arrays B is rebound to in the body cannot change row0 (found by the
    fuzzer: the two branches' new arrays were once confused with row0's)."""
    df = tc.grad(rows_of_an_array_rebound_in_the_loop, wrt=(0, 1), checkpoint=checkpoint)
    check_grad(rows_of_an_array_rebound_in_the_loop, (np.ones((2, 3)) * 0.3, 0.7, 2),
               wrt=(0, 1), df=df)


def einsum_of_two_operands_written(B, M):
    v = np.einsum("ij,jk->ik", B, M)
    v[0] = np.tanh(v[1])
    return np.sum(v * v) + np.sum(B * M[0])


def test_einsum_of_two_operands_is_a_new_array():
    """Only a one-operand einsum may be a view; a product is a new array."""
    rng = np.random.default_rng(3)
    check_grad(einsum_of_two_operands_written, (rng.normal(size=(2, 3)), rng.normal(size=(3, 3))),
               wrt=(0, 1))


# --- lists, their items, and what arithmetic holds ----------------------------------
def appended_items_computed_from_the_last_one(x, n):
    xs = [x * 1.0]
    for t in range(n):
        last = xs[-1]
        step = 0.5 * last * last
        xs.append(last - step)
    return np.sum(np.stack(xs)) + np.sum(step)


def product_with_a_new_array_written(c, s):
    v = c * np.ones((2, 3))
    v[:, 1:] *= np.tanh(s)
    return np.sum(v) + np.sum(c)


@pytest.mark.parametrize("checkpoint", [False, True])
def test_an_append_writes_the_list_not_its_items(checkpoint):
    """``xs.append(v)`` grows the list: ``last`` and ``step`` (computed from the
    list's items) are not written, so they may be read afterwards."""
    df = tc.grad(appended_items_computed_from_the_last_one, checkpoint=checkpoint)
    check_grad(appended_items_computed_from_the_last_one, (np.array([0.3, -0.2]), 4), df=df)


def test_a_product_with_a_new_array_holds_no_items():
    """``c * np.ones(...)`` is NumPy arithmetic even if ``c`` were a list: the new
    array holds nothing of ``c``, so writing into it cannot change ``c``."""
    check_grad(product_with_a_new_array_written, (np.array([[0.3, -0.2, 0.5]]), 0.4),
               wrt=(0, 1))



def local_helper_returning_a_new_value_written(x, s):
    def total(*xs, scale=1.0):
        acc = 0.0
        for y in xs:
            acc = acc + np.sum(np.tanh(y * scale))
        return acc
    v = x * 1.0
    w = total(v, x, scale=0.5) + total(v)
    v[0] = s
    return w + np.sum(v * x)


def test_a_local_helper_returning_new_values_holds_nothing_of_its_arguments():
    """``total(v) + total(v)`` would be list concatenation holding ``v`` if ``total``
    returned its arguments; it returns a number it makes (the fence reads its
    returns), so writing into ``v`` afterwards cannot change ``w`` (the --fuzz-long
    hvp refusal)."""
    check_grad(local_helper_returning_a_new_value_written, (np.array([0.3, -0.2]), 0.4),
               wrt=(0, 1))

class _Holder:
    def __init__(self):
        self.W = None

    def append(self, g):  # named like a list method, writes into what it holds
        self.W[0] = g


def object_method_writing_what_it_holds(x):
    W = x * 1.0
    holder = _Holder()
    holder.W = W
    holder.append(2.0 * x[1])  # WRITE
    return np.sum(W * x)


def test_a_method_of_a_users_object_may_write_what_the_object_holds():
    """Only a list's, dict's or array's own methods write just the object they are
    called on; a user's ``append`` may write ``self.W``, which is ``W``."""
    with pytest.raises(TransformError) as info:
        tc.grad(object_method_writing_what_it_holds)(np.array([0.3, -0.2]))
    message = str(info.value)
    # the write in the method, and the line calling it (desugar inlined the method)
    assert f"{HERE}:{line_of(_Holder.append, 'self.W[0] = g')}:" in message, message
    assert f"called at line {line_of(object_method_writing_what_it_holds, '# WRITE')}" in \
        message, message
    assert "'W'" in message, message


# --- dicts and lists of arrays: each entry is its own ---------------------------------
def one_entry_added_to_while_another_is_read(x):
    d = {'a': x * 1.0, 'b': x * 2.0}
    b = d['b']
    d['a'] += 1.0
    return np.sum(d['a'] * b) + np.sum(b)


def entries_named_and_one_written(x):
    d = {'a': x * 1.0, 'b': x * 2.0}
    a, b = d['a'], d['b']
    a[0] = 5.0
    return np.sum(a * x) + np.sum(b)


def entries_filled_one_by_one(x):
    d = {}
    d['a'] = x * 1.0
    d['b'] = x * 2.0
    b = d['b']
    d['a'] += 1.0
    return np.sum(d['a']) + np.sum(b * b)


def one_array_under_two_keys(x):
    A = x * 1.0
    d = {'a': A, 'b': A}
    b = d['b']
    d['a'] += 1.0  # WRITE
    return np.sum(d['a']) + np.sum(b)


def entry_written_through_its_name(x):
    d = {'a': x * 1.0, 'b': x * 2.0}
    a = d['a']
    a[0] = 5.0  # WRITE
    return np.sum(d['a']) + np.sum(d['b'])


@pytest.mark.parametrize("fn", [one_entry_added_to_while_another_is_read,
                                entries_named_and_one_written, entries_filled_one_by_one])
def test_a_write_into_one_entry_does_not_change_another(fn):
    """The fence knows the entries of a dict (or list) made in the function with
    constant keys: a write into d['a'] cannot change d['b'] (it once refused these
    naming 'b')."""
    check_grad(fn, (np.array([0.3, -0.2, 0.6]),))


@pytest.mark.parametrize("fn, written, other", [
    (one_array_under_two_keys, "d", "b"),
    (entry_written_through_its_name, "a", "d"),
])
def test_a_write_into_an_entry_names_what_it_changes(fn, written, other):
    with pytest.raises(TransformError) as info:
        tc.grad(fn)(np.array([0.3, -0.2, 0.6]))
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
    assert f"a write into '{written}' may also change '{other}'" in message, message


# --- the fence knows every rule that may return a view --------------------------
def _calls_returning_views(case):
    """The functions that one coverage case calls whose result shares memory
    with an array they were given (each line run as written, one at a time)."""
    rng = np.random.default_rng(0)
    namespace = {"np": np, "math": math, "random": random, "c": np.ones((4, 4)),
                 "rt": tc.runtime}
    if HAVE_SCIPY:
        namespace["scipy"] = importlib.import_module("scipy")
    namespace.update({p: draw(rng, shape, kind) for p, (shape, kind) in case.args.items()})
    found = set()
    for line in case.body.splitlines():
        node = ast.parse(line).body[0]
        call = node.value
        before = [v for v in namespace.values() if isinstance(v, np.ndarray)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # np.row_stack
            out = eval(compile(ast.Expression(call), "<case>", "eval"), namespace)
        if isinstance(node, ast.Assign):
            exec(compile(ast.Module([node], []), "<case>", "exec"), namespace)
        if isinstance(call, ast.Call):
            outs = out if isinstance(out, (list, tuple)) else [out]
            if any(isinstance(o, np.ndarray) and np.shares_memory(o, a)
                   for o in outs for a in before):
                fn = eval(compile(ast.Expression(call.func), "<case>", "eval"), namespace)
                found.add(f".{call.func.attr}()" if isinstance(getattr(fn, "__self__", None),
                                                               np.ndarray) else fn)
    return found


def test_every_rule_that_returns_a_view_is_a_view_function():
    """A rule added without its place in the fence would let a write through the
    view go unseen: every function (or array method) a coverage case calls that
    returns memory of its argument must be one of memory_sharing.VIEW_FUNCTIONS (or
    VIEW_METHODS).  It found np.einsum ('ij->ji' is a view) and x.conj() (x
    itself for real x)."""
    unfenced = set()
    for case in all_cases():
        for fn in _calls_returning_views(case):
            if isinstance(fn, str):      # an array method, ".diagonal()"
                if fn[1:-2] not in memory_sharing.VIEW_METHODS:
                    unfenced.add(fn)
            elif not any(fn is v for v in memory_sharing.VIEW_FUNCTIONS):
                unfenced.add(getattr(fn, "__name__", repr(fn)))
    assert not unfenced


# --- an item of a list, tuple or dict is the object itself (issue #28) ------------
# ``lst[0]`` of ``lst = [a]`` is the array ``a``, not a view of the list: a write
# through the name it is bound to changes ``a``.  Once taken for a maybe-view of
# an array (followed only if ``lst`` were an ndarray), the write was lost.

def item_of_a_list_augmented(a, y):
    lst = [a]
    b = lst[0]
    b += y  # WRITE
    return np.sum(a ** 2)


def item_of_a_tuple_augmented(a, y):
    a = a * 1.0
    t = (a, 1)
    b = t[0]
    b += y  # WRITE
    return np.sum(a ** 2) + np.sum(b)


def item_of_a_pair_in_a_loop(a, y, n):
    a = a * 1.0
    pair = (a, y)
    for i in range(n):
        u = pair[0]
        u *= 0.9  # WRITE
    return np.sum(a ** 2)


def item_of_a_list_subscript_write(a, y):
    lst = [a]
    z = lst[0]
    z[0] = 2.0  # WRITE
    return np.sum(a * y)


def item_of_a_dict_augmented(a, y):
    a = a * 1.0
    d = {"k": a}
    b = d["k"]
    b *= y  # WRITE
    return np.sum(a ** 2)


def item_of_a_comprehension(a, y):
    a = a * 1.0
    rows = [a for _ in range(2)]
    r = rows[1]
    r -= y  # WRITE
    return np.sum(a ** 2)


ITEM_ALIASES = [
    (item_of_a_list_augmented, "b", "a"),
    (item_of_a_tuple_augmented, "b", "a"),
    (item_of_a_pair_in_a_loop, "u", "a"),
    (item_of_a_list_subscript_write, "z", "a"),
    (item_of_a_dict_augmented, "b", "a"),
    (item_of_a_comprehension, "r", "a"),
]
ITEM_OPTIONS = [dict(), dict(checkpoint=True), dict(checkpoint=True, snapshots=2),
                dict(checkpoint=True, memory_budget="40kB")]


@pytest.mark.parametrize("options", ITEM_OPTIONS,
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "taped")
@pytest.mark.parametrize("fn, written, other", ITEM_ALIASES,
                         ids=[r[0].__name__ for r in ITEM_ALIASES])
def test_write_through_an_item_of_a_container_is_refused(fn, written, other, options):
    a, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    args = (a, y, 3) if fn is item_of_a_pair_in_a_loop else (a, y)
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=(0, 1), **options)(*args)
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in message, message
    assert f"a write into '{written}' may also change '{other}'" in message, message
    assert "an item of a list or tuple" in message


def item_rebound_not_written(a, y):
    lst = [a]
    b = lst[0]
    b = b + y
    return np.sum(a ** 2) + np.sum(b ** 2)


def item_rebound_in_a_loop(a, y, n):
    pair = (a * 1.0, y)
    for i in range(n):
        u = pair[0]
        u = u * 0.9 + pair[1]
        pair = (u, pair[1])
    return np.sum(pair[0] ** 2)


def item_written_after_a_copy(a, y):
    lst = [a]
    b = lst[0].copy()
    b += y
    return np.sum(a ** 2) + np.sum(b ** 2)


@pytest.mark.parametrize("fn", [item_rebound_not_written, item_written_after_a_copy],
                         ids=lambda f: f.__name__)
def test_an_item_rebound_or_copied_is_differentiated(fn):
    check_grad(fn, (np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])), wrt=(0, 1))


@pytest.mark.parametrize("options", ITEM_OPTIONS[1:],
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_an_item_rebound_in_a_checkpointed_loop_equals_taped(options):
    a, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    got = check_grad(item_rebound_in_a_loop, (a, y, 5), wrt=(0, 1),
                     df=tc.grad(item_rebound_in_a_loop, wrt=(0, 1), **options))
    taped = tc.grad(item_rebound_in_a_loop, wrt=(0, 1))(a, y, 5)
    for g, t in zip(got, taped):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)


# --- objects: the hint keeps to what an object is; stores through a bound method ------
class _Summing:
    def __init__(self, v):
        self.v = v  # the caller's array

    def add(self, x):
        self.v += x  # in place: into the caller's v
        return self.v


def object_adding_into_its_argument(x, v):
    acc = _Summing(v)
    y = acc.add(x)  # WRITE
    return np.sum(y * v)


def test_a_write_by_an_objects_method_into_the_callers_array_changes_it():
    """``self.v += x`` with ``self.v`` the caller's ``v``: refused while the lowering
    inlined the method (with a hint for objects); desugar now writes the object
    as the name ``acc_v``, and the view pass carries the write into ``v``."""
    check_grad(object_adding_into_its_argument, (np.ones(3) * 0.4, np.ones(3) * 0.7),
               wrt=(0, 1))


class _Caching:
    def keep(self, h):
        self.h = h
        return h


CACHE = _Caching()


def cached_then_written(x):
    h = x * 1.0
    CACHE.keep(h)  # CACHE.h is h from here on
    h += 1.0  # WRITE
    return np.sum(CACHE.h * x)


def test_what_a_method_of_a_module_level_object_stores_is_followed():
    """``CACHE.keep(h)`` stores ``h`` into the module-level object (the fence reads
    the bound method's body): writing into ``h`` afterwards may change
    ``CACHE.h``, which is read -- refused, never differentiated as two arrays
    (desugar's outside_attributes.py writes ``CACHE.h`` as a name: the fence names
    it ``CACHE.h``)."""
    with pytest.raises(TransformError) as info:
        tc.grad(cached_then_written)(np.array([0.3, -0.2]))
    message = str(info.value)
    assert f"{HERE}:{line_of(cached_then_written, '# WRITE')}:" in message, message
    assert "'CACHE.h'" in message, message


def nested_write_of_a_product(L, k, w):
    U = np.zeros((3, 4))
    for t in range(3):
        U[1][k] = U[1][k] * L + w       # NESTED: k's type is not known
    return np.sum(U) + np.sum(w)


def test_a_store_into_an_array_of_numbers_holds_nothing_of_its_value():
    """``U[1][k] = U[1][k] * L + w`` copies numbers into U: a later write into U
    changes neither L nor w (the fence once blamed them: `*` of a list repeats
    it, and a list would hold the result); what refuses it is the lowering,
    for the nested subscript, at the user's line."""
    with pytest.raises(TransformError) as raised:
        tc.grad(nested_write_of_a_product)(0.5, 2, np.ones(4))
    message = str(raised.value)
    assert f":{line_of(nested_write_of_a_product, '# NESTED')}:" in message
    assert "nested subscript" in message and "'L'" not in message and "'w'" not in message


# --- an object holding a module-level function, written in place (joelnet's Activation) ----
def _activation(x):
    return np.tanh(x)


_SCALES = [np.ones(2)]


def _scaled(x, scales=_SCALES):  # holds a module-level array through its default
    return x * scales[0]


class _FunctionHolder:
    def __init__(self, W, f):
        self.W = W
        self.f = f


def _nudge(holder, lr):
    holder.W -= lr * holder.W ** 3


def holder_of_a_plain_function_nudged(x, W):
    holder = _FunctionHolder(W * 1.0, _activation)
    _nudge(holder, 0.1)
    return np.sum(_activation(holder.W @ x))


def holder_of_a_function_with_an_array_default_nudged(x, W):
    holder = _FunctionHolder(W * 1.0, _scaled)
    _nudge(holder, 0.1)
    return np.sum(np.tanh(holder.W @ x))


def test_a_write_into_an_object_holding_a_plain_function_is_not_a_write_into_the_function():
    """A NumPy write cannot change a function without defaults, closure or
    attributes (it was refused as "a write into 'holder' may change the
    module-level object '_activation'").  One whose default holds a module-level
    array was refused too, while the object was the lowering's; desugar writes it
    as names, the write is into ``holder_W`` alone."""
    x, W = np.array([0.3, 0.7]), np.array([[0.5, -0.2], [0.1, 0.4]])
    check_grad(holder_of_a_plain_function_nudged, (x, W), wrt=(0, 1))
    check_grad(holder_of_a_function_with_an_array_default_nudged, (x, W), wrt=(0, 1))


# --- a container holding one array at two places, one place updated in place ------
# NumPy: ``lst[0] += v`` adds into the array object at lst[0], so every place of
# lst (and every name) holding that object changes.  The lowering reads each
# place as a value of its own, so the fence refuses such an update where another
# place may hold the same object and the container is read afterwards.
WEIGHTS = np.array([1.0, 3.0])


def repeated_zeros(x, n):
    lst = [np.zeros(2)] * 2
    for t in range(n):
        lst[0] += x  # WRITE
    return np.sum(lst[1] * WEIGHTS)


def one_name_at_two_places(x, n):
    a = x * 1.0
    lst = [a, a]
    for t in range(n):
        lst[0] += 1.0  # WRITE
    return np.sum(lst[1] * x)


def momentum_velocities(x, n):
    vel = [np.zeros_like(x)] * 3
    for t in range(n):
        for i in range(3):
            vel[i] *= 0.9  # WRITE
            vel[i] += x * (i + 1.0)
    return np.sum(vel[0] * WEIGHTS)


def one_array_under_two_keys_in_a_loop(x, n):
    w = x * 1.0
    d = {"a": w, "b": w}
    for t in range(n):
        d["a"] += x  # WRITE
    return np.sum(d["b"] * WEIGHTS)


def one_array_appended_twice(x, n):
    a = x * 2.0
    lst = []
    lst.append(a)
    lst.append(a)
    for t in range(n):
        lst[1] -= 0.5 * x  # WRITE
    return np.sum(lst[0] * WEIGHTS)


def a_parameter_repeated(w, n):
    lst = [w] * 3
    for t in range(n):
        lst[2] *= 1.5  # WRITE
    return np.sum(lst[0] * WEIGHTS)


def comprehension_of_one_name(x, n):
    w = x * 1.0
    lst = [w for _ in range(2)]
    for t in range(n):
        lst[0] += x  # WRITE
    return np.sum(lst[1] * WEIGHTS)


def concatenated_lists_sharing_an_array(x, n):
    a = x * 1.0
    lst = [a] + [x * 2.0, a]
    for t in range(n):
        lst[0] += x  # WRITE
    return np.sum(lst[2] * WEIGHTS)


def dict_call_of_one_array(x, n):
    w = x * 1.0
    d = dict(p=w, q=w)
    for t in range(n):
        d["p"] += x  # WRITE
    return np.sum(d["q"] * WEIGHTS)


def list_of_a_repeated_tuple(x, n):
    w = x * 1.0
    lst = list((w, w))
    for t in range(n):
        lst[0] += x  # WRITE
    return np.sum(lst[1] * WEIGHTS)


def copy_of_a_repeated_list(x, n):
    a = x * 1.0
    lst = [a, a]
    again = lst.copy()
    for t in range(n):
        again[0] += x  # WRITE
    return np.sum(again[1] * WEIGHTS)


def one_place_stored_into_another(x, n):
    lst = [x * 1.0, x * 2.0]
    lst[1] = lst[0]
    for t in range(n):
        lst[0] *= 1.5  # WRITE
    return np.sum(lst[1] * WEIGHTS)


def repeated_a_run_time_number_of_times(x, n):
    vel = [np.zeros_like(x)] * n
    for i in range(n):
        vel[i] += x * (i + 1.0)  # WRITE
    return np.sum(vel[0] * WEIGHTS)


def add_into_first(lst, x):
    lst[0] += x


def helper_adds_into_a_repeated_list(x, n):
    lst = [x * 1.0] * 2
    for t in range(n):
        add_into_first(lst, x)  # WRITE
    return np.sum(lst[1] * WEIGHTS)


REPEATED = [repeated_zeros, one_name_at_two_places, momentum_velocities,
            one_array_under_two_keys_in_a_loop, one_array_appended_twice, a_parameter_repeated,
            comprehension_of_one_name, concatenated_lists_sharing_an_array,
            dict_call_of_one_array, list_of_a_repeated_tuple, copy_of_a_repeated_list,
            one_place_stored_into_another, repeated_a_run_time_number_of_times,
            helper_adds_into_a_repeated_list]


@pytest.mark.parametrize("fn", REPEATED, ids=[f.__name__ for f in REPEATED])
@pytest.mark.parametrize("checkpoint", [False, True])
def test_an_in_place_update_of_a_repeated_item_is_refused(fn, checkpoint):
    """The gradient once missed the update at the other places (silently wrong,
    taped and checkpointed); refused at the user's line, naming the container."""
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=0, checkpoint=checkpoint, snapshots=2)(np.array([1.0, 2.0]), 3)
    message = str(info.value)
    assert names_line(message, HERE, line_of(fn, '# WRITE')), message
    assert "another item of" in message and "read afterwards" in message, message


def tuple_of_one_array_unpacked(x, n):
    w = x * 1.0
    t = (w, w)
    a, b = t
    for k in range(n):
        a += x  # WRITE
    return np.sum(b * WEIGHTS)


def test_an_in_place_update_of_a_name_unpacked_from_a_repeated_tuple_is_refused():
    with pytest.raises(TransformError) as info:
        tc.grad(tuple_of_one_array_unpacked, wrt=0)(np.array([1.0, 2.0]), 3)
    message = str(info.value)
    assert f"{HERE}:{line_of(tuple_of_one_array_unpacked, '# WRITE')}:" in message, message
    assert "'a'" in message and "'b'" in message, message


def fresh_arrays_from_a_comprehension(x, n):
    rows = [np.zeros(2) for _ in range(2)]
    for t in range(n):
        rows[0] += x
        rows[1] += rows[0] * x
    return np.sum(rows[1] * WEIGHTS) + np.sum(rows[0] ** 2)


def fresh_arrays_from_a_display(x, n):
    lst = [x * 1.0, x * 2.0]
    for t in range(n):
        lst[0] += x
        lst[1] *= 0.5
    return np.sum(lst[1] * lst[0])


def repeated_then_rebound(x, n):
    vel = [np.zeros_like(x)] * 3
    for t in range(n):
        for i in range(3):
            vel[i] = 0.9 * vel[i] + x * (i + 1.0)
    return np.sum(vel[0] * WEIGHTS) + np.sum(vel[2] ** 2)


def new_arrays_appended(x, n):
    lst = []
    for i in range(3):
        lst.append(x * (i + 1.0))
    for t in range(n):
        lst[0] += x
        lst[2] -= 0.1 * lst[1]
    return np.sum(lst[0] * lst[2])


def momentum_with_own_velocities(x, n):
    vel = [np.zeros_like(x) for _ in range(2)]
    p = [x * 1.0, x * 2.0]
    for t in range(n):
        for i in range(2):
            vel[i] *= 0.9
            vel[i] += p[i] ** 2
            p[i] = p[i] - 0.1 * vel[i]
    return np.sum(p[0] * WEIGHTS) + np.sum(p[1] ** 2)


def distinct_arrays_under_two_keys(x, n):
    d = {"a": x * 1.0, "b": x * 3.0}
    for t in range(n):
        d["a"] += d["b"] * x
    return np.sum(d["b"] * WEIGHTS) + np.sum(d["a"] ** 2)


def distinct_arrays_from_calls(x, n):
    d = dict(p=x * 1.0, q=x * 3.0)
    lst = list((x * 2.0, x * 0.5))
    for t in range(n):
        d["p"] += lst[1] * x
        lst[0] *= 0.9
    return np.sum(d["q"] * d["p"]) + np.sum(lst[0] * lst[1])


def rebind_first(lst, x):
    lst[0] = lst[0] * 0.9 + x


def helper_rebinds_a_place_of_a_repeated_list(x, n):
    lst = [x * 1.0] * 2
    for t in range(n):
        rebind_first(lst, x)
    return np.sum(lst[1] * WEIGHTS) + np.sum(lst[0] ** 2)


def helper_adds_into_a_list_of_distinct_arrays(x, n):
    lst = [x * 1.0, x * 2.0]
    for t in range(n):
        add_into_first(lst, x)
    return np.sum(lst[1] * lst[0])


def products_by_integers_appended(x, n):
    lst = []
    lst.append(np.sin(x))
    lst.append(x * 2)  # (x * 2 would repeat x's items were x a list)
    lst.extend([x * 3, x * 1])
    for t in range(n):
        lst[1] += lst[0] * 0.5
        lst[3] *= 0.5
    return np.sum(lst[1] * lst[0]) + np.sum(lst[2] * lst[3])


DISTINCT = [products_by_integers_appended, fresh_arrays_from_a_comprehension, fresh_arrays_from_a_display,
            repeated_then_rebound, new_arrays_appended, momentum_with_own_velocities,
            distinct_arrays_under_two_keys, distinct_arrays_from_calls,
            helper_adds_into_a_list_of_distinct_arrays,
            helper_rebinds_a_place_of_a_repeated_list]


@pytest.mark.parametrize("fn", DISTINCT, ids=[f.__name__ for f in DISTINCT])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_in_place_updates_of_items_that_are_distinct_arrays_stay_differentiable(fn, options):
    """Items each their own array (a comprehension's new arrays, a display of
    new arrays, appends of new arrays), or a repeated item rebound instead of
    updated in place: the gradient equals central differences, taped and
    checkpointed (the comprehension was refused, naming the module 'np')."""
    check_grad(fn, (np.array([0.7, -0.4]), 3), df=tc.grad(fn, wrt=0, **options))


# --- a loop over a view of an array its body writes into ---------------------------
def reversed_rows_written(x):
    y = x * 1.0
    for v in reversed(y):
        y[0] = y[0] * v  # WRITE
    return y[0]


def sliced_rows_written(x):
    y = x * 1.0
    for k, v in enumerate(y[:-1]):
        y[k + 1] = y[k + 1] - 0.5 * v  # WRITE
    return np.sum(y ** 2)


def named_view_rows_written(x):
    Y = x * 1.0
    Z = Y[1:]
    for r in Z:
        Y[0] = Y[0] * r  # WRITE
    return Y[0]


def view_updated_and_rebound(x):
    y = x * 1.0
    for v in y:
        y += v  # WRITE
        y = y * 2.0
    return np.sum(y)


@pytest.mark.parametrize("f", [reversed_rows_written, sliced_rows_written],
                         ids=lambda f: f.__name__)
def test_a_loop_over_a_view_of_an_array_its_body_writes_reads_the_current_rows(f):
    """Python's iterator reads each row of ``reversed(y)`` or ``y[:-1]`` from the
    array's memory when it reaches it, so a write in the body shows in later rows;
    the gradient read them as they were when the loop started (Python's 36 for the
    value but a wrong gradient taped; 6 and a wrong gradient checkpointed).  The
    view is now made again of the current ``y`` in each step."""
    x = np.array([1.0, 2.0, 3.0])
    check_grad(f, (x,))
    check_grad(f, (x,), df=tc.grad(f, checkpoint=True, snapshots=2))


@pytest.mark.parametrize("f", [named_view_rows_written, view_updated_and_rebound],
                         ids=lambda f: f.__name__)
def test_a_write_into_the_rows_a_loop_still_visits_is_refused(f):
    """A view under another name (``Z = Y[1:]; for r in Z``), or an array both
    updated in place and rebound in the body: the rows still to come would show
    the writes, which the gradient cannot follow."""
    with pytest.raises(TransformError) as info:
        tc.grad(f)(np.array([1.0, 2.0, 3.0]))
    message = str(info.value)
    assert f"{HERE}:{line_of(f, '# WRITE')}:" in message, message
    assert "may change the rows it has still to visit" in message, message


def rows_of_itself_written(x):
    Y = x * 1.0
    for r in Y:
        Y[0] = Y[0] * r
    return Y[0]


def items_of_a_list_written(x):
    params = [x * 1.0, x * 2.0]
    total = 0.0
    for k, W in enumerate(params):
        total = total + np.sum(W * W) * (k + 1)
    return total


@pytest.mark.parametrize("f", [rows_of_itself_written, items_of_a_list_written],
                         ids=lambda f: f.__name__)
def test_a_loop_over_the_array_it_writes_by_name_is_followed(f):
    x = np.array([1.0, 2.0, 3.0])
    check_grad(f, (x,))
    check_grad(f, (x,), df=tc.grad(f, checkpoint=True, snapshots=2))


# --- `for i, (param, grad) in enumerate(zip(params, grads))`: the count is a new int ---
# (every-algorithm/python optimization/adam_optimizer.py: `param -= lr * ...;
# self.params[i] = param` -- the write changes the list's item, read afterwards)

def enumerated_items_updated(w, c):
    params = [w.copy(), c.copy()]
    grads = [np.sin(w), np.cos(c)]
    for i, (param, grad) in enumerate(zip(params, grads)):
        param -= 0.1 * grad
        params[i] = param
    return np.sum(params[0] ** 2) + np.sum(params[1] ** 3)


def test_an_enumerate_count_shares_no_memory_with_the_items():
    """Refused as it should be (``param`` is an item of ``params``, read after the
    loop), but naming ``params``: the count ``i`` once stood for the items too, and
    the message said the write "may also change 'i'"."""
    with pytest.raises(tc.TangentCkptError) as info:
        tc.grad(enumerated_items_updated, wrt=(0, 1))(np.array([0.3, 0.5]), np.array([0.2]))
    message = str(info.value)
    assert "may also change 'params'" in message and "change 'i'" not in message, message


# --- out= a new array: no name holds it ---------------------------------------------
def divides_into_a_new_array(a, b):
    r = np.divide(a, b, out=np.zeros_like(a))
    return np.sum(r * a)


def test_out_into_a_new_array_is_refused_as_out_not_as_a_write_into_numpy():
    """``out=np.zeros_like(a)`` writes into an array no name holds: the fence let it
    through to the lowering's refusal of ``out=`` (it said 'np' was an array written
    in place and offered ``np = np.array(np)``)."""
    with pytest.raises(TransformError, match=rf"{HERE}:\d+: np.divide\(\.\.\., out=\.\.\.\) "
                                             r"writes into an array in place"):
        tc.grad(divides_into_a_new_array)(np.array([1.0, 2.0]), np.array([0.5, 4.0]))


# for w in ws: w -= lr * g -- an in-place update of the item a loop visits (SGD over a
# list of parameter arrays): refused naming the index form, which is exact.

def sgd_over_list_argument(ws, g):
    for w in ws:
        w -= 0.1 * g  # WRITE
    return np.sum(ws[0] ** 2) + np.sum(ws[1] ** 3)


def decay_over_enumerated_list(ws, g):
    for k, w in enumerate(ws):
        w *= g  # WRITE
    return np.sum(ws[0] ** 2) + np.sum(ws[1] ** 3)


def sgd_over_local_list(u, g):
    ws = [u * 1.0, u * 2.0]
    for w in ws:
        w -= 0.1 * g  # WRITE
    return np.sum(ws[0] ** 2) + np.sum(ws[1] ** 3)


def sgd_by_index(ws, g):
    for k in range(len(ws)):
        ws[k] -= 0.1 * g
    return np.sum(ws[0] ** 2) + np.sum(ws[1] ** 3)


def decay_by_index(ws, g):
    for k in range(len(ws)):
        ws[k] *= g
    return np.sum(ws[0] ** 2) + np.sum(ws[1] ** 3)


def sgd_over_local_list_by_index(u, g):
    ws = [u * 1.0, u * 2.0]
    for k in range(len(ws)):
        ws[k] -= 0.1 * g
    return np.sum(ws[0] ** 2) + np.sum(ws[1] ** 3)


ITEM_LOOPS = [(sgd_over_list_argument, sgd_by_index, True),
              (decay_over_enumerated_list, decay_by_index, True),
              (sgd_over_local_list, sgd_over_local_list_by_index, False)]


@pytest.mark.parametrize("f, by_index, list_argument", ITEM_LOOPS,
                         ids=[f.__name__ for f, _, _ in ITEM_LOOPS])
def test_an_in_place_update_of_the_item_a_loop_visits_is_refused_naming_the_index_form(
        f, by_index, list_argument):
    """It said 'may change the rows it has still to visit' (or 'may also change
    ws') and advised np.copy: for a list of arrays neither is why, nor a fix."""
    first = [np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 3.0])] if list_argument \
        else np.array([0.5, -1.0, 2.0])
    with pytest.raises(TransformError) as info:
        tc.grad(f, wrt=(1,))(first, np.array([1.0, 2.0, 3.0]))
    message = str(info.value)
    assert f"{HERE}:{line_of(f, '# WRITE')}:" in message, message
    assert "an in-place update of 'w', the item the loop over 'ws'" in message, message
    assert "for k in range(len(ws)): ws[k]" in message, message
    # the advised form computes what the refused one does, and is exact
    args = (copy.deepcopy(first), np.array([1.0, 2.0, 3.0]))
    assert np.isclose(f(copy.deepcopy(first), args[1]), by_index(*copy.deepcopy(args)))
    for options in ({}, {"checkpoint": True, "snapshots": 2}):
        check_grad(by_index, args, wrt=(1,), df=tc.grad(by_index, wrt=(1,), **options))


class _Logged:
    history = []                        # the class's list: every call appends to it

    def __init__(self, W):
        self.W = W
        self.act = np.tanh              # NumPy's function: holds no array

    def forward(self, x):
        self.history.append(1)
        return self.act(self.W @ x)


def logged_forward(W, x):
    m = _Logged(W)
    return np.sum(m.forward(x))


def test_an_object_holding_a_numpy_function_is_refused_for_what_it_writes_not_for_numpy():
    # before: "a write into 'm' may change the module-level object 'np'"; the object
    # is kept (its method appends to its class's list), and a function stored on a
    # kept object is refused since session 23, before the append is reached (which
    # session 22's message named)
    with pytest.raises(TransformError) as error:
        tc.grad(logged_forward)(np.eye(2), np.ones(2))
    assert "'np'" not in str(error.value)
    assert "a function stored on 'act'" in str(error.value) and \
        "whose methods change what its class holds" in str(error.value), str(error.value)
