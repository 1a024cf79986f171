"""lower/expressions.py: ``[x] * n`` with a run-time ``n`` is a list the lowering
builds at run time (its rows); beside a list or tuple in ``+`` Python
concatenates, which NumPy's ``+`` of the rows does not: refused at its line
(the value was computed as an array sum: a silent wrong value and gradient)."""

import numpy as np
import pytest

import tangent_ckpt as tc
from source_lines import line_of
from tangent_ckpt.errors import UnsupportedSyntaxError

X = np.array([0.3, -0.5])


def display_and_repeated_rows(x, n):
    ys = [x * 2.0] + [x] * n        # CONCATENATED
    return np.sum(ys[0])


def shape_of_repeated_tuples(x):
    k = x.ndim
    return np.sum(np.ones((2,) + (3,) * k)) * np.sum(x)   # CONCATENATED


@pytest.mark.parametrize("f, args", [(display_and_repeated_rows, (X, 3)),
                                     (shape_of_repeated_tuples, (X,))],
                         ids=["list", "tuple"])
def test_a_display_beside_repeated_rows_is_refused_at_its_line(f, args):
    with pytest.raises(UnsupportedSyntaxError) as info:
        tc.value_and_grad(f)(*args)
    message = str(info.value)
    assert f"test_expressions.py:{line_of(f, '# CONCATENATED')}:" in message, message
    assert "on a list built at run time" in message, message
