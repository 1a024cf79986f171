"""desugar/attribute_calls.py: ``getattr(obj, "h")`` and ``setattr(obj, "h", v)``
with a constant name are the attribute read and store they spell, so the passes
that follow attributes see them; anything else is left a call."""

import numpy as np
import pytest

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.errors import TangentCkptError


class _Cell:
    def __init__(self):
        self.h = np.array([1.0, 2.0])
        self.W = np.array([[0.5, 0.1], [-0.2, 0.4]])


CELL = _Cell()
CELLS = [CELL]
X = np.array([0.3, -0.2])


def read_by_getattr(x):
    return np.sum(getattr(x, "T") * x)


def stored_by_setattr(x):
    setattr(CELL, "h", x * 3.0)
    return np.sum(CELL.h * x)


def _scaled(cell, x):
    return getattr(cell, "W") @ x


def made_and_read_by_getattr(x):
    cell = _Cell()
    setattr(cell, "h", np.tanh(x))
    return np.sum(getattr(cell, "h") * _scaled(cell, x))


def test_getattr_and_setattr_with_a_constant_name_are_the_attribute():
    assert desugared(stored_by_setattr).splitlines()[1:] == [
        "    CELL_h = x * 3.0", "    return np.sum(CELL_h * x)"]
    assert desugared(read_by_getattr).splitlines()[1:] == ["    return np.sum(x.T * x)"]


@pytest.mark.parametrize("f", [read_by_getattr, stored_by_setattr, made_and_read_by_getattr])
@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}])
def test_gradients_through_getattr_and_setattr_match_finite_differences(f, options):
    before = CELL.h.copy()
    tc.grad(f, **options)(X)
    np.testing.assert_array_equal(CELL.h, before)  # the gradient never changes CELL
    check_grad(f, (X,), df=tc.grad(f, **options))  # (f itself does)
    CELL.h = before


def stored_then_read_by_getattr_through_a_list(x):
    CELL.h = x * 3.0
    return np.sum(getattr(CELLS[0], "h") * x)  # OTHER PATH


def test_getattr_through_another_path_of_a_stored_object_is_refused():
    """``getattr(CELLS[0], "h")`` was a call of a builtin read as the object's old
    ``h``: gradient [1, 1] where finite differences give 6 x.  Now the read is an
    attribute, refused as reached by another path than the store's."""
    import inspect
    lines, first = inspect.getsourcelines(stored_then_read_by_getattr_through_a_list)
    line = first + next(k for k, text in enumerate(lines) if "# OTHER PATH" in text)
    with pytest.raises(TangentCkptError, match="may be an object whose 'h'") as info:
        tc.grad(stored_then_read_by_getattr_through_a_list)(X)
    assert f"test_attribute_calls.py:{line}:" in str(info.value)


def with_a_default(x):
    return np.sum(getattr(CELL, "missing", 2.0) * x)


def with_a_computed_name(x, name="h"):
    return np.sum(getattr(CELL, name) * x)


def shadowed(x):
    getattr = lambda obj, name: obj  # noqa: E731
    return np.sum(getattr(x, "T") * x)


def mangled_name(x):
    return np.sum(getattr(CELL, "__doc_h", 1.0) * x)


@pytest.mark.parametrize("f", [with_a_default, with_a_computed_name, shadowed, mangled_name])
def test_other_getattr_calls_stay_calls(f):
    assert "getattr" in desugared(f) or f is shadowed
    if f is not shadowed:
        check_grad(f, (X,))


def read_by_a_named_constant(x):
    key = "h"
    cell = _Cell()
    setattr(cell, key, x * 2.0)
    return np.sum(getattr(cell, key) * x) + getattr(x, "shape")[0]


def read_in_a_loop_by_a_named_constant(x):
    name = "T"
    s = np.sum(x)
    for _ in range(2):
        s = s + np.sum(getattr(x, name) * x)
    return s


@pytest.mark.parametrize("options", [{}, {"checkpoint": True, "snapshots": 2}],
                         ids=["taped", "checkpointed"])
@pytest.mark.parametrize("f", [read_by_a_named_constant, read_in_a_loop_by_a_named_constant])
def test_a_name_bound_once_to_a_constant_is_that_attribute(f, options):
    """``key = "h"; getattr(cell, key)`` was refused ("no adjoint rule for
    builtins.getattr"): the name is the constant in every statement after it."""
    assert "getattr" not in desugared(f) and "setattr" not in desugared(f)
    check_grad(f, (X,), df=tc.grad(f, **options))


def rebound_name(x):
    key = "T"
    if np.sum(x) > 0.0:
        key = "real"
    return np.sum(getattr(x, key) * x)


def read_before_bound(x):
    def h():
        return getattr(x, key)
    key = "T"
    return np.sum(h() * x)


@pytest.mark.parametrize("f", [rebound_name, read_before_bound])
def test_a_name_bound_twice_or_after_its_read_stays_a_call(f):
    assert "getattr" in desugared(f)
