"""Desugar: a branch that ends in ``raise`` as a check, ``if c: raise E(...)``,
with what runs on the other path after it.

A ``raise`` ends its path: the statements after an ``if`` whose branch raises
run only on the other path, so they may follow the ``if`` instead of sitting in
its ``else``.  The lowering keeps the check in the forward sweep, where the
user wrote it (``lower/observers.py``: ``rt.raise_error(E(...))``, the
exception built only when the condition holds), and the rest of the function
is the path it does not take:

- ``if c: ...; raise E`` ``else: rest`` -> ``if c: ...; raise E`` then ``rest``;
- ``if c: rest`` ``else: ...; raise E`` -> ``if not c: ...; raise E`` then
  ``rest`` (``==``/``!=``, ``is``/``is not``, ``in``/``not in`` swap, which holds for
  NaN too; any other test is negated with ``not``);
- ``if c: ...; return r`` followed by ``...; raise E`` (``return r`` on one path,
  an error on every other) -> ``if not c: ...; raise E`` then ``...; return r``.

Applied to every block (of nested functions too), again to what it hoists (an ``elif`` chain whose last
``else`` raises unrolls into checks).  A bare ``raise`` (re-raise) has no
exception outside ``except``: the lowering refuses it.
"""

import gast

_SWAPPED = {gast.Eq: gast.NotEq, gast.NotEq: gast.Eq, gast.Is: gast.IsNot,
            gast.IsNot: gast.Is, gast.In: gast.NotIn, gast.NotIn: gast.In}


def hoist_raising_branches(fnode):
    """Rewrite every block of ``fnode`` in place."""
    _block(fnode.body)


def _block(stmts):
    k = 0
    while k < len(stmts):
        s = stmts[k]
        if isinstance(s, gast.If):
            rest = stmts[k + 1:]
            if s.orelse and _raises(s.body):
                stmts[k + 1:k + 1] = s.orelse  # if c: raise E / else: rest
                s.orelse = []
            elif s.orelse and _raises(s.orelse):
                hoisted, s.body, s.orelse = s.body, s.orelse, []
                s.test = _negated(s.test)      # if c: rest / else: raise E
                stmts[k + 1:k + 1] = hoisted
            elif not s.orelse and _ends_in_return(s.body) and rest and _raises(rest):
                s.body, stmts[k + 1:] = rest, s.body  # if c: return r / raise E
                s.test = _negated(s.test)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                _block(block)  # (a nested function's too: the lowering may inline it)
        for handler in getattr(s, "handlers", []):
            _block(handler.body)
        k += 1


def _raises(stmts):
    """Whether ``stmts`` ends in ``raise`` (its last statement is one)."""
    return bool(stmts) and isinstance(stmts[-1], gast.Raise)


def _ends_in_return(stmts):
    return bool(stmts) and isinstance(stmts[-1], gast.Return)


def _negated(test):
    if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
        return test.operand
    if isinstance(test, gast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _SWAPPED:
        swapped = gast.Compare(left=test.left, ops=[_SWAPPED[type(test.ops[0])]()],
                               comparators=test.comparators)
        return gast.copy_location(swapped, test)
    return gast.copy_location(gast.UnaryOp(op=gast.Not(), operand=test), test)
