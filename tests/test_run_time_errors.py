"""Refusals raised while a gradient runs name the user's file:line
(compiler/emit/run_time_errors.py): a subscript write whose index names an element
twice is found by the reverse sweep, taped or checkpointed."""

import inspect

import numpy as np
import pytest

import tangent_ckpt as tc
from construct_check import check_construct


def repeated_constant_index(x):
    y = x.copy()
    y[[0, 0, 1]] += x[2]
    return np.sum(y ** 2)


def repeated_index_array_in_a_loop(x, idx):
    y = x.copy()
    for _ in range(3):
        y[idx] = x[2] * y[1]
    return np.sum(y ** 2)


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True,
                                                                 "snapshots": 1}])
@pytest.mark.parametrize("fn, args, text", [
    (repeated_constant_index, (np.ones(3),), "y[[0, 0, 1]]"),
    (repeated_index_array_in_a_loop, (np.ones(3), np.array([0, 2, 0])), "y[idx] ="),
])
def test_repeated_index_refusal_names_the_users_line(fn, args, text, options):
    before = [np.copy(a) for a in args]
    with pytest.raises(tc.TangentCkptError) as caught:
        tc.grad(fn, **options)(*args)
    where = f"test_run_time_errors.py:{_line_of(fn, text)}: "
    assert where in str(caught.value)
    assert "names an element more than once" in str(caught.value)
    for b, a in zip(before, args):
        assert np.array_equal(a, b)


def test_unique_index_array_is_still_differentiated():
    x, idx = np.array([0.5, -1.0, 2.0]), np.array([2, 0])
    check_construct(repeated_index_array_in_a_loop, (x, idx), wrt=(0,), autograd=False)


# --- any exception raised while a gradient runs names the user's line ----------------
def rnn(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def straight(x, W):
    y = np.sin(x)
    z = y @ W
    return np.sum(z ** 2)


def _note_of(error):
    notes = getattr(error, "__notes__", [])
    assert len(notes) == 1, notes
    return notes[0]


@pytest.mark.parametrize("options", [{}, {"checkpoint": True}, {"checkpoint": True,
                                                                 "snapshots": 1}])
def test_a_shape_mismatch_in_a_loop_step_names_the_users_line(options):
    df = tc.grad(rnn, wrt=(1, 2), **options)
    with pytest.raises(ValueError, match="mismatch") as caught:  # still a ValueError
        df(np.ones((2, 3)), np.ones((3, 4)), np.ones(4), 5)
    note = _note_of(caught.value)
    where = f"test_run_time_errors.py:{_line_of(rnn, 'h = np.tanh')}"
    assert f"in the gradient, at {__file__}:{_line_of(rnn, 'h = np.tanh')}:" in note, note
    assert where in note and "h = np.tanh(h @ W + b)" in note
    assert "in the generated " in note and "h @ W" in note


def test_the_forward_mode_names_the_users_line_too():
    with pytest.raises(ValueError) as caught:
        tc.jvp(straight, wrt=(0,))(np.ones(3), np.ones((4, 2)), np.ones(3))
    assert f"{__file__}:{_line_of(straight, 'z = y @ W')}:" in _note_of(caught.value)
    with pytest.raises(ValueError) as caught:
        tc.hvp(rnn, wrt=(0,))(np.ones((2, 3)), np.ones((4, 4)), np.ones(4), 2,
                              np.ones((2, 3)))
    assert f"{__file__}:{_line_of(rnn, 'h = np.tanh')}:" in _note_of(caught.value)


def blackbox(x):
    return np.cumsum(x)


def broken_adjoint(g, ans, x):
    return (g[len(x)],)  # an IndexError in the user's rule


tc.register_adjoint(blackbox, broken_adjoint)


def uses_blackbox(x, y):
    z = x * y
    s = blackbox(z)
    return np.sum(s)


def test_an_error_in_an_adjoint_names_the_line_whose_adjoint_failed():
    with pytest.raises(IndexError) as caught:
        tc.grad(uses_blackbox)(np.ones(3), 2.0)
    note = _note_of(caught.value)
    assert f"{__file__}:{_line_of(uses_blackbox, 's = blackbox')} (in that line's adjoint):" \
        in note, note
    assert "s = blackbox(z)" in note


def test_the_line_table_matches_the_line_comments_of_the_generated_source():
    """Emit's line table (data) says what the '# line N' comments say (text)."""
    for df in (tc.grad(rnn, wrt=(1, 2)), tc.grad(rnn, wrt=(1, 2), checkpoint=True),
               tc.grad(straight, wrt=(0, 1))):
        compiled = df.compile()
        current = None
        lines = compiled.source.splitlines()
        for number, text in enumerate(lines, 1):
            stripped = text.strip()
            if stripped.startswith("def "):
                current = None
            for mark, adjoint in (("# line ", False), ("# adjoint of line ", True)):
                if stripped.startswith(mark):
                    current = (int(stripped[len(mark):].split(":")[0]), adjoint)
            origin = compiled.line_table.get(number)
            if origin is not None:
                assert (origin.line, origin.adjoint) == current, (number, text)
        statements = [n for n, text in enumerate(lines, 1)
                      if text.strip() and not text.strip().startswith(("#", "def "))]
        assert sum(n in compiled.line_table for n in statements) > len(statements) / 2
