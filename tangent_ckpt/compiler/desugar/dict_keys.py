"""Desugar: ``for key in d.keys()`` over a local surely bound to a dict, as ``for key
in d``.

Iterating a dict is iterating its keys, in the same order; the rest of the
compiler follows ``for key in d`` also where the loop carries ``d`` (a dict it
keeps at run time), which has no ``.keys()`` method of its own.  Only where
every binding of ``d`` in the function is a dict display or comprehension (a
parameter, or any other value, may be an object whose ``keys`` is its own).
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import own_scope_nodes


def iterate_dicts_directly(fnode):
    """Rewrite, in place, each ``for`` loop of ``fnode``'s own scope over
    ``d.keys()`` with ``d`` a local surely bound to a dict."""
    dicts = _surely_dicts(fnode)
    for node in own_scope_nodes(fnode):
        if isinstance(node, gast.For) and _keys_call(node.iter, dicts):
            node.iter = node.iter.func.value


def _keys_call(node, dicts):
    return isinstance(node, gast.Call) and not node.args and not node.keywords and \
        isinstance(node.func, gast.Attribute) and node.func.attr == "keys" and \
        isinstance(node.func.value, gast.Name) and node.func.value.id in dicts


def _surely_dicts(fnode):
    """The locals of ``fnode`` every binding of which is a dict display or a dict
    comprehension (a binding in a nested scope counts as another: it may be a
    ``nonlocal``'s)."""
    displays, other = set(), set()
    paired = set()
    for node in own_scope_nodes(fnode):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name):
            paired.add(id(node.targets[0]))
            (displays if isinstance(node.value, (gast.Dict, gast.DictComp)) else other).add(
                node.targets[0].id)
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load) and \
                id(node) not in paired:
            other.add(node.id)  # a parameter, a loop target, an unpacked name, +=
        elif isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, (gast.Import, gast.ImportFrom, gast.Global, gast.Nonlocal)):
            other |= {getattr(a, "asname", None) or getattr(a, "name", a)
                      for a in node.names}
    return displays - other
