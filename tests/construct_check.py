"""Test helper for the language constructs (closures, classes, *args, observers,
generators): one call checks a function's gradient three ways.

    from construct_check import check_construct
    check_construct(f, (x, W), wrt=(0, 1))

- against central finite differences in random directions (gradcheck.check_grad,
  with a random output seed),
- against autograd running the same code, where autograd is installed and runs it,
- taped against checkpointed (``checkpoint=True, snapshots=2``): the same
  floating-point operations, so equal to rounding.
"""

import numpy as np

import tangent_ckpt as tc
from autograd_oracle import anp, autograd_gradient
from gradcheck import check_grad


def check_construct(f, args, wrt=(0,), autograd=True, seed=0):
    wrt = tuple(wrt)
    rng = np.random.default_rng(seed)
    out = np.asarray(f(*args))
    weight = rng.standard_normal(out.shape) if out.shape else float(rng.standard_normal())
    taped = check_grad(f, args, wrt=wrt, seed=weight)
    checkpointed = tc.grad(f, wrt=wrt, checkpoint=True, snapshots=2)(*args, weight)
    for a, b in zip(taped, checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
    if autograd:
        expected = autograd_weighted(f, args, wrt, weight)
        if expected is not None:
            for a, e in zip(taped, expected):
                np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-12)
    return taped


def autograd_weighted(f, args, wrt, weight):
    """autograd's gradient of ``sum(weight * f(*args))``: ``f``'s module runs with
    ``np`` bound to ``autograd.numpy`` (so its helpers, closures and methods do
    too); None where autograd is missing or cannot run the code."""
    if anp is None:
        return None
    module = f.__globals__

    def weighted(*xs):
        return anp.sum(f(*xs) * weight)
    saved = module["np"]
    module["np"] = anp
    try:
        return autograd_gradient(weighted, args, wrt)
    finally:
        module["np"] = saved
