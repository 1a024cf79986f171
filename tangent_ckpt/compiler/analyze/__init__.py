"""Analyze: facts about the lowered IR (activity, loops, shapes, complex values, owned arrays)."""
