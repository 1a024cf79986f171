"""Which writes of a function's body may reach its caller's arrays
(compiler/desugar/parameter_writes.py): those made before the name is surely
bound anew in the block, or in an enclosing block earlier."""

import gast
import pytest

from tangent_ckpt.compiler.desugar.parameter_writes import ParameterWrites
from tangent_ckpt.compiler.node_facts import ViewMarks


def _writes(source):
    fnode = gast.parse(source).body[0]
    rebound = set()
    found = ParameterWrites(fnode, ViewMarks(), rebound).writes
    return sorted(set(found)), rebound


@pytest.mark.parametrize("source, written", [
    ("def f(p):\n    p += 1.0\n    p = p * 2.0\n", [("p", "aug-call")]),
    ("def f(p):\n    p = p * 2.0\n    p += 1.0\n    p[0] = 3.0\n", []),
    ("def f(p, q):\n    for i in range(2):\n        p = p * 0.5 + q\n        p += q\n", []),
    ("def f(p, q):\n    for i in range(2):\n        p += q\n        p = p * 0.5\n",
     [("p", "aug-call")]),
    ("def f(p, c):\n    if c:\n        p = p * 2.0\n    p[0] = 1.0\n", [("p", "item-call")]),
    ("def f(p):\n    def g():\n        p[0] = 1.0\n    p = p * 2.0\n    g()\n",
     [("p", "item-call")]),
    ("def f(p, q):\n    q[1:] = p[:-1]\n    return q\n", [("q", "item-call")]),
], ids=["before", "after", "loop_after", "loop_before", "branch", "nested_function",
        "item"])
def test_a_write_reaches_the_callers_array_until_the_name_is_surely_bound_anew(source,
                                                                               written):
    assert _writes(source)[0] == written


def test_every_name_bound_anew_anywhere_is_rebound():
    _, rebound = _writes("def f(p, q, c):\n    if c:\n        q = q * 2.0\n"
                         "    for r in range(2):\n        p = p + r\n    return p\n")
    assert {"p", "q", "r"} <= rebound
