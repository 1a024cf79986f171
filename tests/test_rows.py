"""Lists built at run time, held as their rows (runtime/rows.py): ``append_row``
is functional (no version a caller holds ever changes) and n appends cost O(n)
(the rows share one growing buffer); ``append_row_adjoint_rows`` hands the
reverse sweep a buffer of its own, shortened without copies."""

import gc
import threading

import numpy as np
import pytest

from tangent_ckpt.runtime import rows as rt_rows
from tangent_ckpt.errors import TangentCkptError
from tangent_ckpt.runtime.rows import (
    append_row, append_row_adjoint_item, append_row_adjoint_rows, empty_rows, rows_holding,
    rows_holding_adjoint,
)


def built(items):
    hs = empty_rows()
    versions = []
    for item in items:
        hs = append_row(hs, item)
        versions.append(hs)
    return versions


def test_appends_share_one_buffer_and_grow_it_by_doubling():
    versions = built(np.arange(1000.0))
    assert np.array_equal(versions[-1], np.arange(1000.0))
    buffers = {id(v.base) for v in versions}
    assert len(buffers) <= 1 + int(np.log2(1000))   # copies only when the buffer is full
    assert np.shares_memory(versions[700], versions[-1])   # one buffer from row 639 on


@pytest.mark.parametrize("row_shape", [(), (3,), (2, 2)])
def test_no_version_changes_when_an_older_one_is_appended_to(row_shape):
    rng = np.random.default_rng(0)
    items = [rng.standard_normal(row_shape) for _ in range(6)]
    versions = built(items)
    expected = [np.array(v) for v in versions]
    other = rng.standard_normal(row_shape)
    branched = append_row(versions[2], other)       # the next row of versions[3] differs
    assert np.array_equal(branched[:3], expected[2]) and np.array_equal(branched[3], other)
    for v, e in zip(versions, expected):
        assert np.array_equal(v, e)
    assert not np.shares_memory(branched, versions[-1])


def test_appending_again_what_a_longer_version_holds_reuses_the_row():
    """A checkpointed step run again from a snapshot appends the same bits."""
    versions = built([0.5, 1.5, 2.5, 3.5])
    again = append_row(versions[1], 2.5)
    assert np.shares_memory(again, versions[-1]) and np.array_equal(again, [0.5, 1.5, 2.5])
    negative_zero = append_row(built([0.0, 0.0])[0], -0.0)   # same value, other bits
    assert np.signbit(negative_zero[1])


def test_views_that_are_not_the_front_of_the_buffer_are_copied():
    versions = built([1.0, 2.0, 3.0])
    tail = append_row(versions[-1][1:], 9.0)
    assert np.array_equal(tail, [2.0, 3.0, 9.0])
    assert np.array_equal(versions[-1], [1.0, 2.0, 3.0])
    same_length = append_row(versions[-1][:], 4.0)   # another view of the longest one
    assert np.array_equal(same_length, [1.0, 2.0, 3.0, 4.0])


def test_a_wider_item_dtype_makes_a_new_buffer():
    versions = built([1.0, 2.0])
    mixed = append_row(versions[-1], 1j)
    assert mixed.dtype == np.complex128 and np.array_equal(mixed, [1.0, 2.0, 1j])
    assert versions[-1].dtype == np.float64


def test_an_item_of_another_shape_is_numpys_error():
    versions = built([np.ones(2)])
    with pytest.raises(ValueError):
        append_row(versions[-1], np.ones(3))


def test_the_rows_adjoint_is_a_private_buffer_shortened_in_place():
    g = np.arange(5.0)
    first = append_row_adjoint_rows(g)
    assert np.array_equal(first, [0.0, 1.0, 2.0, 3.0]) and not np.shares_memory(first, g)
    second = append_row_adjoint_rows(first)
    assert np.shares_memory(second, first) and len(second) == 3
    second += 10.0      # what rt.accumulate_at does: g and the item's adjoint keep their values
    assert np.array_equal(g, np.arange(5.0))
    assert append_row_adjoint_item(first) == 3.0


def test_appends_in_threads_do_not_mix():
    results = {}

    def build(k):
        results[k] = built([float(k)] * 200)[-1]

    threads = [threading.Thread(target=build, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert np.array_equal(results[k], np.full(200, float(k)))


def test_buffers_are_forgotten_when_freed():
    gc.collect()
    before = len(rt_rows._filled)
    versions = built([1.0] * 20)
    assert len(rt_rows._filled) > before
    del versions
    gc.collect()
    assert len(rt_rows._filled) == before


def complex_trajectory(w, n):
    """A split-step-like loop keeping its complex states (physicsHackathon's
    Schroedinger stepper): the list's rule was written for real rows only."""
    psi = np.exp(-w * np.linspace(-1.0, 1.0, 5) ** 2) + 0.0j
    states = []
    for t in range(n):
        psi = psi + 0.1j * np.roll(psi, 1) - 0.05 * w * psi
        states.append(psi)
    return np.sum(np.abs(np.array(states)) ** 2)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
def test_complex_rows_appended_in_a_loop_are_differentiated(options):
    import tangent_ckpt as tc
    from gradcheck import numeric_grad
    got = tc.grad(complex_trajectory, **options)(0.7, 4)
    np.testing.assert_allclose(got, numeric_grad(complex_trajectory, (0.7, 4))[0],
                               rtol=1e-6, atol=1e-9)


def test_rows_holding_keeps_rows_whose_dtype_holds_the_item():
    rows = np.zeros((3, 2))
    assert rows_holding(rows, np.ones(2, dtype=int)) is rows
    assert rows_holding(rows, np.float32(1.0) * np.ones(2, np.float32)) is rows


@pytest.mark.parametrize("rows, item, dtype", [
    (np.zeros(3, dtype=int), 0.5, np.float64),
    (np.zeros(3, dtype=bool), 2, np.int64),
    (np.zeros((3, 2), np.float32), np.ones(2), np.float64),
    (np.zeros(3), 1j, np.complex128),
])
def test_rows_holding_widens_the_rows_to_hold_the_item_unchanged(rows, item, dtype):
    widened = rows_holding(rows, item)
    assert widened.dtype == dtype and widened.shape == rows.shape
    assert np.array_equal(widened, rows) and rows.dtype != dtype  # rows left as they were
    widened[1] = item
    assert widened[1].tolist() == np.asarray(item).tolist()


@pytest.mark.parametrize("rows, item", [(np.zeros(3), np.ones(2)),
                                        (np.zeros((3, 2)), 1.0),
                                        (np.zeros((3, 2)), np.ones(3))])
def test_rows_holding_refuses_an_item_of_another_shape_than_a_row(rows, item):
    with pytest.raises(TangentCkptError, match="needs items of one shape"):
        rows_holding(rows, item)


def test_rows_holding_adjoint_is_real_for_real_rows():
    g = np.array([1.0 + 2.0j, 3.0 - 1.0j])
    assert np.array_equal(rows_holding_adjoint(g, np.zeros(2)), [1.0, 3.0])
    assert rows_holding_adjoint(g, np.zeros(2, complex)) is g
    real = np.ones(2)
    assert rows_holding_adjoint(real, np.zeros(2, dtype=int)) is real
