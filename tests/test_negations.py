"""package/negations.py: a negation the adjoint makes and reads once, on the
next line, moves into that line, and an accumulation subtracts it; a negation
read twice, read later, or made by the primal stays."""

import ast

import numpy as np

import tangent_ckpt as tc
from gradcheck import check_grad
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.package.negations import fold_negations


def _function(*lines, adjoint=True):
    body = [Line(ast.parse(text).body[0], None, adjoint) for text in lines]
    return Block(sx.def_("f", ["g", "b", "x"]), body)


def _text(block):
    return [ast.unparse(item.stmt) for item in block.body]


def test_a_single_use_negation_reaches_the_accumulation_and_is_subtracted():
    block = fold_negations(_function("t = -g", "s = t * 2.0", "b[1:] += s", "x = b + x"))
    assert _text(block) == ["b[1:] -= g * 2.0", "x = b + x"]
    block = fold_negations(_function("t = -g * x", "b = b + t", "return b"))
    assert _text(block) == ["b = b - g * x", "return b"]


def test_a_name_target_keeps_its_addition():
    # ``b += x`` may add to an rt.ProductSum, which has no ``-=``
    block = fold_negations(_function("t = -g", "b += t", "return b"))
    assert _text(block) == ["b += -g", "return b"]


def test_what_is_read_twice_later_or_in_the_primal_stays():
    twice = ["t = -g", "b[1:] += t", "x = t + x"]
    assert _text(fold_negations(_function(*twice))) == twice
    later = ["t = -g", "b[0] = 0.0", "b[1:] += t"]
    assert _text(fold_negations(_function(*later))) == later
    primal = ["t = -g", "b[1:] += t"]
    assert _text(fold_negations(_function(*primal, adjoint=False))) == primal


def heat(u0, k, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def test_the_heat_step_subtracts_and_keeps_its_gradient():
    rng = np.random.default_rng(3)
    u0, k = rng.normal(size=10), 0.2 + 0.05 * rng.random(10)
    for options in ({}, dict(checkpoint=True, snapshots=2)):
        df = tc.grad(heat, wrt=(0, 1), **options)
        check_grad(heat, (u0, k, 5), wrt=(0, 1), df=df)
        assert "bu[1:-1] -= bu_sub * 2.0" in df.source and "bu_mul = " not in df.source
