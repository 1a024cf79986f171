"""What the guard of singular rules costs: an n-body loop's gradient with and without it.

    python benchmarks/singular_guard.py               # 64 and 256 bodies, 100 steps
    python benchmarks/singular_guard.py --quick       # a smoke test
    python benchmarks/singular_guard.py --bodies 32 --steps 400 --repeat 9

Rules whose derivative is infinite somewhere (``sqrt``, ``log``, division...: the
``singular=`` rows of ``tangent_ckpt/adjoints/numpy_rules.py``) compute each
adjoint product ``e`` as ``rt.where_nonzero(g, e)``: 0 where ``g`` is 0, so that a
value a mask discards (the pair diagonal, where ``r = 0``) contributes 0 instead of
``0 * inf = nan``.  The helper returns ``e`` itself unless it holds a NaN (one
sum), and mends it with ``np.where`` when it does.

Two n-body steps (``d = x_i - x_j``, ``r = sqrt(sum d**2)``, accelerations from
``1 / r**3``, symplectic Euler), loss = kinetic + potential energy at the end,
gradient w.r.t. the initial positions and velocities:

* ``softened``: ``r = sqrt(d2 + eps**2)`` never 0: the guards find no NaN (the
  fast path: the cost of the check alone).
* ``masked``: ``r = sqrt(d2)`` with the diagonal's ``1 / r`` discarded by
  ``np.where(r > 0, ...)``: every guard on the pair matrix mends a NaN each step
  (without the guard the gradient is NaN).

Every row is measured in the same process (median of ``--repeat`` rounds after
five warm-up calls, each round timing every method once; BLAS on one thread).  "without
guard" compiles the same function with every rule's ``singular`` flag off (what
the compiler generated before the guard existed); ``guard / none`` is the ratio.
"""

import argparse
import os
import statistics
import sys
import types
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402
from tangent_ckpt.adjoints import registry  # noqa: E402


def softened(x, v, n):
    for t in range(n):
        d = x[:, None, :] - x[None, :, :]
        r = np.sqrt(np.sum(d * d, axis=-1) + 0.01)
        a = -np.sum(d / (r ** 3)[:, :, None], axis=1)
        v = v + 0.001 * a
        x = x + 0.001 * v
    d = x[:, None, :] - x[None, :, :]
    return 0.5 * np.sum(v * v) - np.sum(np.triu(1.0 / np.sqrt(np.sum(d * d, axis=-1) + 0.01), 1))


def masked(x, v, n):
    for t in range(n):
        d = x[:, None, :] - x[None, :, :]
        r = np.sqrt(np.sum(d * d, axis=-1))
        inv = np.where(r > 0, 1.0 / r, 0.0)
        a = -np.sum(d * (inv * inv * inv)[:, :, None], axis=1)
        v = v + 0.001 * a
        x = x + 0.001 * v
    d = x[:, None, :] - x[None, :, :]
    return 0.5 * np.sum(v * v) - np.sum(np.triu(1.0 / np.sqrt(np.sum(d * d, axis=-1)), 1))


def _twin(fn):
    """A second function object with ``fn``'s code: the compiler caches per function
    object, so it compiles the twin afresh."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__)


def unguarded_gradient(fn, **options):
    """``tc.grad`` of ``fn`` compiled with every rule's guard off, as before it existed."""
    saved = {rule: rule.singular for rule in registry.all_rules() if rule.singular}
    try:
        for rule in saved:
            rule.singular = False
        df = tc.grad(_twin(fn), **options)
        df(*ARGS[fn])   # compile now, while the flags are off
    finally:
        for rule, flag in saved.items():
            rule.singular = flag
    return df


ARGS = {}


def inputs(bodies, steps):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((bodies, 3)), 0.1 * rng.standard_normal((bodies, 3)), steps)


def measure(bodies, steps, repeat):
    rows = []
    for fn in (softened, masked):
        ARGS[fn] = inputs(bodies, steps)
        for label, options in (("taped", {}), ("checkpointed", {"checkpoint": True,
                                                                 "snapshots": 10})):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                guarded = tc.grad(_twin(fn), wrt=(0, 1), **options)
                plain = unguarded_gradient(fn, wrt=(0, 1), **options)
                methods = {"forward": lambda: fn(*ARGS[fn]),
                           "without guard": lambda: plain(*ARGS[fn]),
                           "with guard": lambda: guarded(*ARGS[fn])}
                finite = [bool(np.all(np.isfinite(g))) for g in guarded(*ARGS[fn])]
                unfinite = [bool(np.all(np.isfinite(g))) for g in plain(*ARGS[fn])]
                times = {name: [] for name in methods}
                for call in methods.values():
                    for _ in range(5):          # warm-up: compiled, then specialised
                        call()
                for _ in range(repeat):
                    for name, call in methods.items():
                        times[name].append(common.time_once(call)[0])
            med = {name: statistics.median(ts) for name, ts in times.items()}
            rows.append([f"{fn.__name__}, {label}", common.fmt_seconds(med["forward"]),
                         common.fmt_seconds(med["without guard"]),
                         common.fmt_seconds(med["with guard"]),
                         f"{med['with guard'] / med['without guard']:.3f}",
                         "finite" if all(unfinite) else "NaN",
                         "finite" if all(finite) else "NaN"])
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bodies", type=int, nargs="*", default=[64, 256])
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="8 bodies, 10 steps, 3 rounds")
    args = p.parse_args(argv)
    if args.quick:
        args.bodies, args.steps, args.repeat = [8], 10, 3
    for bodies in args.bodies:
        print(f"\n{bodies} bodies, {args.steps} steps, median of {args.repeat} "
              f"(pair matrix {bodies}x{bodies})")
        print(common.table(["problem", "forward", "without guard", "with guard",
                            "guard / none", "gradient before", "gradient now"],
                           measure(bodies, args.steps, args.repeat)))


if __name__ == "__main__":
    main()
