"""A helper's writes into its parameters (issue #29), differentiated as NumPy runs
them, taped and checkpointed, against central finite differences, with the
caller's arrays unchanged by the gradient call:

- a method of an object the function makes is a helper like any other
  (``params = opt.update(params, grads)`` with ``params -= ...; return params``;
  a method writing through a view of its parameter);
- a helper that writes into a parameter and then rebinds it (``x += v; x = x % L``)
  changes the caller's array in a way nobody follows: followed where the caller
  never reads that array again (``return loss(x, ...)``, ``x = step(x)``), also
  through two levels of helpers (``loss -> simulate -> step``);

and what stays refused, because a live name would see the unfollowed write: the
caller reads the array after the call, directly, through an alias, a view, a
list or a lambda, or in the loop's next round."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.errors import TangentCkptError, TransformError

RUNS = [dict(), dict(checkpoint=True), dict(checkpoint=True, snapshots=2)]
RUN_IDS = ["taped", "checkpoint", "snapshots2"]


# --- a method of an object made in the function -------------------------------------
class Adam:
    def __init__(self, lr=0.001, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = None
        self.v = None
        self.t = 0

    def update(self, params, grads):
        if self.m is None:
            self.m = np.zeros_like(params)
            self.v = np.zeros_like(params)
        self.t += 1
        self.m = self.beta1 * self.m + (1 - self.beta1) * grads
        self.v = self.beta2 * self.v + (1 - self.beta2) * (grads ** 2)
        m_hat = self.m / (1 - self.beta1 ** self.t)
        v_hat = self.v / (1 - self.beta2 ** self.t)
        params -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)
        return params


def adam_method_in_a_loop(target, lr):
    opt = Adam(lr=lr)
    params = np.array([1.0, -2.0, 0.5])
    for i in range(4):
        grads = 2.0 * (params - target)
        params = opt.update(params, grads)
    return np.sum(params ** 2)


class Relaxer:
    def __init__(self, k):
        self.k = k

    def bump(self, p):
        v = p[1:]
        v += self.k * p[0]
        return 0.0


def method_writes_through_a_view_of_its_parameter(x, k):
    P = x * 1.0
    r = Relaxer(k)
    r.bump(P)
    return np.sum(P ** 2)


def method_adds_into_the_functions_argument(x, k):
    r = Relaxer(k)
    r.bump(x)
    return np.sum(x ** 2)


# --- a write into a parameter the helper then rebinds ----------------------------------
def _drift(x, v, n):
    for i in range(n):
        x += 0.2 * v
        x = x % 3.0
        v = np.cos(x) * v
    return np.sum(x * v)


def rebinding_helper_returned_at_once(x, v):
    x = x.copy()
    return _drift(x, v, 3)


def rebinding_helper_given_the_functions_argument(x, v):
    return _drift(x, v, 3)


def rebinding_helper_result_bound_to_the_same_name(x, v):
    y = x * 1.0
    y = _drift(y, v, 2)
    return y * np.sum(v)


def _mean_into_alias(theta):
    mean = theta
    mean[0] = 0.5 * (mean[1] + mean[2])
    theta = mean + 0.1
    return np.sum(np.sin(theta))


def helper_writes_through_an_alias_and_rebinds(x):
    th = np.tanh(x)
    return _mean_into_alias(th)


# --- two levels of helpers: loss -> simulate -> step ----------------------------------
def _step(H, U):
    H[:, 0] = H[:, 1]
    U[0, :] = -U[1, :]
    H[1:-1, 1:-1] -= 0.1 * (U[2:, 1:-1] - U[:-2, 1:-1]) * H[1:-1, 1:-1]
    U[1:-1, 1:-1] -= 0.1 * (H[1:-1, 2:] - H[1:-1, :-2])
    return (H, U)


def _simulate(H, steps):
    U = np.zeros_like(H) + 0.1
    for i in range(steps):
        (H, U) = _step(H, U)
    return H


def two_levels_on_the_functions_argument(H):
    return np.sum(_simulate(H, 3) ** 2)


def two_levels_on_a_copy(H0):
    H1 = H0.copy()
    return np.sum(_simulate(H1, 3) ** 2)


CASES = [
    (adam_method_in_a_loop, (np.array([0.3, 0.1, -0.4]), 0.1), (0, 1)),
    (method_writes_through_a_view_of_its_parameter, (np.array([0.3, -0.2, 0.5]), 0.7), (0, 1)),
    (method_adds_into_the_functions_argument, (np.array([0.3, -0.2, 0.5]), 0.7), (0, 1)),
    (rebinding_helper_returned_at_once, (np.array([0.3, 1.2, 2.5]), np.array([0.4, -0.1, 0.8])),
     (0, 1)),
    (rebinding_helper_given_the_functions_argument,
     (np.array([0.3, 1.2, 2.5]), np.array([0.4, -0.1, 0.8])), (0, 1)),
    (rebinding_helper_result_bound_to_the_same_name,
     (np.array([0.3, 1.2, 2.5]), np.array([0.4, -0.1, 0.8])), (0, 1)),
    (helper_writes_through_an_alias_and_rebinds, (np.array([0.3, -0.2, 0.5]),), (0,)),
    (two_levels_on_the_functions_argument, (1.0 + 0.1 * np.arange(20.0).reshape(4, 5) / 20,),
     (0,)),
    (two_levels_on_a_copy, (1.0 + 0.1 * np.arange(20.0).reshape(4, 5) / 20,), (0,)),
]
IDS = [c[0].__name__ for c in CASES]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=IDS)
@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_a_helpers_write_into_its_parameter_matches_finite_differences(fn, args, wrt, run):
    """check_grad also checks that the caller's arrays are unchanged."""
    check_grad(fn, args, wrt=wrt, df=tc.grad(fn, wrt=wrt, **run))


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=IDS)
def test_checkpointed_gradient_equals_taped(fn, args, wrt):
    taped = tc.grad(fn, wrt=wrt)(*args)
    checkpointed = tc.grad(fn, wrt=wrt, checkpoint=True, snapshots=2)(*args)
    for a, b in zip(taped, checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=IDS)
def test_the_generated_forward_computes_what_the_function_computes(fn, args, wrt):
    value, _ = tc.value_and_grad(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(value, fn(*[np.copy(a) for a in args]), rtol=1e-13)


def test_a_dead_write_carries_nothing_back_to_the_callers_name():
    """``return _drift(x, v, 3)``: the helper's x is its own variable from the
    start; the caller's x is never assigned the helper's final value."""
    df = tc.grad(rebinding_helper_returned_at_once, wrt=(0, 1))
    df(np.array([0.3, 1.2, 2.5]), np.array([0.4, -0.1, 0.8]))
    forward = df.source.split("# reverse sweep")[0]
    call = f"# line {line_of(rebinding_helper_returned_at_once, 'return _drift')}:"
    after = forward.split(call)[1].splitlines()
    assert not [line for line in after if line.strip().startswith("x = ")], forward


# --- what stays refused -----------------------------------------------------------------
def caller_reads_the_array_after_the_call(x, v):
    y = x * 1.0
    r = _drift(y, v, 2)  # WRITE
    return r + np.sum(y)


def caller_reads_an_alias_after_the_call(x, v):
    y = x * 1.0
    z = y
    r = _drift(y, v, 2)  # WRITE
    return r + np.sum(z)


def caller_reads_a_view_after_the_call(x, v):
    y = x * 1.0
    z = y[1:]
    r = _drift(y, v, 2)  # WRITE
    return r + np.sum(z)


def caller_keeps_the_array_in_a_list(x, v):
    y = x * 1.0
    kept = [y]
    r = _drift(y, v, 2)  # WRITE
    return r + np.sum(kept[0])


def caller_reads_the_array_in_a_lambda(x, v):
    y = x * 1.0
    total = lambda: np.sum(y)
    r = _drift(y, v, 2)  # WRITE
    return r + total()


def caller_calls_again_in_a_loop(x, v):
    y = x * 1.0
    r = 0.0
    for i in range(2):
        r = r + _drift(y, v, 1)  # WRITE
    return r


def alias_write_and_rebinding_read_by_the_caller(x):
    th = np.tanh(x)
    r = _mean_into_alias(th)  # WRITE
    return r + np.sum(th ** 2)


def two_levels_read_after_the_call(H0):
    H1 = H0 * 1.0
    r = np.sum(_simulate(H1, 2) ** 2)  # WRITE
    return r + np.sum(H1)


REFUSED = [
    (caller_reads_the_array_after_the_call, "y"),
    (caller_reads_an_alias_after_the_call, "z"),
    (caller_reads_a_view_after_the_call, "z"),
    (caller_keeps_the_array_in_a_list, "kept"),
    (caller_reads_the_array_in_a_lambda, "y"),
    (caller_calls_again_in_a_loop, "y"),
    (alias_write_and_rebinding_read_by_the_caller, "th"),
    (two_levels_read_after_the_call, "H1"),
]


@pytest.mark.parametrize("fn, name", REFUSED, ids=[r[0].__name__ for r in REFUSED])
@pytest.mark.parametrize("run", RUNS[:2], ids=RUN_IDS[:2])
def test_a_write_a_live_name_would_see_is_refused(fn, name, run):
    """``alias_write_and_rebinding_read_by_the_caller`` once gave a wrong gradient
    ([2, 10, 7] against [0, 110, 7] in its first form): the helper's write through
    ``mean`` into the caller's array was dropped."""
    x = np.linspace(0.2, 0.9, 3) if "two_levels" not in fn.__name__ else np.ones((3, 4))
    args = (x,) if fn.__code__.co_argcount == 1 else (x, np.array([0.4, -0.1, 0.8]))
    with pytest.raises(TransformError) as info:
        tc.grad(fn, **run)(*args)
    message = str(info.value)
    call = line_of(fn, '# WRITE')
    # at the call, or (the helper inlined by desugar) at the helper's write, naming the call
    assert f"{__name__.split('.')[-1]}.py:{call}:" in message or \
        f"called at line {call})" in message, message
    assert f"'{name}'" in message, message


def two_arguments(a, c, v):
    r = _drift(a, v, 2)
    return r + np.sum(c)


def test_two_arguments_sharing_memory_stop_the_gradient():
    """The user gives one array for both: the helper's write into ``a`` changes
    ``c``, read afterwards -- checked when the gradient runs."""
    df = tc.grad(two_arguments)
    x, v = np.array([0.3, 1.2, 2.5]), np.array([0.4, -0.1, 0.8])
    check_grad(two_arguments, (x, x.copy(), v), df=df)
    with pytest.raises(TangentCkptError, match="'a' and 'c' share memory"):
        df(x, x, v)


def _writes_first_reads_second(p, q):
    p[0] = 3.0 * p[1]
    return np.sum(q * q)


def helper_given_an_array_and_its_view(x):
    b = x * 1.0
    r = _writes_first_reads_second(b, b[0:2])
    return r + np.sum(b)


def helper_given_an_array_and_a_view_of_another(x):
    b = x * 1.0
    r = _writes_first_reads_second(b, x[0:2])
    return r + np.sum(b)


def test_a_helper_given_an_array_and_a_view_of_it_is_exact():
    """It gave [2, 8, 1] against finite differences [0, 44, 1], then was stopped at
    the call; inlined by desugar, 'q' is the caller's view of 'b', which the view
    pass follows."""
    check_grad(helper_given_an_array_and_its_view, (np.array([1.0, 2.0, 3.0]),))
    check_grad(helper_given_an_array_and_a_view_of_another, (np.array([1.0, 2.0, 3.0]),))


def local_function_writes_through_an_alias(x):
    def mean_into_alias(theta):
        mean = theta
        mean[0] = 0.5 * (mean[1] + mean[2])
        theta = mean + 0.1
        return np.sum(np.sin(theta))
    th = np.tanh(x)
    r = mean_into_alias(th)  # WRITE
    return r + np.sum(th ** 2)


@pytest.mark.parametrize("run", RUNS[:2], ids=RUN_IDS[:2])
def test_a_local_functions_write_into_the_callers_array_is_refused(run):
    """A function defined inside the differentiated one is not read by the view
    lowering: its write through ``mean`` into the caller's ``th`` was dropped
    ([2, 10, 7] against [0, 110, 7] in a first form); refused at the call."""
    with pytest.raises(TransformError) as info:
        tc.grad(local_function_writes_through_an_alias, **run)(np.array([0.3, -0.2, 0.5]))
    message = str(info.value)
    assert f":{line_of(local_function_writes_through_an_alias, '# WRITE')}:" in message or \
        f":{line_of(local_function_writes_through_an_alias, 'mean[0] =')}:" in message, message
    assert "'theta'" in message and "'th'" in message, message


def _bump(u):
    u += 1.0
    return 0.0


def helper_adds_into_an_array_the_expression_reads(x):
    y = x * 1.0
    r = _bump(y) * np.sum(y)  # WRITE
    return np.sum(y ** 2) + r


def test_a_helper_adding_into_an_array_the_expression_reads_runs_before_the_read():
    """``u += 1.0`` writes into ``y`` before ``np.sum(y)`` reads it, as Python
    evaluates the product left to right.  Desugar binds the parameter (``u = y``)
    and hoists the call before the read; the lowering once refused the call inside
    the expression."""
    check_grad(helper_adds_into_an_array_the_expression_reads, [np.array([1.0, -0.5, 2.0])])


def _mean_into_alias_renamed(theta):
    mean = theta
    mean[0] = 0.5 * (mean[1] + mean[2])
    theta2 = mean + 0.1
    return np.sum(np.sin(theta2))


def renamed_as_the_refusal_advises(x):
    th = np.tanh(x)
    r = _mean_into_alias_renamed(th)
    return r + np.sum(th ** 2)


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_the_refusals_advice_gives_the_same_program_followed(run):
    """``alias_write_and_rebinding_read_by_the_caller`` is refused at the helper's
    write; a name of its own for the new array (``theta2``) gives the same numbers,
    and the write into the caller's ``th`` is followed."""
    x = np.array([0.3, -0.2, 0.5])
    assert renamed_as_the_refusal_advises(x.copy()) == \
        alias_write_and_rebinding_read_by_the_caller(x.copy())
    with pytest.raises(TransformError, match="'theta'"):
        tc.grad(alias_write_and_rebinding_read_by_the_caller)(x)
    check_grad(renamed_as_the_refusal_advises, (x,),
               df=tc.grad(renamed_as_the_refusal_advises, **run))


def rebinding_helper_given_a_new_array(x, v):
    return _drift(np.tanh(x), v, 2) + np.sum(x)


def rebinding_helper_writing_only_its_own_array(x, v):
    y = x * 1.0
    r = _own_array_writer(y, v)
    return r + np.sum(y ** 2)


def _own_array_writer(p, q):
    for i in range(2):
        p = p * 0.5 + q
        p += np.sin(q)  # into the new array made the line above
    return np.sum(p)


@pytest.mark.parametrize("fn", [rebinding_helper_given_a_new_array,
                                rebinding_helper_writing_only_its_own_array],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_a_write_that_cannot_reach_the_callers_array_is_not_refused(fn, run):
    """A new array handed over (``np.tanh(x)``), or a write made only after the
    helper surely bound its parameter anew in the same block: nothing of the
    caller's is written, whatever the caller reads later."""
    args = (np.array([0.3, 1.2, 2.5]), np.array([0.4, -0.1, 0.8]))
    check_grad(fn, args, wrt=(0, 1), df=tc.grad(fn, wrt=(0, 1), **run))


# --- a new array handed to a helper that writes into it -----------------------------
def _diffuse(U, V, n):
    for _ in range(n):
        lap = U[:-2] - 2.0 * U[1:-1] + U[2:]
        U[1:-1] += 0.1 * lap * V[1:-1]
        V[1:-1] -= 0.05 * lap
    return U, V


def fresh_copies_to_a_writing_helper(U, V):
    U, V = _diffuse(U.copy(), V.copy(), 3)
    return np.sum(U * V)


def a_possible_view_to_a_writing_helper(U, V):
    W, _ = _diffuse(np.asarray(U), V.copy(), 3)   # np.asarray(U) may be U itself
    return np.sum(W * U)


@pytest.mark.parametrize("options", RUNS, ids=RUN_IDS)
def test_a_new_array_given_to_a_writing_helper_is_the_helpers_own(options):
    """``f(U.copy(), ...)`` with ``f`` writing into its parameter: the copy is a new
    array no name of the caller holds, so the writes need no following (it was
    refused with advice to do what the call already does)."""
    rng = np.random.RandomState(4)
    U, V = rng.rand(6), rng.rand(6)
    check_grad(fresh_copies_to_a_writing_helper, (U, V), wrt=(0, 1),
               df=tc.grad(fresh_copies_to_a_writing_helper, wrt=(0, 1), **options))


def test_a_possible_view_given_to_a_writing_helper_is_followed():
    """np.asarray(U) returns U itself: the helper's writes change the caller's U,
    which it reads afterwards -- refused while the helper was inlined by the
    lowering; inlined by desugar, the view pass follows the writes into U."""
    rng = np.random.RandomState(4)
    check_grad(a_possible_view_to_a_writing_helper, (rng.rand(6), rng.rand(6)), wrt=(0, 1))


# --- a write after the parameter is rebound in the same loop body ---------------------
def _rebinds_then_writes(a, c):
    for t in range(2):
        c = c * np.cos(np.mean(a))          # c is the helper's own array from here on
        c[0] = np.tanh(np.sum(c + c[0]))
    return np.sum(c * a)


def container_items_to_a_rebinding_helper(P):
    return _rebinds_then_writes(P[0], P[1])


def caller_reads_after_a_rebinding_helper(a, c):
    return _rebinds_then_writes(a, c) + np.sum(c)


@pytest.mark.parametrize("options", RUNS, ids=RUN_IDS)
def test_a_write_after_a_rebinding_in_the_loop_body_is_the_helpers_own(options):
    """``c = c * k; c[0] = ...`` in one loop body: the write is into the new array,
    never the caller's, even for an item of a container argument (found by the
    nested-container fuzz test's long run, which was refused)."""
    rng = np.random.RandomState(7)
    a, c = rng.rand(3), rng.rand(3)
    check_grad(caller_reads_after_a_rebinding_helper, (a, c), wrt=(0, 1),
               df=tc.grad(caller_reads_after_a_rebinding_helper, wrt=(0, 1), **options))
    P = [a, c]
    got = tc.grad(container_items_to_a_rebinding_helper, **options)(P)
    want = tc.grad(_rebinds_then_writes, wrt=(0, 1))(a, c)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert np.array_equal(P[1], c) and P[1] is c
