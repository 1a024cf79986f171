"""Tangents of linear rules (forward mode): the primitive itself applied to tangents.

A rule declared ``linear=`` is linear in its differentiable arguments, so its
tangent is the same call with arguments replaced: jointly linear functions
(``np.add``, ``np.concatenate``) take every tangent in one call, a zero where an
argument has none; functions linear in each argument on its own (``np.dot``,
``np.outer``) give one call per argument that has a tangent, summed by the caller.

``tangent_of(op)`` gives the tangent node of an operand, or None when it is zero.
"""

import ast

import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.ir import operand_node, prim_node


def joint_tangent(stmt, prim, rule, tangent_of):
    """Linear in all its differentiable arguments together: one call with every
    one replaced by its tangent, a zero where it has none."""
    tangents = [tangent_of(a) for a in prim.args]
    if prim.fn in (np.add, np.subtract) and all(
            (t is None or a.id in stmt.same_shape) if isinstance(a, ir.Name)
            else not ir.operand_names(a) for a, t in zip(prim.args, tangents)):
        left, right = tangents
        if right is None:
            return left
        if left is None:
            return right if prim.fn is np.add else sx.neg(right)
        return sx.binop(left, "+" if prim.fn is np.add else "-", right)

    def replace(place, op):
        tangent = tangent_of(op)
        if tangent is not None:
            return tangent
        return sx.call("np.zeros_like", operand_node(op))
    return call_with(prim, rule, replace)


def each_linear_tangent(prim, rule, tangent_of):
    """Linear in each differentiable argument on its own: one call per argument
    with a tangent, that argument replaced by it."""
    terms = []
    for p, k, op in linear_places(prim, rule):
        if tangent_of(op) is None:
            continue
        terms.append(call_with(
            prim, rule, lambda place, o, here=(p, k): tangent_of(o) if place == here else None))
    return terms


def linear_places(prim, rule):
    """Where the differentiable parameters' operands are in the call: a list of
    (("arg", k) or ("kw", key), item index in a literal sequence or None, operand)."""
    # {parameter: ("arg", k) / ("kw", key), or a tuple of them for a *args parameter}
    where = rule.bind([("arg", k) for k in range(len(prim.args))],
                      {key: ("kw", key) for key in prim.kwargs})
    places = []
    for param in rule.linear_params():
        place = where.get(param)
        for p in (place if isinstance(place, tuple) and place and
                  isinstance(place[0], tuple) else (place,)):
            if not (isinstance(p, tuple) and len(p) == 2 and p[0] in ("arg", "kw")):
                continue  # a default: the user passed nothing
            op = prim.args[p[1]] if p[0] == "arg" else prim.kwargs[p[1]]
            if isinstance(op, ir.Seq):
                places += [(p, k, item) for k, item in enumerate(op.items)]
            else:
                places.append((p, None, op))
    return places


def call_with(prim, rule, replace):
    """The primitive applied with some operands replaced: ``replace(place, op)``
    gives a node, or None to keep the operand (``place`` as :func:`linear_places`)."""
    args = [operand_node(a) for a in prim.args]
    kwargs = {k: operand_node(v) for k, v in prim.kwargs.items()}
    seqs = {}
    for p, k, op in linear_places(prim, rule):
        node = replace((p, k), op)
        if k is not None:
            seqs.setdefault(p, {})[k] = node
        elif node is not None:
            if p[0] == "arg":
                args[p[1]] = node
            else:
                kwargs[p[1]] = node
    for p, items in seqs.items():
        seq = prim.args[p[1]] if p[0] == "arg" else prim.kwargs[p[1]]
        if all(node is None for node in items.values()):
            continue
        nodes = [items.get(k) or operand_node(item) for k, item in enumerate(seq.items)]
        node = sx.tuple_(nodes) if seq.kind == "tuple" else \
            ast.List(elts=nodes, ctx=ast.Load())
        if p[0] == "arg":
            args[p[1]] = node
        else:
            kwargs[p[1]] = node
    return prim_node(prim, args, kwargs)
