"""Models written as users write them (examples/models.py): a residual MLP with
tc.checkpoint per block, an attention block in checkpoint scopes, an LSTM with
its time loop checkpointed.  SGD with and without checkpointing gives the same
parameters (1e-12); the checkpointed gradients agree with finite differences."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from examples import models  # noqa: E402
from gradcheck import numeric_grad  # noqa: E402

PROBLEMS = models.problems(np.random.default_rng(0))


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p[0] for p in PROBLEMS])
def test_sgd_same_parameters(problem):
    name, plain, ckpt, before, params, after, options = problem
    want = models.sgd(plain, before, params, after)
    got = models.sgd(ckpt, before, params, after, **options)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert any(np.max(abs(w - p)) > 1e-6 for w, p in zip(want, params))  # it did train


@pytest.mark.parametrize("problem", PROBLEMS, ids=[p[0] for p in PROBLEMS])
def test_checkpointed_gradient_vs_finite_differences(problem):
    rng = np.random.default_rng(1)
    name, plain, ckpt, before, params, after, options = problem
    # small copies: FD costs one loss per entry
    params = [p[..., :3, :3] if p.ndim >= 2 else p[:3] for p in params] \
        if name == "attention block" else params
    if name == "attention block":
        before = [before[0][:5, :3]]
        after = [after[0][:5, :3]]
    elif name == "residual MLP":
        params = [params[0][:2, :4, :4], params[1][:2, :4]]
        before, after = [before[0][:3, :4]], [after[0][:3, :4]]
    else:
        before = [before[0][:4, :2, :3]]
        params = [rng.standard_normal((3, 8)) * 0.5, rng.standard_normal((2, 8)) * 0.5,
                  rng.standard_normal(8) * 0.1, rng.standard_normal((2, 2))]
        after = [after[0][:2, :2]]
    df = models.gradient(ckpt, before, params, after, **options)
    got = df(*before, *params, *after)
    wrt = tuple(range(len(before), len(before) + len(params)))
    want = numeric_grad(ckpt, before + params + after, wrt)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_generated_code_names_the_checkpoints():
    name, plain, ckpt, before, params, after, options = PROBLEMS[1]
    src = models.gradient(ckpt, before, params, after).source
    assert "scope_attention1_adjoint" in src and "scope_attention2_adjoint" in src
