"""compiler/desugar/local_bindings.py: a name is a range counter, or surely an
array, only when every binding anywhere in the function's tree says so (a
rebinding in the body, a nested function, ``with ... as`` all count; a
comprehension's variable is the comprehension's own)."""

import textwrap

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import LocalBindings


def _bindings(source):
    fnode = gast.parse(textwrap.dedent(source)).body[0]
    return LocalBindings(fnode, {"np": np, "range": range, "reversed": reversed, "int": int,
                                 "len": len, "N": 6, "FLAG": True}.get)


def test_range_counters_are_names_bound_only_by_range_loops():
    b = _bindings("""
        def f(x, n):
            for t in range(n):
                x = x + t
            for k in reversed(range(3)):
                x = x * k
            for i in range(2):
                i = np.array([i])
            for j in x:
                pass
            ys = [t2 for t2 in range(3)]
            for t2 in range(3):
                pass
            for m in range(3):
                pass
            g = lambda m: m * 2.0               # a parameter named m: not surely an int
            return x
    """)
    assert b.range_counters() == {"t", "k", "t2"}   # (a comprehension's t2 is its own)


def test_an_array_is_a_name_every_binding_of_which_makes_one():
    b = _bindings("""
        def f(x):
            U = np.zeros((2, 3))
            U += 1.0
            V = np.zeros(3)
            def g():
                V = [1.0]
                return V
            W = np.ones(2)
            with open('f') as W:
                pass
            return U
    """)
    facts = b.facts()
    assert facts.array("U").ndim == 2
    assert facts.array("V") is None and facts.array("W") is None
    assert facts.array("x") is None          # a parameter may be anything


def test_integer_names_are_bound_only_to_integer_expressions():
    b = _bindings("""
        def f(x, n, xs):
            a = int(x * 3)
            k = len(xs) - 1
            k += 1
            m = a % n                           # n a parameter: not surely an int
            c = 0
            for t in range(3):
                c = c + t * a
            s = a * N                           # N a module-level int
            z = 2
            z = x                               # and then an array
            h = a // 2
            h /= 2                              # a float now
            f = FLAG + 1                        # a bool is no int here
            def g():
                w = 1
                return w
            return w
    """)
    assert b.integer_names() == {"a", "k", "c", "t", "s"}   # (w is g's own)
