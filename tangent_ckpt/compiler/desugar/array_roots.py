"""Parameters the view lowering (``views.py``) follows as arrays on a run-time
check.

``u = U[1:-1, 1:-1]`` with ``U`` a parameter (or ``U = U0.copy()``): whether
``u`` is a view, and what ``U[0, :] = U[1, :]`` does, depends on a type the
compiler cannot see.  For an array, ``U[0, :] = U[1, :]`` copies a row; for a
list it makes two items one object, and the group of ``U``'s views cannot be
followed.  Where that doubt alone stops a group -- it is followed once the
parameter is taken to be an array -- the pass takes it to be one and checks it
when the function starts: ``assert isinstance(U0, np.ndarray)``, marked
(``ViewMarks.array_checks``) so that the lowering runs it as
``rt.require_array``.  A value that is no array stops the gradient with an
error naming the parameter and the user's line, never a gradient of another
program.

Only the differentiated function's own parameters are checked, and only names
bound to them or to ``.copy()`` of them: those are the caller's values as the
user's code sees them (a value the generated code computes may have another
type: it runs ``U0.copy()`` as ``np.copy(U0)``, an array even for a list).

A name bound to arithmetic of such a name and a number (``y = x * 1.0``, ``x +
0``, ``-x``; then ``y[0], y[1] = y[1], y[0]``) is an array too when ``x`` is an
array of at least one dimension (of a 0-d array it is a NumPy scalar, which
nothing changes in place): the check then also requires ``x.ndim >= 1``
(``rt.require_array(..., least=1)``).  Python itself raises for a 0-d ``x`` at
the first write through such a name.
"""

import gast

from tangent_ckpt.compiler.desugar.view_facts import ArrayFacts
from tangent_ckpt.compiler.desugar.view_groups import Group
from tangent_ckpt.compiler.desugar.view_shape import located, name_node


def roots_taken_as_arrays(shape, facts, groups):
    """The groups of ``groups`` (root -> links) followed only when parameters
    are taken to be arrays: {parameter: the root of the first such group}, and
    the facts with those parameters taken so (``facts`` itself when none)."""
    if shape.helper or shape.numpy is None:  # the check names np.ndarray
        return {}, facts
    doubted = {}  # root -> the parameters whose type alone decides it
    for root, links in groups.items():
        params = _parameters_deciding(shape, facts, root, set())
        if params and not Group(shape, facts, root, links).followable():
            doubted[root] = params
    while doubted:  # each group kept must be followed with every parameter taken
        taken = _merged(doubted.values())
        assumed = ArrayFacts(shape.bindings, shape.parsed.resolve, shape.local, taken,
                             items=shape.held)
        kept = {root: params for root, params in doubted.items()
                if Group(shape, assumed, root, groups[root]).followable()}
        if kept == doubted:
            first = {}
            for root in sorted(kept, key=lambda r: shape.order[id(_first_view(shape,
                                                                             groups[r]).stmt)]):
                for param in kept[root]:
                    first.setdefault(param, (root, taken[param]))
            return first, assumed
        doubted = kept
    return {}, facts


def _merged(decided):
    """{parameter: least} of several :func:`_parameters_deciding` answers."""
    out = {}
    for params in decided:
        for param, least in params.items():
            out[param] = max(out.get(param, 0), least)
    return out


def _parameters_deciding(shape, facts, name, seen):
    """{parameter: the fewest dimensions it must have} of the parameters that
    are arrays exactly when ``name`` is one: ``name`` itself when it is a
    parameter never bound again (0), those of ``U0`` when every binding of
    ``name`` is ``U0.copy()`` (as ``U0``'s) or arithmetic of ``U0`` and a number
    (1: of a 0-d array, a NumPy scalar); None when some binding is anything
    else (or ``name`` is an array already: nothing to decide)."""
    if facts.array(name) is not None or name in seen:  # seen: U = V.copy(); V = U.copy()
        return None
    seen = seen | {name}
    binders = shape.binders.get(name, [])
    if binders == [(shape.parsed.node, None)]:
        args = shape.parsed.node.args  # *args is a tuple, **kwargs a dict: never checked
        return {name: 0} if name in {a.id for a in args.posonlyargs + args.args +
                                     args.kwonlyargs} else None
    found = []
    for stmt, value in binders:
        if not isinstance(stmt, gast.Assign):
            return None
        if isinstance(value, gast.Call) and not value.args and not value.keywords and \
                isinstance(value.func, gast.Attribute) and value.func.attr == "copy" and \
                isinstance(value.func.value, gast.Name):
            source, least = value.func.value.id, 0
        else:
            source, least = _arithmetic_of(value), 1
            if source is None:
                return None
        inner = _parameters_deciding(shape, facts, source, seen)
        if not inner:
            return None
        found.append({param: max(low, least) for param, low in inner.items()})
    return _merged(found) or None


_ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow)


def _arithmetic_of(value):
    """``U0`` of ``U0 * 1.0``, ``1.0 + U0``, ``-U0`` (an elementwise operator and a
    number constant), else None."""
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)) and \
            isinstance(value.operand, gast.Name):
        return value.operand.id
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, _ELEMENTWISE)):
        return None
    for this, other in ((value.left, value.right), (value.right, value.left)):
        if isinstance(this, gast.Name) and isinstance(other, gast.Constant) and \
                type(other.value) in (int, float):
            return this.id
    return None


def _first_view(shape, links):
    return min(links, key=lambda link: shape.order[id(link.stmt)])


def check_parameters(shape, first, groups):
    """Start the function with the check of each parameter of ``first``
    ({parameter: (root, the fewest dimensions it must have)}), placed at the
    user's line that takes the first view of its root."""
    checks = [_check(shape, param, root, least, _first_view(shape, groups[root]))
              for param, (root, least) in sorted(first.items())]
    body = shape.parsed.node.body
    at = 1 if body and isinstance(body[0], gast.Expr) and \
        isinstance(body[0].value, gast.Constant) and isinstance(body[0].value.value, str) else 0
    body[at:at] = checks  # after the docstring


def _check(shape, param, root, least, link):
    """``assert isinstance(U, np.ndarray)``, marked for the lowering (with
    ``least``, the fewest dimensions ``U`` must have)."""
    ndarray = gast.Attribute(value=name_node(shape.numpy), attr="ndarray", ctx=gast.Load())
    test = gast.Call(func=name_node("isinstance"), args=[name_node(param), ndarray],
                     keywords=[])
    check = located(gast.Assert(test=test, msg=None), link.stmt)
    shape.marks.array_checks[check] = (param, link.name, root, least)
    return check
