"""The user's `assert` and `raise` statements, as generated code runs them
(`rt.check`, `rt.raise_error`), a read of a name no path bound (`rt.check_bound`
of `rt.UNBOUND`), the checks NumPy makes of a call the gradient
writes another way (`rt.check_out_cast`), and the check that a list or tuple the
gradient reads as an array meets a NumPy array (`rt.require_numpy_operand`)."""

import numpy as np

from tangent_ckpt.errors import TangentCkptError, TransformError


def check(condition, message=None):
    """The user's ``assert condition, message``, run where the user ran it
    (also under ``python -O``: it is part of the program the gradient follows)."""
    if not condition:
        raise AssertionError(message) if message is not None else AssertionError()


class _Unbound:
    """What generated code binds a name to on entry where a path of the user's
    function may leave it unbound (its save, the zero of its adjoint, a
    checkpointed loop's state need a value): ``rt.UNBOUND``, one object, that
    no user value is.  Where the user's code reads such a name, ``check_bound``
    raises what Python raises."""
    __slots__ = ()

    def __repr__(self):
        return "rt.UNBOUND"

    def __reduce__(self):
        return "UNBOUND"  # pickled (a disk snapshot of a loop's state): the one object


UNBOUND = _Unbound()


def check_bound(value, name):
    """The user's read of ``name``, which a path may have left unbound: Python's
    UnboundLocalError where it holds ``rt.UNBOUND``."""
    if value is UNBOUND:
        raise UnboundLocalError(f"cannot access local variable '{name}' where it is not "
                                "associated with a value")


_NO_CAUSE = object()


def raise_error(error, cause=_NO_CAUSE):
    """The user's ``raise error`` (``raise error from cause``), run where the
    user raised it: generated code calls it only on the path that raises, so
    ``error`` is built only there, as in the user's code."""
    if cause is _NO_CAUSE:
        raise error
    raise error from cause


def check_out_cast(result, out, ufunc, filename, lineno):
    """``f(..., out=y)`` run as ``y[...] = f(...)``: refuse, as NumPy would, a
    result that ``y`` cannot hold -- a ufunc's result cast to ``y``'s dtype only
    within its kind (float64 into float32, never float into int), another
    function's result only of ``y``'s own dtype."""
    have, want = np.result_type(result), np.asarray(out).dtype
    if have == want or (ufunc and np.can_cast(have, want, casting="same_kind")):
        return
    raise TransformError(f"out= of dtype {want} cannot hold the result of dtype {have}",
                         filename=filename, lineno=lineno, construct="out= argument",
                         hint="assign the result instead: y = f(...)")


def require_numpy_operand(value, operator, line=None):
    """``value`` meets a list or tuple in the user's ``value <operator> [...]``
    (either side; ``operator`` ``"="``: ``value[...] = [...]``).  The gradient
    reads the list as NumPy does, ``np.asarray`` of it, which is what Python
    runs only when ``value`` is a NumPy array -- or, for an operator other than
    ``*``, a NumPy scalar (``np.float64 * [..]`` raises, ``np.int64 * [..]``
    repeats the list).  Anything else means something else (a list
    concatenates, an int repeats, a number raises), which this gradient does not
    compute: refused before it computes anything."""
    if operator == "=" and isinstance(value, np.ndarray):
        return
    if operator != "=" and (type(value) is np.ndarray or
                            (operator != "*" and isinstance(value, np.generic))):
        return
    kind = type(value).__name__
    kind = ("an " if kind[0] in "aeiou" else "a ") + kind
    where = f" at line {line}" if line is not None else ""
    spelled = "x[...] = [...]" if operator == "=" else f"x {operator} [...]"
    advice = "pass a NumPy array, or write np.array([...]) if arithmetic is meant"
    if isinstance(value, (list, tuple)):
        meaning = "Python joins the two sequences" if operator == "+" else "Python raises"
        if operator == "+" and isinstance(value, list):
            # CELL.hist = CELL.hist + [x], w + [x] of a list given: a list the function
            # did not make is one value when the code runs, its items not followed
            advice = ("the compiler follows the items of a list the function makes, or of "
                      "a list argument differentiated (wrt), not of one it reads from "
                      "outside -- a module-level list, an attribute of an object made "
                      "outside, an argument not differentiated: to join lists, build the "
                      "list in the function (xs = []; xs.append(v)) and return it if the "
                      "caller needs it")
    elif isinstance(value, (int, np.integer)) and operator == "*":
        meaning = "Python repeats the list"
    else:
        meaning = "Python gives it another meaning or raises"
    raise TangentCkptError(
        f"a list or tuple{where} meets {kind} in `{spelled}`: the gradient reads the "
        f"list as the NumPy array np.asarray makes of it, which is what Python does only "
        f"when the other operand is a NumPy array; for {kind} {meaning}, which this "
        f"gradient does not compute ({advice})")


def check_structure(value, kinds, name, filename, lineno):
    """Where one path of an ``if`` made ``name`` a list, tuple or dict (``if
    isinstance(s, int): s = (s, s)``) and the other left a value of the caller's,
    the code after the ``if`` reads its items one by one: refuse a value that is
    not a container of the same kind, length (or keys) and nesting."""
    problem = _structure_problem(value, kinds)
    if problem is not None:
        raise TransformError(f"'{name}' is read after this if as the {_shown(kinds)} one "
                             f"path makes, but on the other path it is {problem}",
                             filename=filename, lineno=lineno, construct=f"if ({name})",
                             hint="give it the same structure on both paths (for example "
                                  f"{name} = tuple({name}) on the other path), or pass a "
                                  "value of that structure")


def _structure_problem(value, kinds):
    if kinds is None:
        return None
    kind = kinds[0]
    if not isinstance(value, {"tuple": tuple, "list": list, "dict": dict}[kind]):
        return "None" if value is None else f"a {type(value).__name__}"
    if kind == "dict":
        if list(value.keys()) != list(kinds[1]):
            return f"a dict with keys {list(value.keys())!r}"
        items = [value[k] for k in kinds[1]]
    else:
        if len(value) != kinds[1]:
            return f"a {kind} of {len(value)} items"
        items = list(value)
    for item, inner in zip(items, kinds[2]):
        problem = _structure_problem(item, inner)
        if problem is not None:
            return f"a {kind} holding {problem}"
    return None


def _shown(kinds):
    if kinds[0] == "dict":
        return f"dict with keys {list(kinds[1])!r}"
    return f"{kinds[0]} of {kinds[1]} items"
