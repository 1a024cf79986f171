"""Transform: the IR -> its adjoint (``reverse.py``) or its tangent (``forward.py``),
with the rules of ``adjoints/`` instantiated for each primitive call."""
