"""package/loop_plans.py: which loops are checkpointed, and how, decided from the
options before the transform and handed to it as plain ``ir.LoopPlan`` data."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.desugar.passes import desugar
from tangent_ckpt.compiler.lower.normalize import normalize
from tangent_ckpt.compiler.package.loop_plans import plan_loops
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.errors import OptionError
from tangent_ckpt.options import CheckpointOptions

from gradcheck import check_grad


def two_levels(x, W, n, m):
    for i in range(n):
        for j in range(m):
            x = np.tanh(x @ W)
    return np.sum(x)


def marked_outer(x, W, n):
    x, _ = tc.checkpointed_loop(np.tanh, x, n, 2)
    for i in range(n):
        x = x * 1.5
    return np.sum(x)


def rows(x, n):
    S = np.zeros((n, x.shape[0]))
    for t in range(n):
        x = np.sin(x)
        S[t] = x
    return np.sum(S) + t


def _loops(fn):
    parsed = parse_function(fn)
    desugar(parsed)  # (tc.checkpointed_loop is written as its loop there)
    function = normalize(parsed)[0]
    loops = [s for s in ir.walk(function.body) if isinstance(s, (ir.For, ir.While))]
    return function, loops


def test_checkpoint_true_plans_the_outermost_loops_and_nested_all():
    function, (outer, inner) = _loops(two_levels)
    assert set(plan_loops(function, CheckpointOptions(checkpoint=True))) == {id(outer)}
    assert set(plan_loops(function, CheckpointOptions(checkpoint=True, nested=True))) == \
        {id(outer), id(inner)}


def test_without_checkpoint_only_the_marked_loops_are_planned():
    function, loops = _loops(marked_outer)
    marked = [loop for loop in loops if loop.checkpoint]
    assert len(marked) == 1 and len(loops) == 2
    assert set(plan_loops(function, CheckpointOptions())) == {id(marked[0])}


def test_planning_leaves_the_loops_marks_as_the_lowering_set_them():
    function, loops = _loops(two_levels)
    before = [loop.checkpoint for loop in loops]
    plan_loops(function, CheckpointOptions(checkpoint=True))
    plan_loops(function, CheckpointOptions(checkpoint=True, nested=True))
    assert [loop.checkpoint for loop in loops] == before


def test_a_plan_holds_the_facts_the_transform_needs():
    function, (loop,) = _loops(rows)
    (plan,) = plan_loops(function, CheckpointOptions(checkpoint=True, snapshots=2)).values()
    assert plan.carried == ["x", "S"]
    assert plan.target_read_after  # `+ t` reads the loop variable after the loop
    assert plan.journal == ["S"]  # one row per step: written in place, journaled
    assert not plan.taped_segment
    (budget,) = plan_loops(function, CheckpointOptions(checkpoint=True,
                                                       memory_budget="1MB")).values()
    assert budget.journal == [] and budget.taped_segment


def test_options_acting_on_no_loop_are_refused_before_the_transform():
    function, _ = _loops(two_levels)
    with pytest.raises(OptionError, match="snapshots="):
        plan_loops(function, CheckpointOptions(snapshots=3))


@pytest.mark.parametrize("options", [dict(snapshots=2), dict(nested=True, snapshots=2),
                                     dict(memory_budget="1MB")])
def test_planned_loops_give_the_taped_gradient(options):
    rng = np.random.default_rng(0)
    x, W = rng.standard_normal(3), 0.5 * rng.standard_normal((3, 3))
    taped = tc.grad(two_levels, wrt=(0, 1))(x, W, 4, 3)
    checkpointed = tc.grad(two_levels, wrt=(0, 1), checkpoint=True, **options)(x, W, 4, 3)
    for a, b in zip(checkpointed, taped):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    check_grad(two_levels, (x, W, 4, 3), wrt=(0, 1))
