"""The one registry of adjoint rules, keyed by the primitive's function object.

A NumPy rule is a table row, in the manner of autograd's ``defvjp``::

    defadjoint(np.multiply, "x1, x2",
               x1="unbroadcast(g * x2, x1)",
               x2="unbroadcast(g * x1, x2)")

Each keyword maps one parameter of the primitive to a Python *expression* for
the contribution to that parameter's adjoint.  The compiler inlines the
expression into the generated gradient, so the generated code reads like the
math.  Inside an expression:

- ``g`` is the adjoint of the primitive's output, ``ans`` the output itself;
- every parameter name of the signature stands for the argument the user passed
  (or the default, when the user passed none);
- ``np`` is NumPy, and any other free name is a helper from
  :mod:`tangent_ckpt.runtime` (``unbroadcast``, ...).  Generated code writes it
  as ``rt.unbroadcast``;
- for a *sequence* parameter (``np.concatenate``'s ``arrays``), the expression is
  the contribution to element ``i`` of that sequence, and ``i`` is bound.

A parameter without an expression receives no adjoint (``axis``, ``np.where``'s
condition).  ``defconstant(fn)`` marks a function whose output carries no
derivative at all (``np.zeros_like``, ``np.shape``, ``np.argmax``).

Users add rules for their own functions and black boxes with
:func:`register_adjoint`, giving a callable ``rule(g, ans, *args, **kwargs)`` that
returns one adjoint per positional argument (``None`` where there is none).
"""

import builtins
import inspect

import gast

from tangent_ckpt import runtime

REQUIRED = object()  # marker: the parameter has no default


class AdjointRule:
    """How to differentiate one primitive.

    Exactly one of ``templates`` (NumPy rules, inlined) or ``vjp`` (a user's
    callable, called from the generated code) is used.
    """

    def __init__(self, fn, name, params, templates=None, sequence_params=(),
                 vjp=None, constant=False):
        self.fn = fn
        self.name = name
        self.params = params  # list of (name, default or REQUIRED, kind)
        self.templates = dict(templates or {})
        self.sequence_params = frozenset(sequence_params)
        self.vjp = vjp
        self.constant = constant

    @property
    def param_names(self):
        return [p[0] for p in self.params]

    def differentiable_params(self):
        """Parameter names that receive an adjoint."""
        if self.vjp is not None:
            return [name for name, _, kind in self.params
                    if kind in ("positional", "varargs")]
        return [name for name in self.param_names if name in self.templates]

    def bind(self, args, kwargs):
        """Map the call's arguments (any objects: AST nodes or values) to parameters.

        Returns ``{param_name: argument}`` with defaults filled in; raises
        ``TypeError`` when the call does not fit the signature.  A ``*name``
        parameter collects the remaining positional arguments into a tuple.
        """
        bound = {}
        args = list(args)
        for name, default, kind in self.params:
            if kind == "varargs":
                bound[name] = tuple(args)
                args = []
            elif args and kind != "keyword":
                bound[name] = args.pop(0)
            elif name in kwargs:
                bound[name] = kwargs[name]
            elif default is not REQUIRED:
                bound[name] = default
            else:
                raise TypeError(f"{self.name}() missing argument '{name}'")
        if args:
            raise TypeError(f"{self.name}() takes {len(self.params)} arguments, "
                            f"got {len(self.params) + len(args)}")
        unknown = set(kwargs) - set(self.param_names)
        if unknown:
            raise TypeError(f"{self.name}() got unexpected keyword(s) "
                            f"{', '.join(sorted(unknown))}")
        return bound

    def __repr__(self):
        return f"<AdjointRule {self.name}>"


_RULES = {}


def _parse_signature(signature):
    """Parse ``"a, axis=None, *, keepdims=False"`` into (name, default, kind)."""
    params = []
    keyword_only = False
    for piece in (p.strip() for p in signature.split(",")):
        if not piece:
            continue
        if piece == "*":
            keyword_only = True
            continue
        if piece.startswith("*"):
            params.append((piece[1:], REQUIRED, "varargs"))
            keyword_only = True
            continue
        kind = "keyword" if keyword_only else "positional"
        if "=" in piece:
            name, default = (s.strip() for s in piece.split("=", 1))
            params.append((name, eval(default, {"np": __import__("numpy")}), kind))
        else:
            params.append((piece, REQUIRED, kind))
    return params


def template_free_names(expression):
    """The free names an adjoint expression reads (for checks and for the compiler)."""
    tree = gast.parse(expression, mode="eval")
    return {node.id for node in gast.walk(tree) if isinstance(node, gast.Name)}


def _check_template(name, params, param, expression, sequence):
    allowed = {"g", "ans", "np"} | {p[0] for p in params}
    if sequence:
        allowed.add("i")
    for free in template_free_names(expression):
        if free in allowed or hasattr(builtins, free):
            continue
        if not hasattr(runtime, free):
            raise ValueError(f"adjoint of {name} for '{param}' uses '{free}', "
                             "which is neither a parameter nor a runtime helper")


def defadjoint(fn, signature, *, name=None, sequence=(), **templates):
    """Register the inlined adjoint expressions of a NumPy primitive."""
    name = name or _default_name(fn)
    params = _parse_signature(signature)
    for param, expression in templates.items():
        if param not in {p[0] for p in params}:
            raise ValueError(f"{name}: '{param}' is not in signature '{signature}'")
        _check_template(name, params, param, expression, param in sequence)
    _RULES[_key(fn)] = AdjointRule(fn, name, params, templates, sequence)
    return fn


def defconstant(fn, signature="*args", name=None):
    """Register a function whose output has no derivative (shapes, constructors, indices)."""
    name = name or _default_name(fn)
    _RULES[_key(fn)] = AdjointRule(fn, name, _parse_signature(signature), constant=True)
    return fn


def register_adjoint(fn, rule):
    """Register ``rule`` as the adjoint of ``fn`` (a user function or a black box).

    ``rule(g, ans, *args, **kwargs)`` receives the adjoint of ``fn``'s output,
    the output, and the arguments ``fn`` was called with; it returns a tuple with
    one adjoint per positional argument (``None`` for no gradient; a single
    value is accepted when ``fn`` has one positional argument).  The generated
    gradient calls ``rule`` instead of differentiating ``fn``'s body.

    May be used as a decorator factory: ``@register_adjoint(fn)`` above ``rule``.
    """
    if rule is None:
        return lambda r: register_adjoint(fn, r)
    if not callable(rule):
        raise TypeError("register_adjoint(fn, rule): rule must be callable")
    params = []
    try:
        for p in inspect.signature(fn).parameters.values():
            default = REQUIRED if p.default is inspect.Parameter.empty else p.default
            if p.kind == p.VAR_POSITIONAL:
                params.append((p.name, REQUIRED, "varargs"))
            elif p.kind == p.KEYWORD_ONLY:
                params.append((p.name, default, "keyword"))
            elif p.kind == p.VAR_KEYWORD:
                continue
            else:
                params.append((p.name, default, "positional"))
    except (TypeError, ValueError):
        params = [("args", REQUIRED, "varargs")]
    _RULES[_key(fn)] = AdjointRule(fn, _default_name(fn), params, vjp=rule)
    return rule


def lookup(fn):
    """The rule registered for ``fn``, or ``None``."""
    try:
        return _RULES.get(_key(fn))
    except TypeError:  # unhashable callables have no rule
        return None


def registered_functions():
    """Every function with a rule, for the documentation table and tests."""
    return [rule.fn for rule in _RULES.values()]


def all_rules():
    return list(_RULES.values())


def _key(fn):
    # Bound methods and ufuncs hash by identity; this keeps the key the object.
    return fn


def _default_name(fn):
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", repr(fn))
    if module.startswith("numpy") or isinstance(fn, __import__("numpy").ufunc):
        return f"np.{name}"
    return name


def evaluate(fn, param, g, ans, args, kwargs=None, index=None):
    """Evaluate the adjoint contribution for ``param`` of ``fn`` on real values.

    This is what the inlined code computes; tests use it to check each rule
    against finite differences without going through the compiler.
    """
    rule = lookup(fn)
    if rule is None:
        raise KeyError(f"no adjoint rule for {fn!r}")
    bound = rule.bind(args, kwargs or {})
    if rule.vjp is not None:
        names = rule.param_names
        result = rule.vjp(g, ans, *args, **(kwargs or {}))
        if not isinstance(result, tuple):
            result = (result,)
        return result[names.index(param)]
    expression = rule.templates[param]
    namespace = {name: getattr(runtime, name) for name in dir(runtime)
                 if not name.startswith("_")}
    namespace.update(np=__import__("numpy"), g=g, ans=ans, **bound)
    if index is not None:
        namespace["i"] = index
    return eval(compile(expression, f"<adjoint of {rule.name}>", "eval"), namespace)
