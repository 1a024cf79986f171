"""Adjoint helpers that generated adjoint code calls as ``rt.*``, one module per family of primitives."""
