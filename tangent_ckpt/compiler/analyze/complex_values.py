"""Analyze: which local names may hold complex values.

A name may be complex when its value comes, directly or through any primitive,
from a complex constant (``1j``), a complex global array, a complex ``dtype``
(``np.zeros(n, dtype=complex)``, ``np.asarray(x, np.complex128)``,
``dtype=z.dtype``), an argument the call gives a complex value
(``function.complex_params``: the gradient is compiled per set of complex
arguments), or a Fourier transform (``np.fft.fft``); ``np.real``, ``np.imag``,
``abs`` and ``np.fft.irfft`` give real values again.  The reverse transform uses it for one thing: an adjoint
accumulated in place into the buffer of a *real* name (``bW += ...`` in a loop)
takes the real part of a contribution that reads complex values -- the
imaginary part is no derivative of a real value (see
``runtime/primitive_adjoints/complex_adjoints.py``), and NumPy cannot add it into a real buffer.
"""

import ast
import builtins

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir

#: functions whose result is complex (``np.fft.fft``), or real (``np.real``, ``abs``,
#: ``np.fft.irfft``), whatever their arguments, as their rows say (``complex_result=``)
COMPLEX_RESULTS = frozenset(id(f.fn) for f in registry.all_facts() if f.complex_result is True)
REAL_RESULTS = frozenset(id(f.fn) for f in registry.all_facts() if f.complex_result is False)


def complex_names(function, bindings):
    """The local names of ``function`` that may hold complex values, and the
    globals in ``bindings`` that do."""
    names = {name for name, value in bindings.items() if _is_complex_value(value)}
    given = function.complex_params        # the call's complex arguments
    names |= {path for path in given if "." not in path}
    attributes = {path for path in given if "." in path}   # m.c: an attribute of m is
    held = {path.split(".")[0]: path.split(".")[0] for path in attributes}  # name -> path
    assignments = [stmt for stmt in ir.walk(function.body) if isinstance(stmt, ir.Assign)]
    computed = {}                           # name -> what the expressions assigning it read
    for stmt in assignments:
        if isinstance(stmt.expr, ir.NonDiff):
            computed.setdefault(stmt.target, set()).update(stmt.expr.names)
    changed = True
    while changed:                          # to a fixed point: loops carry values back
        changed = False
        for stmt in assignments:
            if stmt.target in names or stmt.target in held:
                continue
            path = _attribute_read(stmt, held)
            if path in attributes or path is None and \
                    _makes_complex(stmt, names, bindings, computed):
                names.add(stmt.target)
                changed = True
            elif path is not None and any(a.startswith(path + ".") for a in attributes):
                held[stmt.target] = path    # m.sub, whose attribute m.sub.c is complex
                changed = True
    return names


def _attribute_read(stmt, held):
    """``m.c`` when ``stmt`` reads the attribute ``c`` of a name holding the
    object ``m`` (one of the call's arguments, or an attribute of one); else None."""
    expr = getattr(stmt, "expr", None)
    if isinstance(expr, ir.Prim) and expr.fn is getattr and len(expr.args) == 1 and \
            isinstance(expr.args[0], ir.Name) and expr.args[0].id in held and \
            expr.render.startswith("attr:"):
        return f"{held[expr.args[0].id]}.{expr.render[len('attr:'):]}"
    return None


def _is_complex_value(value):
    return isinstance(value, (complex, np.complexfloating)) or \
        (isinstance(value, np.ndarray) and value.dtype.kind == "c")


def _makes_complex(stmt, names, bindings, computed):
    # a subscript write (x[i] = v) keeps x's dtype: a real x stores the real part of
    # a complex v (setitem_adjoint_value takes the real part of v's adjoint)
    expr = stmt.expr
    if isinstance(expr, ir.Copy):
        return _operand_complex(expr.value, names)
    if isinstance(expr, ir.NonDiff):  # z.dtype: a complex type
        return _dtype_of(expr.node) and not names.isdisjoint(expr.names)
    if isinstance(expr, ir.Prim):
        if id(expr.fn) in COMPLEX_RESULTS:
            return True
        if id(expr.fn) in REAL_RESULTS:
            return False
        dtype = expr.kwargs.get("dtype")
        if isinstance(dtype, ir.Name) and not names.isdisjoint(computed.get(dtype.id, ())):
            return True   # dtype=np.result_type(x, z) of a complex z
        if dtype is not None and _complex_dtype(dtype, names, bindings):
            return True
        if not any(_operand_complex(a, names)
                   for a in list(expr.args) + list(expr.kwargs.values())):
            return any(_complex_dtype(a, names, bindings, positional=True) for a in expr.args)
        return not _real_dtype(expr, bindings)  # w.astype(float), np.sum(w, dtype=float)
    return False


def _dtype_of(node):
    """Does the syntax tree read a dtype (``z.dtype``)?"""
    return isinstance(node, (ast.Attribute, gast.Attribute)) and node.attr == "dtype"


def _complex_dtype(op, names, bindings, positional=False):
    """Does the operand name a complex type: ``complex``, ``np.complex128``,
    ``"complex64"``, or a local name holding ``z.dtype`` of a complex ``z``?  A
    positional string of one letter is an ``order`` ("F"), not a dtype."""
    if isinstance(op, ir.Name):
        if op.id in names:
            return True   # z.dtype, or a complex value (which makes the result complex)
        value = bindings.get(op.id, getattr(builtins, op.id, None))
    elif isinstance(op, ir.Const):
        value = op.value
        if positional and isinstance(value, str) and len(value) < 2:
            return False
    else:
        return False
    if not isinstance(value, (type, str, np.dtype)):
        return False
    try:
        return np.dtype(value).kind == "c"
    except (TypeError, ValueError):
        return False


def _real_dtype(prim, bindings):
    """Is ``prim`` given a real floating ``dtype`` known when compiling, as its
    rule's ``dtype`` parameter (``np.asarray(w, dtype=float)``, ``w.astype(np.float32)``,
    ``np.sum(w, dtype=float)``)?  Its result is real: a complex argument loses its
    imaginary part (:func:`takes_real_part`)."""
    rule = registry.lookup(prim.fn)
    if rule is None or rule.constant or "dtype" not in rule.param_names:
        return False
    try:
        op = rule.bind(prim.args, prim.kwargs).get("dtype")
    except TypeError:
        return False
    if isinstance(op, ir.Const):
        value = op.value
    elif isinstance(op, ir.Name) and (op.id in bindings or hasattr(builtins, op.id)):
        value = bindings.get(op.id, getattr(builtins, op.id, None))
    else:
        return False
    if not isinstance(value, (type, str, np.dtype)):
        return False
    try:
        return np.dtype(value).kind == "f"
    except (TypeError, ValueError):
        return False


def takes_real_part(prim, operand, names, bindings):
    """Does the adjoint of the complex ``operand`` of ``prim`` take the real part
    of its contribution?  Where ``prim`` is given a real ``dtype=``
    (``w.astype(float)``, ``np.asarray(w, dtype=float)``, ``np.sum(w,
    dtype=float)``): its result keeps the real part of a complex argument, so the
    argument's adjoint is the real part of what the rule gives (the result's
    adjoint may carry an imaginary part that is no derivative).  The rules that
    take a ``dtype=`` and complex values are linear with real coefficients."""
    return operand in names and _real_dtype(prim, bindings)


def _operand_complex(op, names):
    if isinstance(op, ir.Const):
        return isinstance(op.value, complex)
    if isinstance(op, ir.Seq):
        return any(_operand_complex(item, names) for item in op.items)
    return any(name in names for name in ir.operand_names(op))


#: functions whose adjoint and tangent rules hold for complex arguments under the
#: convention above, as their rows say (``complex_input=True``: holomorphic ones,
#: linear maps with real coefficients, the Fourier transforms, and the rules
#: written for complex values: real, imag, conj, abs).  Any other rule is written
#: for real input: a complex differentiated value reaching it is refused
#: (``refused_for_complex``), never differentiated as if it were real.
COMPLEX_RULES = frozenset(id(rule.fn) for rule in registry.all_rules() if rule.complex_input)


def refused_for_complex(prim, varied, names):
    """The label of ``prim`` when a differentiated operand (``varied``) may hold a
    complex value and its rule is written for real input only; else None."""
    if not names or id(prim.fn) in COMPLEX_RULES or not names.intersection(varied):
        return None
    registered = registry.lookup(prim.fn)
    if registered is not None and registered.constant and prim.fn is not np.sign:
        return None           # no derivative for real or complex input (floor, ...)
    return prim.ref or getattr(prim.fn, "__name__", repr(prim.fn))
