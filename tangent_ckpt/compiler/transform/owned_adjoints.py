"""What the reverse transform may do in place to a private adjoint.

A private ("owned") adjoint is a buffer no other name refers to: a loop's
accumulator made private before the loop (``rt.private_adjoint``), or the
adjoint of a carried array that a checkpointed loop's steps only write into
through subscripts.  Code may add to it and zero parts of it in place.  Two
forms need more than privacy, and are decided here from the function as a whole:

- ``bk[1:-1] += g`` in place of ``bk = rt.accumulate_at(bk, k, np.s_[1:-1], g)``
  needs ``bk`` to be a plain array (never an ``rt.ProductSum``, never a list or
  a number) and an index that names each element at most once (``+=`` through
  an integer array with a repeated index adds once; ``rt.accumulate_at`` uses
  ``np.add.at``) and takes at least one axis (an integer, a slice or a loop
  counter: ``k`` has one, so it is no NumPy scalar).  ``bk`` is an array when
  ``k`` is one (:func:`array_facts`: results of ufuncs and of the functions
  whose row in the rule registry says ``returns="array"``, ``np.copy``,
  ``np.zeros``..., and parameters passed as arrays for this call; not the lists
  of ``np.array_split``).
- ``bW -= x`` needs ``bW`` not to become an ``rt.ProductSum`` at a later line
  of the same loop body (it would be one at this line in the next iteration).
  Only the adjoint of the right operand of ``@`` is ever gathered so; it is
  known before any code is made.
"""

import ast
from dataclasses import dataclass, field

import numpy as np

from tangent_ckpt import runtime
from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir


@dataclass(frozen=True)
class ArrayFacts:
    """Facts about one function's names that hold for the whole function."""
    arrays: frozenset = field(default_factory=frozenset)  # always bound to a NumPy array
    gathered: frozenset = field(default_factory=frozenset)  # read as the x2 of a matmul
    counters: frozenset = field(default_factory=frozenset)  # loop counters (ints)


def array_facts(function):
    """The :class:`ArrayFacts` of ``function`` (an ``ir.Function``)."""
    rebound = {s.target for s in ir.walk(function.body) if isinstance(s, ir.Assign)}
    written = {s.target for s in ir.walk(function.body) if isinstance(s, ir.SetItem)}
    counters = {s.target for s in ir.walk(function.body) if isinstance(s, ir.For)}
    made, other = set(), set(function.params) | counters
    gathered = set()
    for stmt in ir.walk(function.body):
        if isinstance(stmt, ir.Assign):
            (made if _makes_an_array(stmt.expr) else other).add(stmt.target)
            if isinstance(stmt.expr, ir.Prim):
                gathered.update(_matmul_right_operands(stmt.expr))
    return ArrayFacts(arrays=frozenset((made - other) | function.array_params),
                      gathered=frozenset(gathered - written),
                      counters=frozenset(counters - rebound - set(function.params)))


def _makes_an_array(expr):
    if not isinstance(expr, ir.Prim) or "out" in expr.kwargs:
        return False
    if isinstance(expr.fn, np.ufunc):
        return True
    facts = registry.facts(expr.fn)   # a function without a row may return anything
    return facts is not None and facts.returns == "array"


def _matmul_right_operands(prim):
    rule = registry.lookup(prim.fn)
    if rule is None or rule.vjp is not None:
        return ()
    try:
        bound = rule.bind(prim.args, prim.kwargs)
    except TypeError:
        return ()
    return [op.id for param, text in rule.templates.items()
            if isinstance(text, str) and runtime.matmul_adjoint_x2.__name__ in text
            for op in [bound.get(param)] if isinstance(op, ir.Name)]


def basic_index(index, facts):
    """Does ``index`` (an ``ir.Index``) name each element at most once: slices,
    constant integers, ``None``, ``...`` and loop counters (a name could hold an
    integer array with a repeated element)."""
    if not isinstance(index, ir.Index):
        return False
    node = index.node
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    return all(_basic_part(p, facts) for p in parts) and \
        any(_takes_an_axis(p, facts) for p in parts)


def _takes_an_axis(part, facts):
    return isinstance(part, (ast.Slice, ast.Name, ast.UnaryOp)) or \
        (isinstance(part, ast.Constant) and type(part.value) is int)


def _basic_part(part, facts):
    if isinstance(part, ast.Slice):
        return True  # a slice's bounds are integers, or it fails
    if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub):
        part = part.operand
    if isinstance(part, ast.Constant):
        return part.value is None or part.value is Ellipsis or \
            (type(part.value) is int)
    return isinstance(part, ast.Name) and part.id in facts.counters


def private_carried(loop, carried, facts):
    """The carried arrays of a checkpointed loop that its body changes only by
    subscript writes (never rebinds): their adjoints can stay one private buffer
    across the adjoint steps, zeroed and added to in place."""
    rebound = {s.target for s in ir.walk(loop.body) if isinstance(s, (ir.Assign, ir.For))}
    return [c for c in carried if c in facts.arrays and c not in rebound]
