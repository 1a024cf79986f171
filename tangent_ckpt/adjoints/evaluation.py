"""A rule evaluated on real values: what the inlined code computes, without
the compiler.  The tests check each rule against finite differences with
:func:`evaluate` (adjoints) and :func:`evaluate_tangent` (tangents)."""

import ast

import numpy as np

from tangent_ckpt import runtime
from tangent_ckpt.adjoints.registry import lookup
from tangent_ckpt.adjoints.rule_text import guarded_expression, rule_expression

__all__ = ["evaluate", "evaluate_tangent"]


def _compiled(expression, label, guard=None):
    """A rule's expression compiled from its one parsed tree (a singular rule's
    kept 0 where ``guard``, ``g`` or ``t``, is 0, as the compiler writes it)."""
    tree = rule_expression(expression) if guard is None else \
        guarded_expression(expression, guard)
    return compile(ast.Expression(tree), label, "eval")


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
        result = rule.vjp(g, ans, *args, **(kwargs or {}))
        if not isinstance(result, tuple):
            result = (result,)
        position = 0  # the adjoints come one per positional argument, in order
        for name, _, kind in rule.params:
            if name == param:
                return result[position + (index or 0) if kind == "varargs" else position]
            if kind == "positional":
                position += 1
        raise KeyError(f"{rule.name} has no parameter '{param}'")
    expression = rule.templates[param]
    if index is None and param in rule.whole:
        expression = rule.whole[param]
    namespace = {name: getattr(runtime, name) for name in dir(runtime)
                 if not name.startswith("_")}
    namespace.update(np=np, g=g, ans=ans, **bound)
    if index is not None:
        namespace["i"] = index
    guard = "g" if rule.singular else None
    return eval(_compiled(expression, f"<adjoint of {rule.name}>", guard), namespace)


def evaluate_tangent(fn, tangents, ans, args, kwargs=None):
    """The tangent of ``fn``'s output on real values: ``tangents`` maps parameter
    names to their tangents (the others carry none).  What forward mode inlines;
    tests check each rule against finite differences with it."""
    rule = lookup(fn)
    kwargs = dict(kwargs or {})
    bound = rule.bind(args, kwargs)
    if rule.linear:
        # where each parameter came from: a position or a keyword of the call
        where = rule.bind([("arg", k) for k in range(len(args))],
                          {key: ("kw", key) for key in kwargs})

        def call_with(replacements):
            new_args, new_kwargs = list(args), dict(kwargs)
            for param, value in replacements.items():
                place = where[param]
                if isinstance(place, tuple) and place and place[0] == "arg":
                    new_args[place[1]] = value
                elif isinstance(place, tuple) and place and place[0] == "kw":
                    new_kwargs[place[1]] = value
                else:  # a varargs parameter: its items are positions
                    for item, v in zip(place, value):
                        new_args[item[1]] = v
            return fn(*new_args, **new_kwargs)
        if rule.is_joint():
            return call_with({p: tangents.get(p, _zero_like(bound[p]))
                              for p in rule.linear_params()
                              if where.get(p) is not None and where.get(p) != ()
                              and not _is_default(where[p])})
        return sum(call_with({p: t}) for p, t in tangents.items())
    namespace = {name: getattr(runtime, name) for name in dir(runtime)
                 if not name.startswith("_")}
    namespace.update(np=np, ans=ans, **bound)
    total = 0.0
    for param, t in tangents.items():
        guard = "t" if rule.singular else None
        total = total + eval(_compiled(rule.tangents[param], f"<tangent of {rule.name}>",
                                       guard), dict(namespace, t=t))
    return total


def _is_default(place):
    """True when ``bind`` filled the parameter with its default (not a call's place)."""
    return not (isinstance(place, tuple) and place and
                (place[0] in ("arg", "kw") or isinstance(place[0], tuple)))


def _zero_like(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_zero_like(v) for v in value)
    return np.zeros_like(value, dtype=float)
