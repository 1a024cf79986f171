"""A rule's declaration, read: its signature into parameters and its
expressions into syntax trees, each text parsed once, here.

``parse_signature("a, /, axis=None, *, keepdims=False")`` gives the parameters
as ``(name, default or REQUIRED, kind)``; ``rule_expression("g * (1 - ans *
ans)")`` the expression's tree (stdlib ``ast``, as generated code is), shared by
the registry's checks, the transform and the tests' evaluation.
"""

import ast
import builtins
import functools

import numpy as np

from tangent_ckpt import runtime

__all__ = ["REQUIRED", "parse_signature", "positional_only", "rule_expression",
           "guarded_expression", "template_free_names", "check_expression"]

REQUIRED = object()  # marker: the parameter has no default


def parse_signature(signature):
    """Parse ``"a, /, axis=None, *, keepdims=False"`` into (name, default, kind).

    The text is parsed as a Python parameter list, so defaults may contain
    commas (``axes=(0, 1)``) and read ``np``.  Kinds: ``"positional"`` (also
    positional-only, see :func:`positional_only`), ``"keyword"`` (after ``*``),
    ``"varargs"`` (``*name``) and ``"varkeywords"`` (``**name``).
    """
    args = _signature_args(signature)
    params = []
    positional = args.posonlyargs + args.args
    defaults = [REQUIRED] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for arg, default in zip(positional, defaults):
        params.append((arg.arg, _eval_default(default), "positional"))
    if args.vararg is not None:
        params.append((args.vararg.arg, REQUIRED, "varargs"))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        params.append((arg.arg, REQUIRED if default is None else _eval_default(default),
                       "keyword"))
    if args.kwarg is not None:
        params.append((args.kwarg.arg, REQUIRED, "varkeywords"))
    names = [p[0] for p in params]
    if len(set(names)) != len(names):
        raise ValueError(f"bad signature {signature!r}: duplicate parameter name")
    return params


def _signature_args(signature):
    try:
        tree = ast.parse(f"def _f({signature}): pass")
    except SyntaxError as err:
        raise ValueError(f"bad signature {signature!r}: {err.msg}") from None
    return tree.body[0].args


def positional_only(signature):
    return frozenset(arg.arg for arg in _signature_args(signature).posonlyargs)


def _eval_default(node):
    if node is REQUIRED:
        return REQUIRED
    return eval(compile(ast.Expression(node), "<signature>", "eval"),
                {"np": np})


@functools.lru_cache(maxsize=None)
def rule_expression(expression):
    """The syntax tree of a rule's expression (an adjoint or a tangent), parsed
    here once for every reader: the checks below, the transform, which
    instantiates a copy for each call (``compiler/transform/rules.py``), and the
    tests' evaluation (:mod:`.evaluation`).  A stdlib ``ast`` tree, as generated
    code is; shared, so readers copy before changing it."""
    return ast.parse(expression, mode="eval").body


@functools.lru_cache(maxsize=None)
def guarded_expression(expression, zero):
    """The tree of a singular rule's expression with its product kept 0 where
    ``zero`` (``g`` for an adjoint, ``t`` for a tangent) is 0:
    ``unbroadcast(g / x2, x1)`` -> ``unbroadcast(where_nonzero(g, g / x2), x1)``.
    ``g`` or ``-g`` alone, and a helper's call (which guards itself: see
    ``rt.power_adjoint_base``), stay as they are."""
    tree = rule_expression(expression)
    outer = None
    if isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and \
            tree.func.id == "unbroadcast" and tree.args:
        outer, tree = tree, tree.args[0]
    if _plain(tree, zero) or _helper_call(tree):
        return rule_expression(expression)
    guarded = ast.Call(func=ast.Name(id="where_nonzero", ctx=ast.Load()),
                       args=[ast.Name(id=zero, ctx=ast.Load()), tree], keywords=[])
    if outer is not None:
        guarded = ast.Call(func=outer.func, args=[guarded, *outer.args[1:]],
                           keywords=outer.keywords)
    return ast.fix_missing_locations(guarded)


def _plain(tree, zero):
    if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.USub):
        tree = tree.operand
    return isinstance(tree, ast.Name) and tree.id == zero


def _helper_call(tree):
    return isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and \
        hasattr(runtime, tree.func.id)


def template_free_names(expression):
    """The free names an adjoint expression reads (for checks and for the compiler)."""
    return {node.id for node in ast.walk(rule_expression(expression))
            if isinstance(node, ast.Name)}


def check_expression(name, params, param, expression, sequence):
    """Refuse an expression reading a name that is neither a parameter, ``g``,
    ``ans``, ``np`` (``i`` for a sequence item), a builtin nor a runtime helper."""
    allowed = {"g", "ans", "np"} | {p[0] for p in params}
    if sequence:
        allowed.add("i")
    for free in template_free_names(expression):
        if free in allowed or hasattr(builtins, free):
            continue
        if not hasattr(runtime, free):
            raise ValueError(f"adjoint of {name} for '{param}' uses '{free}', "
                             "which is neither a parameter nor a runtime helper")
