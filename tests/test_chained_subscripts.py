"""compiler/desugar/chained_subscripts.py: a write through a chain of subscripts
of an array, ``U[i][j] = v``, is the write ``U[i, j] = v`` where every index is
proven basic; differentiated taped and checkpointed against central finite
differences.  A chain through a copy (an index array or list), or of indices
whose type is not known, stays refused with the user's line, and a refusal of
a nested write into an array names no innocent bystander."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from source_lines import line_of
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError

RUNS = [dict(), dict(checkpoint=True), dict(checkpoint=True, snapshots=2)]
RUN_IDS = ["taped", "checkpoint", "snapshots2"]


def row_recurrence(L):
    U = np.zeros((3, 4))
    U[1][0] = 1.0
    for t in range(3):
        U[1][t + 1] = U[1][t] * L
    return np.sum(U)


def string_simulation(L):
    """A wave equation stepped as p27 writes it: every read and write chained."""
    X, T = 6, 5
    U = np.zeros((X + 1, T + 2))
    for x in range(1, X):
        U[x][0] = np.sin(x * np.pi / X)
        U[x][1] = U[x][0] * np.cos(np.pi / (T + 1))
    for t in range(T):
        for x in range(1, X):
            U[x][t + 2] = 2.0 * (1.0 - L) * U[x][t + 1] + \
                L * (U[x + 1][t + 1] + U[x - 1][t + 1]) - U[x][t]
    S = 0.0
    for x in range(1, X):
        S = S + U[x][T + 1]
    return S


def augmented_and_sliced(w):
    V = np.ones((2, 3, 4))
    for k in range(2):
        V[k][1] += w[k] * V[k][0]       # V[k, 1] += ...
        V[k][2][1:3] = w[k] ** 2        # V[k, 2, 1:3] = ...
        V[1 - k][...] *= 1.5            # V[1 - k, ...] *= 1.5
    return np.sum(V * V)


def tuple_of_chained_targets(x):
    A = np.zeros((2, 2))
    A[0][1], A[1][0] = x[0] * 2.0, x[1] ** 3
    return np.sum(A * A)


def counter_named_as_a_comprehension_variable(L):
    U = np.zeros((3, 4))
    w = np.array([i * 2.0 for i in range(3)])   # this i is the comprehension's own
    for i in range(3):
        U[i][1] = w[i] * L + i
    return np.sum(U * U)


N_COLUMNS = 4


def indices_made_by_int_and_len(L):
    """The Ising lattice's ``a = int(random() * N); A[a][b] = -A[a][b]`` (FergusFettes'
    Lattice was refused): names bound only to ints, a module-level int."""
    U = np.ones((3, N_COLUMNS))
    rows = [0, 1, 2]
    for t in range(5):
        a = int(t * 1.7) % 3
        b = (a + len(rows)) % N_COLUMNS
        b += 1
        U[a][b % N_COLUMNS] = U[a][b % N_COLUMNS] * 0.5 + L * t
    return np.sum(U * U)


@pytest.mark.parametrize("options", RUNS, ids=RUN_IDS)
@pytest.mark.parametrize("fn, args", [
    (indices_made_by_int_and_len, (0.5,)),
    (row_recurrence, (0.5,)),
    (counter_named_as_a_comprehension_variable, (0.5,)),
    (string_simulation, (0.345678,)),
    (augmented_and_sliced, (np.array([0.3, -0.7]),)),
    (tuple_of_chained_targets, (np.array([0.4, 1.1]),)),
])
def test_a_chained_write_into_an_array_is_differentiated(fn, args, options):
    df = tc.grad(fn, **options)
    check_grad(fn, args, df=df)


def test_checkpointed_gradient_equals_taped():
    taped = tc.grad(string_simulation)(0.345678)
    checkpointed = tc.grad(string_simulation, checkpoint=True, snapshots=2)(0.345678)
    np.testing.assert_allclose(checkpointed, taped, rtol=1e-12, atol=0)


def test_desugar_writes_the_chain_as_one_subscript():
    text = desugared(row_recurrence)
    assert "U[1, 0] = 1.0" in text
    assert "U[1, t + 1] = U[1][t] * L" in text   # reads stay as written
    assert "U[a, b % N_COLUMNS] = U[a][b % N_COLUMNS]" in desugared(indices_made_by_int_and_len)


def through_an_index_list(L):
    U = np.ones((3, 4))
    U[[0, 1]][2] = L                    # CHAINED: writes into a copy, lost
    return np.sum(U * L)


def index_of_unknown_type(L, k):
    U = np.zeros((3, 4))
    U[1][0] = 1.0
    for t in range(3):
        U[1][k] = U[1][k] * L           # CHAINED: k may be a tuple (U[1][(0, 1)] is U[1, 0, 1])
    return np.sum(U)


def slice_then_index(L):
    U = np.zeros((3, 4))
    U[1:][0] = L                        # CHAINED: U[1:][0] is U[1], not U[1:, 0]
    return np.sum(U)


def counter_rebound_to_an_index_array(L):
    U = np.zeros((3, 4))
    for t in range(3):
        t = np.array([t])               # no longer a range counter: U[t] is a copy
        U[t][0] = L                     # CHAINED: the write is lost in NumPy
    return np.sum(U) + L


def index_an_int_or_an_array(L, flag):
    U = np.zeros((3, 4))
    if flag:
        a = int(L * 2)
    else:
        a = np.array([0])
    U[a][1] = L                         # CHAINED: an index array in one branch
    return np.sum(U)


def a_one_dimensional_element(L):
    u = np.zeros(3)
    u[1][...] = L                       # CHAINED: u[1] is a number, not a view
    return np.sum(u)


@pytest.mark.parametrize("fn, args", [
    (through_an_index_list, (0.5,)),
    (index_of_unknown_type, (0.5, 2)),
    (slice_then_index, (0.5,)),
    (counter_rebound_to_an_index_array, (0.5,)),
    (a_one_dimensional_element, (0.5,)),
    (index_an_int_or_an_array, (0.5, True)),
])
def test_a_chain_not_proven_one_write_stays_refused(fn, args):
    with pytest.raises(TangentCkptError) as raised:
        tc.grad(fn)(*args)
    message = str(raised.value)
    assert f":{line_of(fn, '# CHAINED')}:" in message
    assert "nested subscript" in message
    assert "'L'" not in message         # no innocent parameter blamed


def list_of_rows(x):
    rows = [np.zeros(2), np.zeros(2)]
    rows[1][0] = x * 2.0                # a list of arrays: the lowering's, as before
    return np.sum(rows[1]) + np.sum(rows[0])


def test_a_list_of_arrays_is_left_to_the_lowering():
    assert "rows[1][0] = x * 2.0" in desugared(list_of_rows)
    with pytest.raises(TangentCkptError, match="inside a list"):
        tc.grad(list_of_rows)(0.5)
