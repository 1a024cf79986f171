"""tests/autograd_oracle.py: the fuzzer's second oracle compares only what
autograd computes right.  It would run this program, which the first
--fuzz-long run with autograd found, and get the gradient of c wrong: v1 does
not depend on the inputs, so it is a plain array in autograd, and ``v1 += ...``
changes it under the record of ``c[0] * v1``.  The gradient of tangent_ckpt
matches finite differences; the oracle leaves such programs out."""

import pytest

from autograd_oracle import COUNTS, available, updates_in_place
from program_strategy import load_program
from test_fuzz import check_program

IN_PLACE = """\
import numpy as np


def f(a, B, c, s, M, n):
    v1 = np.tanh((np.tanh(0.5) + (0.5 + B)))
    v2 = (c[0] * v1)
    v3 = (0.5 + 0.5)
    rt = (v2 @ M)
    v1 += ((0.5 + 0.5) * np.ones((2, 3)))
    return v3 + np.sum(rt) + np.sum(B)
"""

PLAIN = IN_PLACE.replace("    v1 += ((0.5 + 0.5) * np.ones((2, 3)))\n", "")


def test_in_place_updates_are_left_out_of_the_comparison():
    with load_program(IN_PLACE) as f:
        assert updates_in_place(f)
    with load_program(PLAIN) as f:
        assert not updates_in_place(f)
    with load_program(IN_PLACE.replace("v1 += ((0.5 + 0.5) * np.ones((2, 3)))",
                                       "v1[0] = 1.0")) as f:
        assert updates_in_place(f)


ASTYPE_INT = '''import numpy as np


def f(a, B, c, s, M, n):
    k = (np.tanh(B[0]) * 2.5).astype(np.int32)
    return np.sum(np.tanh(a) * (1.0 + 0.1 * k)) + np.sum(B)
'''


def test_a_cast_autograd_takes_for_the_identity_is_checked_against_finite_differences_only():
    before = dict(COUNTS)
    check_program(ASTYPE_INT, seed=11897, n=0, wrt=(1, 0), options={})
    assert COUNTS["compared"] == before["compared"]


def test_the_program_autograd_gets_wrong_is_checked_against_finite_differences_only():
    before = dict(COUNTS)
    check_program(IN_PLACE, seed=0, n=0, wrt=(0, 2), options={})
    assert COUNTS["compared"] == before["compared"]


def test_without_the_update_the_same_program_is_compared_with_autograd():
    pytest.importorskip("autograd")
    before = COUNTS["compared"]
    check_program(PLAIN, seed=0, n=0, wrt=(0, 2), options={})
    assert COUNTS["compared"] == before + 1


# the third --fuzz-long run: autograd's np.sinc rule gives nan at 0, where the
# derivative is 0 (ours is 0, and finite differences agree)
SINC_AT_ZERO = '''import numpy as np


def f(a, B, c, s, M, n):
    for t in range(1):
        v1 = np.arctan((a + 0.5))
        B = np.tanh(((np.sinc(np.tanh((v1 - v1))) @ M) * np.ones((2, 3))))
    return np.sum(B)
'''


def test_a_gradient_autograd_cannot_make_finite_is_checked_against_finite_differences_only():
    pytest.importorskip("autograd")
    before = dict(COUNTS)
    check_program(SINC_AT_ZERO, seed=0, n=0, wrt=(0,), options={"schedule": "revolve"})
    assert COUNTS["compared"] == before["compared"]
    assert COUNTS["not finite in autograd"] == before["not finite in autograd"] + 1


ITEM_WRITES = """\
import numpy as np


def f(a, B, c, s, M, n):
    L = [np.tanh(a), 2.0 * a]
    L[1] = L[0] * s
    L[0], L[1] = L[1], L[0] * 0.5
    L += [a * s]
    d = {'p': a, 'q': c[0]}
    d['q'] = d['p'] * np.sum(B)
    return sum(np.sum(v) for v in L) + np.sum(d['q'])
"""


def test_writes_into_lists_and_dicts_the_function_builds_are_compared():
    """autograd follows Python containers: the item_writes family is checked against
    it; a write into an array (or a name once bound to one) is still left out."""
    with load_program(ITEM_WRITES) as f:
        assert not updates_in_place(f)
    with load_program(ITEM_WRITES.replace("    L += [a * s]\n",
                                          "    L += [a * s]\n    L = a * 1.0\n"
                                          "    L[0] = s\n    L = [L]\n")) as f:
        assert updates_in_place(f)
    if available():
        before = COUNTS["compared"]
        check_program(ITEM_WRITES, 4, 2, (0, 1, 3), {})
        assert COUNTS["compared"] == before + 1


HELPER_IN_PLACE = """\
import numpy as np


def _scale(p, b):
    p *= 0.5
    p += np.tanh(b * 0.5)


def _sweep(u, p, k):
    for q in range(k):
        _scale(p, u)


def f(a, B, c, s, M, n):
    p3 = np.tanh(np.sum(c, axis=0)) * 1.0
    _sweep(a * 1.0, p3, n)
    return np.sum(p3) + np.sum(B)
"""


def test_an_update_in_place_inside_a_helper_of_the_module_is_left_out():
    """autograd's ``p *= 0.5`` in a helper rebinds the helper's name only: the
    caller's array keeps its value, so autograd differentiates another program
    (the helper_writes family found it: autograd's gradient was twice ours, and
    ours matched finite differences)."""
    with load_program(HELPER_IN_PLACE) as f:
        assert updates_in_place(f)
    with load_program(HELPER_IN_PLACE.replace("    p *= 0.5\n    p += np.tanh(b * 0.5)",
                                              "    return p * 0.5")) as f:
        assert not updates_in_place(f)
