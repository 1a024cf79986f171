"""Test helper: autograd as a second, independent oracle for the fuzzer.

Finite differences miss errors of order 1e-6 and share blind spots with the
program generator; autograd (operator overloading, another code base) computes
the same gradient to rounding.  ``pip install -e '.[oracle]'`` installs it;
without it :func:`autograd_gradient` returns None and the fuzzer checks against
finite differences only.

``autograd_gradient(f, args, wrt)`` runs ``f``'s own code with ``np`` bound to
``autograd.numpy``.  It gives None too for programs that update an array in
place (``v += ...``, ``v[0] = ...``; writes into a list or dict the function
builds are compared): autograd does not follow in-place updates
(its documentation says not to use them) -- an array that does not depend on the
inputs is a plain ndarray in autograd, which ``v += 1`` mutates under the
records that captured it, so autograd's gradient is wrong where ours matches
finite differences (the first --fuzz-long run found such a program) -- and for
programs autograd cannot run (a NumPy function it lacks), and where autograd's
gradient is not finite (its ``np.sinc`` rule divides by x, nan at 0, where the
derivative is 0; the third --fuzz-long run found it).  :data:`COUNTS` says
how many programs were compared and why the others were not, for the report at
the end of a session (``conftest.py``).
"""

import ast
import inspect
import textwrap
import types
import warnings

import numpy as np

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # the optional extra is not installed
    autograd = anp = None

COUNTS = {"compared": 0, "updating arrays in place": 0, "casting to a dtype": 0,
          "not run by autograd": 0, "not finite in autograd": 0}


def available():
    return autograd is not None


def autograd_gradient(f, args, wrt, before=None):
    """The gradients of ``f(*args)`` for the positions ``wrt`` from autograd, a
    tuple in ``wrt`` order; None when autograd is missing or cannot run ``f``.
    ``before()`` runs before each evaluation (to seed ``np.random``)."""
    if autograd is None:
        return None
    if updates_in_place(f):
        COUNTS["updating arrays in place"] += 1
        return None
    if casts_to_a_dtype(f):
        COUNTS["casting to a dtype"] += 1
        return None
    g = types.FunctionType(f.__code__, {**f.__globals__, "np": anp}, f.__name__,
                           f.__defaults__, f.__closure__)
    try:
        with warnings.catch_warnings():  # "Output seems independent of input": fine here
            warnings.simplefilter("ignore")
            grads = tuple(_after(before, autograd.grad(g, k))(*args) for k in wrt)
    except Exception:  # noqa: BLE001 - outside autograd's subset: not compared
        COUNTS["not run by autograd"] += 1
        return None
    if not all(np.all(np.isfinite(np.asarray(leaf, dtype=float)))
               for g in grads for leaf in _leaves(g)):
        # autograd's own rule fails at a removable singularity (its np.sinc at 0 gives
        # nan, the derivative is 0): not an oracle there; finite differences still check
        COUNTS["not finite in autograd"] += 1
        return None
    COUNTS["compared"] += 1
    return grads


def _leaves(value):
    """The arrays of a gradient that may be a (nested) list, tuple or dict."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _after(before, function):
    if before is None:
        return function

    def call(*args):
        before()
        return function(*args)
    return call


def casts_to_a_dtype(f):
    """Whether ``f`` casts to a dtype (``.astype(...)``, ``dtype=``, or
    ``np.array(x, int)``): autograd passes the gradient through
    ``x.astype(np.int32)`` and ``np.array(x, dtype=np.int64)`` as through the
    identity, where the derivative of a truncation is 0 (ours is 0, and finite
    differences agree; the dtype_casts family found it)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(f)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "astype":
            return True
        if isinstance(node, ast.Call) and (
                any(k.arg == "dtype" for k in node.keywords) or
                (isinstance(node.func, ast.Attribute) and node.func.attr in ("array", "asarray")
                 and len(node.args) > 1)):
            return True
    return False


def updates_in_place(f, _seen=None):
    """Whether ``f``, or a function of its module that it calls (a helper writing
    into its parameters, or a method of a class of its module it constructs:
    ``opt.update(p, g)``), has an augmented assignment or an assignment into a
    subscript of an array.  Writes into a list or dict the function builds
    (``L[1] = x``, ``d['q'] = x``, ``L += [x]``) do not count: autograd follows
    Python containers."""
    seen = set() if _seen is None else _seen
    seen.add(f.__code__)
    tree = ast.parse(textwrap.dedent(inspect.getsource(f)))
    if _writes_in_place(tree):
        return True
    called = {node.func.id for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    for name in sorted(called):
        helper = f.__globals__.get(name)
        helpers = [m for m in vars(helper).values() if isinstance(m, types.FunctionType)] \
            if isinstance(helper, type) else [helper]
        for helper in helpers:
            if isinstance(helper, types.FunctionType) and helper.__code__ not in seen and \
                    helper.__module__ == f.__module__ and updates_in_place(helper, seen):
                return True
    return False


def _writes_in_place(tree):
    containers = _container_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.AugAssign):
            if not (isinstance(node.target, ast.Name) and node.target.id in containers
                    and isinstance(node.value, ast.List)):
                return True
        targets = node.targets if isinstance(node, ast.Assign) else []
        for t in targets:
            for part in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if isinstance(part, ast.Subscript) and not (
                        isinstance(part.value, ast.Name) and part.value.id in containers):
                    return True
    return False


_DISPLAYS = (ast.List, ast.Dict, ast.ListComp, ast.DictComp)


def _container_names(tree):
    """Names every binding of which is a list or dict display or comprehension
    (or such a display concatenated: ``L + [x]``)."""
    bound = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.For, ast.AnnAssign)) else []
        for t in targets:
            for name in (n for n in ast.walk(t) if isinstance(n, ast.Name) and
                         isinstance(n.ctx, ast.Store)):
                value = node.value if isinstance(node, ast.Assign) and t is name else None
                display = isinstance(value, _DISPLAYS) or (
                    isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and
                    any(isinstance(v, ast.List) for v in (value.left, value.right)))
                if isinstance(node, ast.AugAssign) and isinstance(node.value, ast.List):
                    display = True
                bound[name.id] = bound.get(name.id, True) and display
    return {name for name, ok in bound.items() if ok}
