"""Real aliasing that NumPy code uses on purpose is followed, not refused (#29):
writes through the variable of a loop over a tuple of arrays (``for Z in (U, V)``),
a plain rebinding followed by a write (``mean_theta = theta``), views of the
differentiated function's arguments written in its time loop, and writes into
its arguments (directly, through a helper, in polybench-style kernels).  Each is
differentiated as NumPy runs it, taped and checkpointed, against central finite
differences and the taped gradient; the gradient works on a private copy, so the
caller's arrays are never changed (check_grad checks every call).  What cannot be
followed stays refused, naming the file and line."""

import copy
import os

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.errors import TransformError

HERE = os.path.basename(__file__)
RUNS = [dict(), dict(checkpoint=True, snapshots=2)]
RUN_IDS = ["taped", "snapshots2"]


def _followed(fn, args, wrt, run):
    """The gradient matches finite differences (and leaves the arguments alone);
    checkpointed, it equals the taped gradient."""
    got = check_grad(fn, args, wrt=wrt, df=tc.grad(fn, wrt=wrt, **run))
    if run:
        taped = tc.grad(fn, wrt=wrt)(*copy.deepcopy(args))
        for g, t in zip(got, taped):
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-14)


# --- for Z in (U, V): writes through the loop variable are writes into each array ---
def boundaries_of_two_fields(U0, V0, n):
    U = U0 * 1.0
    V = V0 * 1.0
    for t in range(n):
        U = U + 0.1 * V * V
        V = V - 0.1 * U
        for Z in (U, V):
            Z[0, :] = Z[1, :]
            Z[-1, :] = Z[-2, :]
    return np.sum(U * V)


def boundaries_of_arguments(U, V, n):
    for t in range(n):
        U[1:-1] += 0.2 * np.sin(V[1:-1])
        V[1:-1] -= 0.1 * U[1:-1] ** 2
        for Z in [U, V]:
            Z[0] = Z[1]
            Z[-1] = 0.5 * Z[-2]
    return np.sum(U ** 2) + np.sum(V)


def loop_variable_read_afterwards(x):
    U = x * 1.0
    V = x ** 2
    for Z in (U, V):
        Z[0] *= 3.0
    return np.sum(Z * U)  # Z is V after the loop


def _reflect(Z):
    Z[0] = -Z[1]


def helper_writes_each_field(x, n):
    U = np.sin(x)
    V = np.cos(x)
    for t in range(n):
        U = U * V
        for Z in (U, V):
            _reflect(Z)
    return np.sum(U * U + V)


def gray_scott_with_boundaries(U0, V0, F, n):
    """Reaction–diffusion with Neumann boundaries written on both fields."""
    U = np.zeros((U0.shape[0] + 2, U0.shape[1] + 2))
    V = np.zeros((V0.shape[0] + 2, V0.shape[1] + 2))
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    u += U0
    v += V0
    for t in range(n):
        Lu = U[:-2, 1:-1] + U[2:, 1:-1] + U[1:-1, :-2] + U[1:-1, 2:] - 4.0 * u
        Lv = V[:-2, 1:-1] + V[2:, 1:-1] + V[1:-1, :-2] + V[1:-1, 2:] - 4.0 * v
        uvv = u * v * v
        u += 0.16 * Lu - uvv + F * (1.0 - u)
        v += 0.08 * Lv + uvv - (F + 0.06) * v
        for Z in (U, V):
            Z[0, :] = Z[1, :]
            Z[-1, :] = Z[-2, :]
            Z[:, 0] = Z[:, 1]
            Z[:, -1] = Z[:, -2]
    return np.sum(U ** 2) + np.sum(U * V)


_rng = np.random.default_rng(29)
TUPLE_LOOPS = [
    (boundaries_of_two_fields, (_rng.random((4, 3)), _rng.random((4, 3)), 3), (0, 1)),
    (boundaries_of_arguments, (_rng.random(5), _rng.random(5), 3), (0, 1)),
    (loop_variable_read_afterwards, (_rng.random(4),), (0,)),
    (helper_writes_each_field, (_rng.random(4), 3), (0,)),
    (gray_scott_with_boundaries, (1.0 - 0.2 * _rng.random((5, 5)), 0.25 * _rng.random((5, 5)),
                                  0.04, 4), (0, 1, 2)),
]


@pytest.mark.parametrize("fn, args, wrt", TUPLE_LOOPS, ids=[c[0].__name__ for c in TUPLE_LOOPS])
@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_writes_through_a_tuple_loop_variable_reach_each_array(fn, args, wrt, run):
    _followed(fn, args, wrt, run)


def test_the_tuple_loop_is_unrolled_with_each_arrays_own_name():
    df = tc.grad(boundaries_of_two_fields, wrt=(0, 1))
    df(*TUPLE_LOOPS[0][1])
    assert "U[0, :] = " in df.source and "V[-1, :] = " in df.source, df.source


def loop_variable_rebound(x):
    U = x * 1.0
    V = x * 2.0
    for Z in (U, V):
        Z[0] = 1.0  # WRITE
        Z = Z * 2.0
    return np.sum(U * V)


def test_a_tuple_loop_that_rebinds_its_variable_stays_refused():
    """``Z = Z * 2.0`` in the body: ``Z`` is not always the array any more; the
    loop is left alone and the fence refuses the write, naming the line."""
    with pytest.raises(TransformError) as info:
        tc.grad(loop_variable_rebound)(np.array([0.3, 0.5]))
    message = str(info.value)
    assert f"{HERE}:{line_of(loop_variable_rebound, '# WRITE')}:" in message, message
    assert "'Z'" in message and "'U'" in message, message
    assert "a copy would drop the write into 'U'" in message, message  # advice keeps meaning


# --- b = a: a plain rebinding followed by a write changes both names -----------------
def alias_then_write(x):
    a = x * 1.0
    b = a
    b[0] = np.sin(a[1]) * a[2]
    return np.sum(a ** 2) + np.sum(b)


def mean_of_neighbours(theta, n):
    """The active-matter form: ``mean_theta = theta`` is meant to change theta."""
    for t in range(n):
        mean_theta = theta
        for b in range(theta.shape[0]):
            mean_theta[b] = np.arctan2(np.sum(np.sin(theta)), np.sum(np.cos(theta)) + b)
        theta = mean_theta + 0.1 * np.cos(theta)
    return np.sum(theta ** 2)


ALIASES = [
    (alias_then_write, (np.array([0.2, 0.7, -0.4]),), (0,)),
    (mean_of_neighbours, (np.array([0.3, 1.2, -0.5]), 3), (0,)),
]


@pytest.mark.parametrize("fn, args, wrt", ALIASES, ids=[c[0].__name__ for c in ALIASES])
@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_a_write_through_a_plain_alias_changes_both_names(fn, args, wrt, run):
    _followed(fn, args, wrt, run)


# --- views of arguments and writes into arguments, on the gradient's private copy ---
def views_of_arguments_in_the_time_loop(U, V, n):
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
    for t in range(n):
        u += 0.1 * v * U[2:, 1:-1]
        v -= 0.1 * u * u
    return np.sum(U * V)


def boundary_written_into_an_argument(H, n):
    for t in range(n):
        H[:, 0] = H[:, 1]
        H[:, -1] = H[:, -2]
        H[1:-1, 1:-1] -= 0.1 * (H[2:, 1:-1] - H[:-2, 1:-1]) * H[1:-1, 1:-1]
    return np.sum(H ** 2)


def lu_in_place(A):
    """polybench's lu kernel: Doolittle elimination written into A."""
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]
    return np.sum(A * A)


def _add_source(A, s):
    A += s * A ** 2


def helper_adds_into_its_parameter(A, s, n):
    for t in range(n):
        _add_source(A, s)
    return np.sum(A)


def _kernel(A, B, steps):
    for t in range(steps):
        B[1:-1] = 0.33 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33 * (B[:-2] + B[1:-1] + B[2:])


def kernel_writes_both_arguments(A, B):
    _kernel(A, B, 3)
    return np.sum(A ** 2) + np.sum(B ** 3)


ARGUMENT_WRITES = [
    (views_of_arguments_in_the_time_loop, (_rng.random((4, 4)), _rng.random((4, 4)), 3), (0, 1)),
    (boundary_written_into_an_argument, (1.0 + 0.1 * _rng.random((4, 5)), 3), (0,)),
    (lu_in_place, (np.eye(3) * 3.0 + _rng.random((3, 3)),), (0,)),
    (helper_adds_into_its_parameter, (0.5 * _rng.random(4), 0.3, 3), (0, 1)),
    (kernel_writes_both_arguments, (_rng.random(6), _rng.random(6)), (0, 1)),
]


@pytest.mark.parametrize("fn, args, wrt", ARGUMENT_WRITES,
                         ids=[c[0].__name__ for c in ARGUMENT_WRITES])
@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_writes_into_arguments_are_differentiated_on_a_private_copy(fn, args, wrt, run):
    _followed(fn, args, wrt, run)


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_the_callers_arrays_are_unchanged_by_the_gradient_call(run):
    """The function itself changes its arguments (NumPy's side effect); the
    gradient call does not reproduce it, whatever the schedule."""
    U, V = _rng.random((4, 4)), _rng.random((4, 4))
    kept = U.copy(), V.copy()
    tc.grad(views_of_arguments_in_the_time_loop, wrt=(0, 1), **run)(U, V, 3)
    np.testing.assert_array_equal(U, kept[0])
    np.testing.assert_array_equal(V, kept[1])
    views_of_arguments_in_the_time_loop(U, V, 3)
    assert not np.array_equal(U, kept[0])


def _two(a, b):
    a[0] = 2.0 * b[1]
    b[1] = 3.0 * a[0]


def one_array_as_two_parameters(x):
    U = x * 1.0
    _two(U, U)  # WRITE
    return np.sum(U ** 2)


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_one_array_passed_as_two_written_parameters_is_followed(run):
    """``_two(U, U)``: in NumPy the write into ``a`` changes ``b``; the lowering's
    inlined body kept them apart (a wrong gradient), then it was refused; inlined
    by desugar, both parameters are ``U`` itself."""
    check_grad(one_array_as_two_parameters, (np.array([0.3, 0.5, 0.7]),),
               df=tc.grad(one_array_as_two_parameters, **run))


# --- the Kalman-filter form: a class whose methods rebind self.X and self.P ---------
class _KalmanFilter:
    def __init__(self, F, Q, H, X, P, R):
        self.F = np.array(F)
        self.Ft = np.transpose(F)
        self.Q = np.array(Q)
        self.H = np.array(H)
        self.Ht = np.transpose(H)
        self.X = np.array(X)
        self.P = np.array(P)
        self.R = np.array(R)

    def predict(self):
        self.X = self.F.dot(self.X)
        self.P = self.F.dot(self.P).dot(self.Ft) + self.Q

    def update(self, z):
        S = self.H.dot(self.P).dot(self.Ht) + self.R
        K = self.P.dot(self.Ht).dot(np.linalg.inv(S))
        self.X = self.X + K.dot(z - self.H.dot(self.X))
        self.P = self.P - K.dot(self.H).dot(self.P)


_F = np.array([[1.0, 0.1], [0.0, 1.0]])
_H = np.array([[1.0, 0.0]])
_ZS = np.array([[0.1], [0.25], [0.2], [0.4]])


def kalman_filter(Q, R, X0):
    kf = _KalmanFilter(_F, Q, _H, X0, np.eye(2), R)
    for z in _ZS:
        kf.predict()
        kf.update(z)
    return np.sum(kf.X ** 2) + np.trace(kf.P)


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_the_kalman_filter_class_is_differentiated(run):
    _followed(kalman_filter, (0.01 * np.eye(2), np.array([[0.5]]), np.array([0.0, 1.0])),
              (0, 1, 2), run)


# --- when a group of views stays exact: the root rebound or kept after its last use ---
def alias_dead_before_the_root_is_rebound(a, B, s, n):
    for k in range(2):
        al = B
        al[0] = np.tanh(al[-1] * s + B[0])
    total = np.sum(B ** 2)
    for t in range(n):
        B = np.tanh(B * s + a[1])
        B[0] = np.tanh(B[1] * total)
    return total + np.sum(B)


def root_kept_in_containers_after_its_last_write(a, B, s):
    w = B[0]
    w[0] = np.tanh(w[-1] * s)
    pairs = [(a, s), (B[0], s), (np.tanh(a), s)]
    d = {"v": B}
    v = 0.0
    for p, q in pairs:
        v = v + np.sum(np.tanh(p * q))
    return v + np.sum(d["v"][1]) + np.sum(np.ravel(B) * a[0])


_B = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
GROUPS = [
    (alias_dead_before_the_root_is_rebound, (np.array([0.3, 0.2, 0.1]), _B, 0.4, 3), (0, 1, 2)),
    (root_kept_in_containers_after_its_last_write, (np.array([0.3, 0.2, 0.1]), _B, 0.4),
     (0, 1, 2)),
]


@pytest.mark.parametrize("fn, args, wrt", GROUPS, ids=[c[0].__name__ for c in GROUPS])
@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_views_no_longer_used_do_not_stop_a_group_being_followed(fn, args, wrt, run):
    _followed(fn, args, wrt, run)


def alias_still_used_after_the_root_is_rebound(B, s, n):
    al = B
    for t in range(n):
        al[0] = np.tanh(al[-1] * s)  # WRITE
        B = B * 0.5
    return np.sum(B) + np.sum(al)


def root_kept_in_a_list_before_a_write(B, s):
    keep = [B]
    w = B[1:]
    w *= s  # WRITE
    return np.sum(keep[0]) + np.sum(B)


@pytest.mark.parametrize("fn, args", [
    (alias_still_used_after_the_root_is_rebound, (_B, 0.4, 3)),
    (root_kept_in_a_list_before_a_write, (np.array([0.3, 0.2, 0.1]), 0.4)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_views_used_across_a_rebinding_or_a_kept_reference_stay_refused(fn, args):
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=(0, 1))(*args)
    assert f"{HERE}:{line_of(fn, '# WRITE')}:" in str(info.value), str(info.value)


# --- fields of unknown type: followed as arrays, checked to be arrays when the gradient starts
def _laplacian(Z):
    return Z[:-2, 1:-1] + Z[1:-1, :-2] - 4 * Z[1:-1, 1:-1] + Z[1:-1, 2:] + Z[2:, 1:-1]


def gray_scott_on_argument_fields(U, V, F, n):
    """Rougier's form: views of the caller's fields, boundaries written on both."""
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]  # VIEW
    for i in range(n):
        uvv = u * v * v
        u += 0.1 * (0.16 * _laplacian(U) - uvv + F * (1 - u))
        v += 0.1 * (0.08 * _laplacian(V) + uvv - (F + 0.06) * v)
        for Z in (U, V):
            Z[0, :] = Z[1, :]
            Z[-1, :] = Z[-2, :]
    return np.sum(V ** 2)


def gray_scott_on_copied_fields(U0, V0, F, n):
    U = U0.copy(); V = V0.copy()
    u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]  # VIEW
    for i in range(n):
        uvv = u * v * v
        u += 0.1 * (0.16 * _laplacian(U) - uvv + F * (1 - u))
        v += 0.1 * (0.08 * _laplacian(V) + uvv - (F + 0.06) * v)
        for Z in (U, V):
            Z[0, :] = Z[1, :]
            Z[-1, :] = Z[-2, :]
            Z[:, 0] = Z[:, 1]
    return np.sum(V ** 2) + np.sum(U * V)


def rows_kept_of_an_argument(U, s, n):
    """Means something else for a list of rows: ``u`` is then a new list, and
    ``U[0] = U[1]`` makes two items one object."""
    u = U[1:3]  # VIEW
    for t in range(n):
        u[0] = u[0] * s
        U[0] = U[1]
    return np.sum(U[0] * U[1]) + np.sum(U[2])


def field_copied_on_either_branch(U0, s, k):
    if k > 0:
        U = U0.copy()
    else:
        U = U0.copy()
        U[2] = 0.5
    u = U[1:-1]  # VIEW
    for t in range(3):
        u *= s
        U[0] = U[1]
    return np.sum(U ** 2)


_FIELDS = (1.0 - 0.2 * _rng.random((6, 6)), 0.25 * _rng.random((6, 6)))
UNKNOWN_FIELDS = [
    (gray_scott_on_argument_fields, (*_FIELDS, 0.04, 3), (0, 1, 2)),
    (gray_scott_on_copied_fields, (*_FIELDS, 0.04, 3), (0, 1, 2)),
    (rows_kept_of_an_argument, (_rng.random((4, 3)), 0.6, 3), (0, 1)),
    (field_copied_on_either_branch, (_rng.random(5), 0.8, -1), (0, 1)),
]


@pytest.mark.parametrize("fn, args, wrt", UNKNOWN_FIELDS,
                         ids=[c[0].__name__ for c in UNKNOWN_FIELDS])
@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_views_of_a_field_of_unknown_type_are_followed_as_an_array(fn, args, wrt, run):
    """Once ``U[0, :] = U[1, :]`` copies a row (``U`` an array), the group of
    ``U``'s views is followed; check_grad also checks that the caller's fields
    are unchanged."""
    _followed(fn, args, wrt, run)


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_the_callers_fields_are_unchanged_by_the_gray_scott_gradient(run):
    U, V = (f.copy() for f in _FIELDS)
    tc.grad(gray_scott_on_argument_fields, wrt=(0, 1, 2), **run)(U, V, 0.04, 3)
    np.testing.assert_array_equal(U, _FIELDS[0])
    np.testing.assert_array_equal(V, _FIELDS[1])


def test_the_field_is_checked_once_when_the_gradient_starts():
    df = tc.grad(gray_scott_on_copied_fields, wrt=(2,))
    df(*_FIELDS, 0.04, 3)
    checks = [line.strip() for line in df.source.splitlines() if "rt.require_array" in line]
    assert len(checks) == 2 and "(U0, name='U0'" in checks[0] and "V0" in checks[1], df.source
    assert df.source.index("rt.require_array") < df.source.index("for i in range(n)")


@pytest.mark.parametrize("fn, args, name", [
    (gray_scott_on_argument_fields, (_FIELDS[0].tolist(), _FIELDS[1], 0.04, 3), "U"),
    (gray_scott_on_copied_fields, (_FIELDS[0], [list(r) for r in _FIELDS[1]], 0.04, 3), "V0"),
    (rows_kept_of_an_argument, ([r.copy() for r in _rng.random((4, 3))], 0.6, 3), "U"),
], ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_a_list_given_for_a_field_followed_as_an_array_stops_the_gradient(fn, args, name, run):
    """The gradient is compiled for an array there; a list would make the same
    code another program (for ``rows_kept_of_an_argument`` it runs, with another
    value): the gradient stops, naming the parameter and the view's line."""
    with pytest.raises(TransformError) as info:
        tc.grad(fn, wrt=(len(args) - 2,), **run)(*args)
    message = str(info.value)
    assert f"{HERE}:{line_of(fn, '# VIEW')}:" in message, message
    assert f"'{name}' is given a list, not a NumPy array" in message, message


def test_the_tangent_of_gray_scott_on_argument_fields_matches_finite_differences():
    """Forward mode goes through the same view lowering and the same check."""
    U, V = (f.copy() for f in _FIELDS)
    _, tangent = tc.jvp(gray_scott_on_argument_fields, wrt=2)(U, V, 0.04, 3, 1.0)
    eps = 1e-6
    hi = gray_scott_on_argument_fields(U.copy(), V.copy(), 0.04 + eps, 3)
    lo = gray_scott_on_argument_fields(U.copy(), V.copy(), 0.04 - eps, 3)
    np.testing.assert_allclose(tangent, (hi - lo) / (2 * eps), rtol=1e-6)
    np.testing.assert_array_equal(U, _FIELDS[0])
