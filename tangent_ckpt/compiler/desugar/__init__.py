"""Desugar: writes through views and aliases made explicit before the fence and the lowering."""
