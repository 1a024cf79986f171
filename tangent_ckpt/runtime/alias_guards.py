"""Run-time guards of the aliasing fence (``rt.distinct_arrays``, ``rt.distinct_items``,
``rt.not_a_view``)
and of the view lowering (``rt.require_array``).

Two parameters of a differentiated function, or a parameter and a module-level
array, are separate arrays for the compiler: nothing in the function can say
whether the caller passed the same array twice (``f(a, a)``) or a view of the
other (``f(W[0], W)``).  Where a write into one of them would change the other,
read afterwards, the generated gradient checks once, when it starts, that the
two share no memory: the fast path runs on separate arrays (and is exact
there), and an error naming both names and the user's line stops a call whose
arrays do share memory, whose gradient would be that of another program.
"""

import numpy as np

from tangent_ckpt.errors import TangentCkptError


def distinct_arrays(written, other, names, line=None, function=None, black_box=False):
    """Refuse ``written`` and ``other`` when they share memory: the same object,
    or two NumPy arrays with a byte in common (overlapping views of one array).
    ``names``: the user's names of the two (``'W'``, ``'b'``); ``line``: the
    user's line of the write into ``written``; ``function``: the helper whose
    parameters ``names`` are, when the check sits at its call; ``black_box``:
    the check sits before the write, one of the two holding what a function
    with a registered adjoint returned.  Cheap: an
    identity test, then ``np.shares_memory``, which compares the arrays' bounds
    first."""
    if written is other or (isinstance(written, np.ndarray) and isinstance(other, np.ndarray)
                            and np.shares_memory(written, other)):
        raise TangentCkptError(_message(names, line, function, black_box))
    if isinstance(written, _HOLDERS) or isinstance(other, _HOLDERS):
        # a list, tuple or dict given for one of them (ws = [g, h] and g): the arrays it
        # holds are the ones its in-place item updates write into
        for a in _arrays(written):
            for b in _arrays(other):
                if a is b or np.shares_memory(a, b):
                    raise TangentCkptError(_message(names, line, function, black_box))


def distinct_items(container, name, line=None):
    """Refuse a list, tuple or dict ``container`` (given for the parameter
    ``name``) that holds one array at two places (``[a, a]``), or two views
    sharing memory: an in-place update of one item at the user's ``line``
    (``ws[k] -= v``) changes the other place too, which the gradient, following
    each place as an array of its own, does not.  An array (its rows are not
    objects of their own), a number, or a container of separate arrays passes."""
    if not isinstance(container, _HOLDERS):
        return
    seen = []
    for a in _arrays(container):
        if any(a is b or np.shares_memory(a, b) for b in seen):
            where = f" at line {line}" if line is not None else ""
            raise TangentCkptError(
                f"'{name}' holds the same array at two places (or two views sharing "
                f"memory) when the gradient is called: the in-place update of an item of "
                f"'{name}'{where} also changes the other place, and the gradient is that of "
                f"separate arrays (give '{name}' arrays that share no memory, e.g. "
                f"[a, a.copy()]: the function then computes what its gradient "
                f"differentiates)")
        seen.append(a)


_HOLDERS = (list, tuple, dict)


def _arrays(value):
    """The NumPy arrays ``value`` is or holds (through lists, tuples and dicts)."""
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _arrays(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _arrays(item)


def _message(names, line, function, black_box):
    written, other = names
    where = f" at line {line}" if line is not None else ""
    if black_box:
        return (f"'{written}' and '{other}' share memory: the write into '{written}'{where} "
                f"would also change '{other}', which is read afterwards, and the compiler "
                f"follows the two as separate arrays (one holds what a function with a "
                f"registered adjoint returned, whose body the compiler does not read: here "
                f"it returned the other's memory)")
    if function is not None:
        where = f" at its line {line}" if line is not None else ""
        return (f"{function}() is given arrays that share memory for its parameters "
                f"'{written}' and '{other}': its write into '{written}'{where} would also "
                f"change '{other}', which it reads afterwards, and the compiler follows a "
                f"helper's parameters as separate arrays (the sharing is followed where "
                f"both names are the calling function's own, not through a call)")
    return (f"'{written}' and '{other}' share memory when the gradient is called (the same "
            f"array, or overlapping views of one, given for both): the write into "
            f"'{written}'{where} would also change '{other}', which is read afterwards, "
            f"and the gradient is that of two separate arrays (pass arrays that share no "
            f"memory, e.g. a copy of one: the function then computes what its gradient "
            f"differentiates)")


def not_a_view(argument, array, names, function, line=None):
    """Refuse ``argument`` -- what a call gives a helper's parameter that the
    helper writes in place, an expression such as ``y[1:]`` -- when it is a view
    of ``array`` (``y``): the write of the helper ``function`` would change
    ``y``, which the gradient does not follow.  ``names``: (the parameter, the
    array's name); ``line``: the helper's line that writes.  A number, or an array with its own
    memory (a fancy index's copy), passes: the write cannot reach ``y``."""
    if isinstance(argument, np.ndarray) and isinstance(array, np.ndarray) and \
            np.shares_memory(argument, array):
        param, name = names
        where = f" at its line {line}" if line is not None else ""
        raise TangentCkptError(
            f"{function}() writes into its parameter '{param}'{where}, and is given a view "
            f"of '{name}' (or an array it holds) for it: the write changes '{name}', which "
            f"the gradient does not follow through a call (have {function}() return the new "
            f"value and assign it: '{param} = {param} + ...' in {function}(), then write the "
            f"result into '{name}')")


def require_array(value, name, view, of=None, line=None, least=0):
    """Refuse ``value``, given for the parameter ``name``, unless it is a NumPy
    array (of at least ``least`` dimensions).  The view lowering follows
    ``name`` as an array though the compiler cannot see its type
    (``compiler/desugar/array_roots.py``): the user's ``line`` takes ``view`` as
    a view of ``of`` (``name`` itself, a copy of it, or arithmetic of it and a
    number, ``y = x * 1.0``: a NumPy scalar for a 0-d ``x``), and writes into
    ``of`` itself (``U[0] = U[1]`` copies a row of an array; for a list it makes
    two items one object).  Anything else stops the gradient before it computes
    anything."""
    where = f" at line {line}" if line is not None else ""
    if isinstance(value, np.ndarray):
        if value.ndim >= least:
            return
        raise TangentCkptError(
            f"'{name}' is given a {value.ndim}-d array: the gradient follows '{view}'{where} "
            f"as a view of '{of}', an array computed from '{name}', which for a {value.ndim}-d "
            f"array is a NumPy scalar that no write changes (call it with an array of at "
            f"least {least} dimension{'s' if least > 1 else ''} for '{name}')")
    kind = type(value).__name__
    of = name if of is None else of
    array = f"'{of}'" if of == name else f"'{of}' (a copy of '{name}', or arithmetic of it)"
    raise TangentCkptError(
        f"'{name}' is given a {kind}, not a NumPy array: the gradient follows '{view}'"
        f"{where} as a view of {array} and the writes through it as NumPy runs them for "
        f"an array; for a {kind} the same code means something else, which this gradient "
        f"does not compute (call it with a NumPy array for '{name}')")


def refuse_outside_in_place(value, written, line=None):
    """Refuse ``written += ...`` on an attribute of an object made outside the
    differentiated function when ``value`` (what it holds) changes in place (an
    array, a list): the gradient follows the attribute as a variable and never
    changes the object, so another name holding the array would not see the
    change.  A number is rebound by ``+=`` and passes."""
    if not hasattr(type(value), "__iadd__"):
        return
    where = f" at line {line}" if line is not None else ""
    raise TangentCkptError(
        f"'{written} += ...'{where} changes a {type(value).__name__} in place that an "
        f"object made outside the differentiated function holds: NumPy changes it under "
        f"every name that holds it, which this gradient does not follow (rebind the "
        f"attribute instead: {written} = {written} + ...)")
