"""Desugar: ``list()``, ``dict()`` and ``tuple()`` called with no argument, as the
displays ``[]``, ``{}`` and ``()`` they return (``hs = list()`` in a shallow-water
model was read as a call of an unknown function: its ``append`` refused as an
array's in-place method, two such lists taken for one object).  Only where the
name surely means the builtin (no local or global of that name)."""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import builtins_meant

_DISPLAYS = {
    "list": lambda: gast.List(elts=[], ctx=gast.Load()),
    "tuple": lambda: gast.Tuple(elts=[], ctx=gast.Load()),
    "dict": lambda: gast.Dict(keys=[], values=[]),
}


def write_empty_displays(parsed):
    """Rewrite, in ``parsed.node``, each ``list()``/``tuple()``/``dict()`` as its display."""
    calls = [n for n in gast.walk(parsed.node)
             if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
             n.func.id in _DISPLAYS and not n.args and not n.keywords]
    if not calls:
        return
    builtin = builtins_meant(_DISPLAYS, parsed.node, parsed.resolve)

    class Displays(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if any(node is c for c in calls) and node.func.id in builtin:
                return gast.copy_location(_DISPLAYS[node.func.id](), node)
            return node
    Displays().visit(parsed.node)
