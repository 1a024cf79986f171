"""Facts about a ``for`` loop over the rows of an array its body writes into:
Python's iterator reads each row from the array's memory when the loop reaches
it, so a write in the body shows in the rows still to come.

The lowering reads such rows from the current array (``for v in y: y += v``,
``for v in y[1:]: y[0] += v``, ``for v in reversed(y)``: the view made again of
the current ``y`` in each step, its bounds fixed where the loop starts), which
is Python's order exactly when the body writes into the array's memory but never
binds its name to another object.  The fence (``fence/aliasing.py``) refuses the
writes into the rows of any other loop (a view under another name: ``Z = Y[1:];
for r in Z``).
"""

import gast


def view_root(node):
    """The name ``node`` views with basic indexing (``y``, ``y[1:]``, ``y[::-1]``,
    ``Y[:, 0]``, ``Y.T``), else None: its rows are rows of that name's memory."""
    while True:
        if isinstance(node, gast.Name):
            return node.id
        if isinstance(node, gast.Attribute) and node.attr == "T":
            node = node.value
        elif isinstance(node, gast.Subscript) and _basic(node.slice):
            node = node.value
        else:
            return None


def _basic(index):
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return all(isinstance(p, gast.Slice) or
               isinstance(p, gast.Constant) and (type(p.value) is int or p.value is None or
                                                  p.value is Ellipsis)
               for p in parts)


def plainly_rebinds(body, name):
    """Does ``body`` bind ``name`` to another object (any binding but ``name op= v``)?"""
    augmented = {id(n.target) for st in body for n in gast.walk(st)
                 if isinstance(n, gast.AugAssign)}
    return any(isinstance(n, gast.Name) and n.id == name and
               not isinstance(n.ctx, gast.Load) and id(n) not in augmented
               for st in body for n in gast.walk(st))


def updates(body, name):
    """Does ``body`` hold ``name op= v``?"""
    return any(isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and
               n.target.id == name for st in body for n in gast.walk(st))


def may_write(body, name):
    """Might ``body`` write into ``name``'s memory: ``name op= v``, a subscript or
    attribute store rooted at it, or ``name`` handed to a call?"""
    for n in (n for st in body for n in gast.walk(st)):
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name) and \
                n.target.id == name:
            return True
        if isinstance(n, (gast.Subscript, gast.Attribute)) and \
                not isinstance(n.ctx, gast.Load) and _root(n) == name:
            return True
        if isinstance(n, gast.Call) and any(_root(a) == name for a in n.args):
            return True
    return False


def live_root(iterable, body):
    """The name whose current array a loop over ``iterable`` reads its rows from
    (a view of it, or it, that the body may write into and never rebinds), else None."""
    root = view_root(iterable)
    if root is None or plainly_rebinds(body, root) or not may_write(body, root):
        return None
    return root


def _root(node):
    while isinstance(node, (gast.Subscript, gast.Attribute)):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None
