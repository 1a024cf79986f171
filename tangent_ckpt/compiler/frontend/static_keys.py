"""Constant indices and keys written in the user's code (``x[0]``, ``d['w']``,
``x[-1]``): read off the syntax tree, by the aliasing fence (what an item of a
container may be) and by the lowering (containers of static structure) alike."""

import gast


def static_key(node):
    """The value of a constant index or key (``0``, ``-1``, ``'w'``), or None."""
    if isinstance(node, gast.Constant) and isinstance(node.value, (int, str)) and \
            not isinstance(node.value, bool):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and isinstance(node.operand.value, int):
        return -node.operand.value
    return None
