"""Desugar: the user's syntax rewritten into forms the rest of the compiler already
follows (a branch that raises as a check, ``a.fill(v)`` and ``U[i][j] = v`` on arrays
as one subscript write), and writes through views and aliases made explicit, before
the fence and the lowering."""
