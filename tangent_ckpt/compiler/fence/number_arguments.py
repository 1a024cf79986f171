"""Parameters the call gives numbers: what the fence may take to hold no memory.

The fence reads the source, and from the source a parameter may be anything: in
``nxt = list(x); nxt[i] += v`` the items of ``x`` may be arrays, which
``nxt[i] += v`` would add into in place (the caller's arrays, read again through
``x``).  A call that gives ``x`` a list of floats shares nothing: ``list(x)`` is a
new list of immutable numbers, and ``nxt[i] += v`` rebinds a place of it.

Where the fence refuses a function, the API compiles it again for what the call
gives (``tangent_ckpt/api.py``, keyed by it, so that a call giving arrays there
compiles, and is refused, apart): ``NUMBER`` for a parameter given a number (a
Python or NumPy scalar: never an array, holding nothing), ``SEQUENCE`` for one
given a list or tuple of such numbers.  A number holds no memory whatever the
function does with it.  A list holds numbers only while nothing stores into it,
so the fence takes a ``SEQUENCE`` parameter to hold nothing only where the
function never changes the caller's object: it only reads it
(:func:`number_parameters`).  ``ARRAY`` is a parameter given a NumPy array of
numbers (a bool, integer, float or complex dtype): its memory is the caller's,
as any parameter's, but its elements are numbers, so ``u = u0.copy()`` is an
array of numbers too, and ``u_new = np.empty_like(u); u_new[:] = u`` copies
``u``'s numbers into ``u_new`` (``AliasFence.numeric_array``), where an array of
objects would hold references to them.
"""

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted

NUMBER = "number"
SEQUENCE = "sequence"
ARRAY = "array"

# calls that read a list or tuple given to them and keep no reference to it that
# the function could write through (a new list, tuple or array of its numbers, a
# number, or an iterator over its numbers)
_READERS = (list, tuple, len, enumerate, zip, sum, sorted, reversed, min, max, iter)


def is_number(value):
    """A Python or NumPy scalar number (never an array, not even a 0-d one)."""
    return type(value) in (bool, int, float, complex) or \
        isinstance(value, (np.number, np.bool_))


def argument_kind(value):
    """``NUMBER``, ``SEQUENCE`` (a plain list or tuple of numbers), ``ARRAY`` (a
    NumPy array of numbers, not a subclass) or None."""
    if is_number(value):
        return NUMBER
    if type(value) in (list, tuple) and all(map(is_number, value)):
        return SEQUENCE
    if type(value) is np.ndarray and value.dtype.kind in "biufc":
        return ARRAY
    return None


def number_parameters(fnode, given, resolve, local_names=frozenset()):
    """Of ``given`` ({parameter name: ``NUMBER``, ``SEQUENCE`` or ``ARRAY``}), those
    the fence may take to hold no memory in ``fnode`` (beyond their own, for an
    ``ARRAY``): every ``NUMBER`` and ``ARRAY``, and each ``SEQUENCE`` the function
    only reads (:func:`_only_read`)."""
    if not given:
        return {}
    parents = {}
    for node in gast.walk(fnode):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
    return {name: kind for name, kind in given.items()
            if kind in (NUMBER, ARRAY) or kind == SEQUENCE and
            _only_read(fnode, name, parents, resolve, local_names)}


def _only_read(fnode, name, parents, resolve, local_names):
    """Whether every use of ``name`` in ``fnode`` (and in the functions defined in
    it) rebinds the name or reads the object without keeping a reference through
    which it could be changed: ``x[k]``, ``for v in x``, ``a, b = x``, ``x + [v]``,
    ``list(x)``, ``len(x)``, ``zip(x, y)``, ... -- never ``x.append(v)``,
    ``x[k] = v``, ``y = x`` or ``f(x)`` of a function that may store into it."""
    for node in gast.walk(fnode):
        if not (isinstance(node, gast.Name) and node.id == name):
            continue
        if isinstance(node.ctx, (gast.Store, gast.Param)):
            continue  # x = ...: the name rebound, the caller's object untouched
        if not isinstance(node.ctx, gast.Load):
            return False
        parent = parents.get(id(node))
        if isinstance(parent, gast.Subscript) and parent.value is node and \
                isinstance(parent.ctx, gast.Load):
            continue
        if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is node:
            continue
        if isinstance(parent, gast.Assign) and parent.value is node and \
                all(isinstance(t, (gast.Tuple, gast.List)) for t in parent.targets):
            continue  # a, b = x: its numbers
        if isinstance(parent, (gast.BinOp, gast.Compare)):
            continue  # x + [v], x * 2, x == y: a new object
        if isinstance(parent, gast.Call) and node in parent.args:
            fn = resolve_dotted(parent.func, resolve, local_names)
            if any(fn is r for r in _READERS):
                continue
        return False
    return True
