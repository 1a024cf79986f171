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

A parameter without an expression receives no adjoint; the compiler refuses a
call that passes it a differentiated value (``np.sum(x, initial=y)``), unless
the row names it in ``piecewise=`` (the output is locally constant in it:
``np.where``'s condition).  ``defconstant(fn)`` marks a function whose output
carries no derivative at all (``np.zeros_like``, ``np.shape``, ``np.argmax``).

The same row says what else the compiler and the tests need to know:

- ``methods="sum"``: array methods that mean this function (``x.sum(axis=0)``
  is ``np.sum(x, axis=0)``); ``varargs_methods="reshape"`` also take their
  tuple argument spread out (``x.reshape(2, 3)``).  Every method of a rule
  returns a new value (in-place methods are never rules).
- ``domain="positive"``: where the tests draw inputs from (see ``DOMAINS``).
- ``singular=True``: the derivative is infinite or NaN somewhere (``sqrt``
  and ``log`` at 0, ``arcsin`` at 1, a division by 0): each elementwise
  expression ``e`` becomes ``where_nonzero(g, e)`` (inside ``unbroadcast``;
  ``where_nonzero(t, e)`` for a tangent), so that an adjoint that is exactly 0
  (a mask, ``np.where`` or ``np.triu`` discarded the value) stays 0 instead of
  ``0 * inf = nan``; where ``g`` is not 0 the singularity stays.  A callable
  receives the call's constant arguments by name and says whether this call
  needs it (``x / 2.0`` does not).  Helpers called by an expression guard
  themselves.
- ``only={"mode": ("reduced",)}``: the values a parameter may take for the
  expressions to be right; the compiler refuses a call with any other value
  (or one it cannot see at compile time).
- a sequence parameter's expression may be a pair ``(item, whole)``: ``whole``
  is the adjoint when the user passes one array instead of a list
  (``np.vstack(x)``); without it the compiler stacks the items' adjoints.

Users add rules for their own functions and black boxes with
:func:`register_adjoint`, giving a callable ``rule(g, ans, *args, **kwargs)`` that
returns one adjoint per positional argument (``None`` where there is none).

Forward mode (tangents, ``tc.jvp``) reads the same row.  ``tangent=`` gives, for
each differentiable parameter, the contribution of its tangent ``t`` to the
tangent of the output, as an expression of ``t``, ``ans`` and the parameters
(a plain string when the row has one differentiable parameter)::

    defadjoint(np.tanh, UNARY, x="g * (1.0 - ans * ans)", tangent="t * (1.0 - ans * ans)")

``linear=True`` says the function is linear in each differentiable parameter
on its own (``np.matmul``, ``np.reshape``, ``x[i]``): the contribution of a
parameter is the function applied with its tangent in its place.
``linear="joint"`` says it is linear in all of them together (``np.add``,
``np.concatenate``): the output's tangent is one call with every
differentiable argument replaced by its tangent (a zero where it has none);
a tuple of parameter names is "joint" over those (``np.diff`` is linear in
``a``, ``prepend`` and ``append`` together, and the last two are constants).
Where the formula depends on a constant argument (``np.linalg.norm``'s ``ord``
and ``axis``), the tangent is a callable: it receives the call's constant
arguments by name and returns the expression, or None where none is written
(forward mode refuses that call, naming its arguments).
Tangent expressions use only functions that have adjoint rules themselves, so
that a tangent-linear program can be differentiated again (``tc.hvp``).
Users give tangents of their functions with :func:`register_tangent`.
"""

import inspect

import numpy as np

from tangent_ckpt.adjoints.rule_text import (REQUIRED, check_expression, parse_signature,
                                             positional_only)

#: input domains the tests draw a rule's arguments from: (low, high, sign)
#: where sign "both" mirrors the interval to negative values too
DOMAINS = {
    "real": (-2.0, 2.0, "plus"),
    "positive": (0.5, 2.0, "plus"),
    "unit": (-0.9, 0.9, "plus"),         # |x| < 1 (arcsin, arctanh)
    "above_one": (1.2, 3.0, "plus"),     # x > 1 (arccosh)
    "nonzero": (0.5, 2.0, "both"),       # away from a pole or a kink at 0
}


class AdjointRule:
    """How to differentiate one primitive.

    Exactly one of ``templates`` (NumPy rules, inlined) or ``vjp`` (a user's
    callable, called from the generated code) is used.
    """

    def __init__(self, fn, name, params, templates=None, sequence_params=(),
                 vjp=None, constant=False, positional_only=(), piecewise=(),
                 domain="real", whole=None, only=None, tangents=None, linear=False,
                 singular=False):
        self.fn = fn
        self.name = name
        self.params = params  # list of (name, default or REQUIRED, kind)
        self.templates = dict(templates or {})
        self.sequence_params = frozenset(sequence_params)
        self.whole = dict(whole or {})  # sequence param -> expression for one array
        self.vjp = vjp
        self.constant = constant
        self.positional_only = frozenset(positional_only)  # names not passable by keyword
        self.piecewise = frozenset(piecewise)  # no adjoint, and none is lost
        self.domain = domain
        self.only = dict(only or {})  # param -> the values the rule is right for
        self.tangents = dict(tangents or {})  # param -> its tangent's contribution (forward)
        self.linear = linear  # False, True (in each parameter) or "joint" (in all together)
        self.jvp = None  # a user's tangent callable (register_tangent)
        self.singular = singular  # False, True or a callable: see singular_for

    def singular_for(self, known):
        """True when the call needs its adjoints and tangents kept 0 where ``g``
        (``t``) is 0 (``rt.where_nonzero``): the row's derivative is infinite or
        NaN somewhere (``sqrt`` at 0).  ``known``: the call's constant arguments
        by name; a callable ``singular=`` decides from them (``x / 2.0`` is regular)."""
        if callable(self.singular):
            return bool(self.singular(**known))
        return bool(self.singular)

    def linear_params(self):
        """The parameters a linear rule replaces by their tangents."""
        return self.linear if isinstance(self.linear, tuple) else tuple(self.templates)

    def is_joint(self):
        return self.linear == "joint" or isinstance(self.linear, tuple)

    def has_tangent(self):
        """True when forward mode can differentiate the primitive."""
        if self.vjp is not None:  # a user's rule: needs the user's tangent too
            return self.jvp is not None
        return self.constant or self.jvp is not None or bool(self.linear) or \
            set(self.tangents) >= set(self.templates)

    @property
    def param_names(self):
        return [p[0] for p in self.params]

    def static_params(self):
        """Parameters that must not receive a differentiated value: the rule
        has no adjoint for them, and the output is not locally constant in them."""
        if self.vjp is not None or self.constant:
            return []
        return [name for name in self.param_names
                if name not in self.templates and name not in self.piecewise]

    def differentiable_params(self):
        """Parameter names that receive an adjoint."""
        if self.vjp is not None:
            return [name for name, _, kind in self.params
                    if kind in ("positional", "varargs")]
        return [name for name in self.param_names if name in self.templates]

    def bind(self, args, kwargs=None):
        """Map the call's arguments (any objects: AST nodes or values) to parameters.

        Returns ``{param_name: argument}`` with defaults filled in; raises
        ``TypeError`` when the call does not fit the signature.  A ``*name``
        parameter collects the remaining positional arguments into a tuple.
        """
        bound = {}
        args = list(args)
        kwargs = dict(kwargs or {})
        names = self.param_names
        for name, default, kind in self.params:
            if kind == "varargs":
                bound[name] = tuple(args)
                args = []
            elif kind == "varkeywords":
                bound[name] = {k: kwargs.pop(k) for k in list(kwargs) if k not in names}
            elif args and kind == "positional":
                if name in kwargs and name not in self.positional_only:
                    raise TypeError(f"{self.name}() got multiple values for argument '{name}'")
                bound[name] = args.pop(0)
            elif name in kwargs and name not in self.positional_only:
                bound[name] = kwargs.pop(name)
            elif default is not REQUIRED:
                bound[name] = default
            else:
                raise TypeError(f"{self.name}() missing argument '{name}'")
        if args:
            npos = sum(kind == "positional" for _, _, kind in self.params)
            raise TypeError(f"{self.name}() takes at most {npos} positional arguments, "
                            f"got {npos + len(args)}")
        if kwargs:
            raise TypeError(f"{self.name}() got unexpected keyword(s) "
                            f"{', '.join(sorted(kwargs))}")
        return bound

    def __repr__(self):
        return f"<AdjointRule {self.name}>"


_RULES = {}
_METHODS = {}           # array method name -> the function it means
_VARARGS_METHODS = set()  # methods whose tuple argument may be spread: x.reshape(2, 3)
_PURE_METHODS = set()   # methods known to return a new value and change nothing


def defadjoint(fn, signature, *, name=None, sequence=(), piecewise=(), methods=(),
               varargs_methods=(), domain="real", only=None, tangent=None, linear=False,
               singular=False, **templates):
    """Register the inlined adjoint expressions of a NumPy primitive, and its
    tangent (``tangent=`` or ``linear=``; see the module docstring).  ``fn`` None
    (a function the running NumPy lacks, ``numpy_versions``) registers nothing."""
    if fn is None:
        return None
    name = name or _default_name(fn)
    params = parse_signature(signature)
    names = {p[0] for p in params}
    for param in (*sequence, *piecewise, *(only or {})):
        if param not in names:
            raise ValueError(f"{name}: parameter '{param}' is not in signature '{signature}'")
    if not (singular in (False, True) or callable(singular)):
        raise ValueError(f"{name}: singular= is True, False or a callable")
    if domain not in DOMAINS:
        raise ValueError(f"{name}: unknown domain {domain!r}; one of {sorted(DOMAINS)}")
    whole = {}
    for param, expression in list(templates.items()):
        if param not in names:
            raise ValueError(f"{name}: '{param}' is not in signature '{signature}'")
        if isinstance(expression, tuple):
            if param not in sequence:
                raise ValueError(f"{name}: only a sequence parameter takes (item, whole)")
            templates[param], whole[param] = expression
            check_expression(name, params, param, whole[param], False)
        check_expression(name, params, param, templates[param], param in sequence)
    tangents = _tangent_templates(name, params, templates, tangent)
    _RULES[_key(fn)] = AdjointRule(fn, name, params, templates, sequence,
                                   positional_only=positional_only(signature),
                                   piecewise=piecewise, domain=domain, whole=whole,
                                   only=only, tangents=tangents, linear=linear,
                                   singular=singular)
    _declare_methods(fn, methods, varargs_methods)
    return fn


def _tangent_templates(name, params, templates, tangent):
    """``tangent=`` as ``{param: expression}``; a string is the one differentiable
    parameter's.  Its free names are checked like an adjoint's (``t`` for ``g``)."""
    if tangent is None:
        return {}
    if isinstance(tangent, str) or callable(tangent):
        if len(templates) != 1:
            raise ValueError(f"{name}: tangent= as one expression needs exactly one "
                             "differentiable parameter; give a dict")
        tangent = {next(iter(templates)): tangent}
    for param, expression in tangent.items():
        if param not in templates:
            raise ValueError(f"{name}: tangent for '{param}', which has no adjoint")
        if callable(expression):
            continue  # the expression it chooses is checked when forward mode reads it
        check_expression(name, params + [("t", REQUIRED, "positional")], param, expression,
                        False)
    return dict(tangent)


def defconstant(fn, signature="*args", name=None, methods=()):
    """Register a function whose output has no derivative (shapes, constructors, indices)."""
    name = name or _default_name(fn)
    _RULES[_key(fn)] = AdjointRule(fn, name, parse_signature(signature), constant=True,
                                   positional_only=positional_only(signature))
    _declare_methods(fn, methods, ())
    return fn


def _names(spec):
    return spec.split() if isinstance(spec, str) else list(spec)


def _declare_methods(fn, methods, varargs_methods):
    for method in _names(methods) + _names(varargs_methods):
        _METHODS[method] = fn
        _PURE_METHODS.add(method)
    _VARARGS_METHODS.update(_names(varargs_methods))


def defpure(*methods):
    """Declare array methods that return a new value without being rules
    (``x.astype(float)``): generated code may drop them when unread."""
    _PURE_METHODS.update(methods)


def methods():
    """``{method name: function}``: ``x.sum(...)`` means ``np.sum(x, ...)``."""
    return _METHODS


def varargs_methods():
    """Methods whose one tuple argument may be spread: ``x.reshape(2, 3)``."""
    return _VARARGS_METHODS


def pure_methods():
    """Names of array methods that return a new value and change nothing."""
    return _PURE_METHODS


def register_adjoint(fn, rule=None):
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
    positional_only = []
    try:
        for p in inspect.signature(fn).parameters.values():
            default = REQUIRED if p.default is inspect.Parameter.empty else p.default
            if p.kind == p.VAR_POSITIONAL:
                params.append((p.name, REQUIRED, "varargs"))
            elif p.kind == p.KEYWORD_ONLY:
                params.append((p.name, default, "keyword"))
            elif p.kind == p.VAR_KEYWORD:
                params.append((p.name, REQUIRED, "varkeywords"))
            else:
                params.append((p.name, default, "positional"))
                if p.kind == p.POSITIONAL_ONLY:
                    positional_only.append(p.name)
    except (TypeError, ValueError):
        params = [("args", REQUIRED, "varargs"), ("kwargs", REQUIRED, "varkeywords")]
    _RULES[_key(fn)] = AdjointRule(fn, _default_name(fn), params, vjp=rule,
                                   positional_only=positional_only)
    return rule


def register_tangent(fn, rule=None):
    """Register ``rule`` as the tangent (forward-mode derivative) of ``fn``.

    ``rule(tangents, ans, *args, **kwargs)`` receives a tuple with the tangent
    of each positional argument (``None`` where the argument carries none), the
    output and the arguments; it returns the tangent of the output.  ``fn``
    needs an adjoint first (:func:`register_adjoint`): the rule is kept beside
    it, and ``tc.hvp`` differentiates the tangent code with that adjoint.

    May be used as a decorator factory: ``@register_tangent(fn)`` above ``rule``.
    """
    if rule is None:
        return lambda r: register_tangent(fn, r)
    if not callable(rule):
        raise TypeError("register_tangent(fn, rule): rule must be callable")
    existing = lookup(fn)
    if existing is None:
        raise ValueError(f"register_tangent({_default_name(fn)}): register its adjoint first "
                         "with tangent_ckpt.register_adjoint (the tangent is kept beside it)")
    existing.jvp = rule
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
    if module.startswith("numpy") or isinstance(fn, np.ufunc):
        return f"np.{name}"
    return name
