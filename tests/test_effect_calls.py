"""NumPy calls made for their effect (compiler/lower/effect_calls.py):
``np.fill_diagonal`` and ``np.copyto`` differentiated as the subscript writes
they are, inside loops, taped and checkpointed; ``np.add.at`` and ``np.put``
refused with what to write instead."""

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct


def lennard_jones_steps(pos, eps, steps):
    """N-body style: the self-interaction dropped with np.fill_diagonal(r2, inf)."""
    energy = 0.0
    for _ in range(steps):
        d = pos[:, None, :] - pos[None, :, :]
        r2 = np.sum(d ** 2, axis=-1)
        np.fill_diagonal(r2, np.inf)
        inv = 1.0 / r2
        energy = energy + eps * np.sum(inv ** 6 - inv ** 3)
        pos = pos * 1.01
    return energy


def test_fill_diagonal_is_a_diagonal_write_taped_and_checkpointed():
    pos = np.random.default_rng(0).normal(size=(4, 2)) * 2.0
    check_construct(lennard_jones_steps, (pos, 0.7, 3), wrt=(0, 1), autograd=False)


def fill_with_values(x, v):
    y = np.zeros((3, 4))
    for k in range(2):
        y = y + x
        np.fill_diagonal(y, v * k)      # a wide array: min(3, 4) entries
    return np.sum(y ** 2)


def test_fill_diagonal_of_a_wide_array_writes_min_shape_entries():
    rng = np.random.default_rng(1)
    x, v = rng.normal(size=(3, 4)), rng.normal(size=3)
    check_construct(fill_with_values, (x, v), wrt=(0, 1), autograd=False)


def fill_wrapped(x):
    y = x * 1.0
    np.fill_diagonal(y, 0.0, wrap=True)
    return np.sum(y)


def test_fill_diagonal_with_wrap_is_refused_with_file_line():
    with pytest.raises(tc.UnsupportedSyntaxError, match=r"test_effect_calls.py:\d+: .*wrap=True"):
        tc.grad(fill_wrapped)(np.ones((5, 2)))


def copy_into(x, w):
    y = np.zeros_like(x)
    for _ in range(3):
        np.copyto(y, np.tanh(y * w + x))
    return np.sum(y ** 2)


def test_copyto_is_a_whole_array_write_taped_and_checkpointed():
    rng = np.random.default_rng(2)
    check_construct(copy_into, (rng.normal(size=4), rng.normal(size=4)), wrt=(0, 1),
                    autograd=False)


def add_at(x):
    y = x.copy()
    np.add.at(y, [0, 0, 2], x[1])
    return np.sum(y ** 2)


def test_add_at_is_refused_saying_what_to_write():
    with pytest.raises(tc.UnsupportedSyntaxError,
                       match=r"test_effect_calls.py:\d+: .*unbuffered.*a\[idx\[k\]\] \+= v\[k\]"):
        tc.grad(add_at)(np.ones(3))


def put(x):
    y = x.copy()
    np.put(y, [0, 2], x[1])
    return np.sum(y ** 2)


def test_put_is_refused_saying_what_to_write():
    with pytest.raises(tc.UnsupportedSyntaxError, match=r"test_effect_calls.py:\d+: .*a\[ind\] = v"):
        tc.grad(put)(np.ones(3))


def clip_in_place(x, lo):
    y = x * 2.0
    for _ in range(3):
        y = y * x
        np.clip(y, lo, 1.5, out=y)          # the common in-place clipping
    z = np.empty_like(y)
    np.multiply(y, x, out=z)
    z = np.tanh(z, out=z)
    return z ** 2


def test_out_argument_is_a_whole_array_write_taped_and_checkpointed():
    x = np.array([0.3, 0.9, -1.2, 0.5, 1.1])
    check_construct(clip_in_place, (x, -0.5), wrt=(0, 1), autograd=False)


def add_into_integers(x):
    y = np.zeros(3, dtype=int)
    np.add(x, x, out=y)
    return np.sum(y * x)


def test_out_of_a_dtype_that_cannot_hold_the_result_is_refused_as_numpy_does():
    with pytest.raises(TypeError, match="Cannot cast"):   # NumPy's own refusal
        add_into_integers(np.ones(3))
    with pytest.raises(tc.TransformError, match=r"test_effect_calls.py:\d+: out= of dtype int"):
        tc.grad(add_into_integers)(np.ones(3))


def add_into_single(x):
    y = np.zeros(3, dtype=np.float32)
    np.add(x, x, out=y)                      # same kind: NumPy rounds, so does the write
    return np.sum(y * x)


def test_out_of_the_same_kind_rounds_like_numpy():
    x = np.array([0.1, 0.2, 0.3])
    y = (x + x).astype(np.float32)                  # d/dx sum(y * x) = y + 2 x
    np.testing.assert_allclose(tc.grad(add_into_single)(x), y + 2 * x, rtol=1e-12)
