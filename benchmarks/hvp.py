"""Benchmark: forward mode and Hessian-vector products of the RNN loop.

    python benchmarks/hvp.py                # T = 1000, h (32, 256), float64
    python benchmarks/hvp.py --steps 200 --repeat 3

The loss is benchmarks/rnn.py's: ``h = tanh(h @ W + b)`` for T steps, ``sum(h)``;
derivatives with respect to (W, b), the direction v = (vW, vb) random.  One
table, every row measured in the same process:

* time: median of ``--repeat`` calls after one warm-up call (the first call
  compiles; JAX's row is jitted, its compile time excluded the same way);
* peak memory: tracemalloc peak of ONE call in a separate run (it sees NumPy's
  buffers; it does not see XLA's, so JAX's row says so);
* rel diff: max |Hv - Hv_ref| / max |Hv_ref| against the taped tc.hvp;
* plain steps / n: untaped forward steps per loop step from ``tc.profile()``
  (Revolve: the binomial optimum A plus one).

Rows: the plain loop; tc.jvp (value and directional derivative: no tape); the
first-order checkpointed gradient (the memory the issue compares with);
tc.hvp taped and checkpointed (snapshots=10: the loop of the tangent-linear
program carries (h, dh), each snapshot twice the first-order state); JAX's
``jax.jvp(jax.grad(f))`` over ``lax.scan`` and autograd's
``hessian_vector_product``, where installed.  BLAS runs on one thread.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402
from rnn import loss, make_inputs, BATCH, HIDDEN  # noqa: E402
from tangent_ckpt.runtime.scheduling.schedules import revolve_cost  # noqa: E402

SNAPSHOTS = 10


def rel_diff(got, ref):
    return max(float(np.max(np.abs(np.asarray(g) - r))) / max(float(np.max(np.abs(r))), 1e-300)
               for g, r in zip(got, ref))


def jax_hvp():
    """jax.jvp(jax.grad(loss)) with the loop as lax.scan, jitted, float64; or None."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, "jax (not installed)"
    jax.config.update("jax_enable_x64", True)

    def loss_jax(params, h, n_steps):
        W, b = params

        def step(h, _):
            return jnp.tanh(h @ W + b), None
        h, _ = jax.lax.scan(step, h, None, length=n_steps)
        return jnp.sum(h)

    def make(n):
        @jax.jit
        def hvp(W, b, h, vW, vb):
            grad = jax.grad(lambda p: loss_jax(p, h, n))
            return jax.jvp(grad, ((W, b),), ((vW, vb),))[1]
        return hvp
    cache = {}

    def call(h, W, b, n, v):
        if n not in cache:
            cache[n] = make(n)
        out = cache[n](W, b, h, *v)
        return tuple(np.asarray(jax.block_until_ready(o)) for o in out)
    return call, f"JAX {jax.__version__} jax.jvp(jax.grad) (jit, lax.scan)"


def autograd_hvp():
    try:
        import autograd
        import autograd.numpy as anp
        from importlib.metadata import version
    except ImportError:
        return None, "autograd (not installed)"

    def loss_ag(x, h, n):  # (W, b) as one flat vector: the product's vector is flat too
        W, b = anp.reshape(x[:HIDDEN * HIDDEN], (HIDDEN, HIDDEN)), x[HIDDEN * HIDDEN:]
        for t in range(n):
            h = anp.tanh(anp.dot(h, W) + b)
        return anp.sum(h)
    hvp = autograd.hessian_vector_product(loss_ag)

    def call(h, W, b, n, v):
        flat = hvp(np.concatenate([W.ravel(), b]), h, n, np.concatenate([v[0].ravel(), v[1]]))
        return flat[:W.size].reshape(W.shape), flat[W.size:]
    return call, f"autograd {version('autograd')} hessian_vector_product"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    n, repeat = args.steps, args.repeat
    h0, W, b = make_inputs()
    rng = np.random.default_rng(1)
    v = (rng.standard_normal(W.shape) / np.sqrt(W.size), rng.standard_normal(b.shape))
    print(f"RNN h = tanh(h @ W + b): h ({BATCH}, {HIDDEN}), W ({HIDDEN}, {HIDDEN}), float64, "
          f"T = {n}, loss = sum(h); derivatives w.r.t. (W, b) in a random direction")
    print(f"numpy {np.__version__}, BLAS threads = {os.environ['OPENBLAS_NUM_THREADS']}, "
          f"median of {repeat} runs; peak memory in a separate tracemalloc run\n")

    jvp = tc.jvp(loss, wrt=(1, 2))
    grad_ckpt = tc.grad(loss, wrt=(1, 2), checkpoint=True, snapshots=SNAPSHOTS)
    hvp_taped = tc.hvp(loss, wrt=(1, 2))
    hvp_ckpt = tc.hvp(loss, wrt=(1, 2), checkpoint=True, snapshots=SNAPSHOTS)
    reference = hvp_taped(h0, W, b, n, v)

    t_fwd = common.time_median(loss, h0, W, b, n, repeat=repeat)
    m_fwd, _ = common.peak_memory(loss, h0, W, b, n)
    rows = [("forward only (plain NumPy loop)", common.fmt_seconds(t_fwd), "1.00",
             common.fmt_bytes(m_fwd), "-", "-")]
    peaks = {}
    entries = [("tc.jvp (value + tangent)", lambda: jvp(h0, W, b, n, v), None, False),
               (f"tc.grad checkpointed, snapshots={SNAPSHOTS} (1st order)",
                lambda: grad_ckpt(h0, W, b, n), None, True),
               ("tc.hvp taped", lambda: hvp_taped(h0, W, b, n, v), reference, True),
               (f"tc.hvp checkpointed, snapshots={SNAPSHOTS}",
                lambda: hvp_ckpt(h0, W, b, n, v), reference, True)]
    for peer, label in (jax_hvp(), autograd_hvp()):
        if peer is None:
            rows.append((label, "-", "-", "-", "-", "-"))
        else:
            entries.append((label, (lambda peer=peer: peer(h0, W, b, n, v)), reference,
                            False))
    for label, call, ref, profiled in entries:
        t = common.time_median(call, repeat=repeat)
        peak, out = common.peak_memory(call)
        peaks[label] = peak
        shown = common.fmt_bytes(peak)
        if label.startswith("JAX"):
            shown = "XLA (unseen)"
        steps = "-"
        if profiled:
            with tc.profile() as prof:
                call()
            steps = f"{prof.forward_steps / n:.2f}" if prof.runs else "1.00"
        rows.append((label, common.fmt_seconds(t), f"{t / t_fwd:.2f}", shown,
                     f"{rel_diff(out, ref):.1e}" if ref is not None else "-", steps))
    print(common.table(("method", "time", "time/fwd", "peak memory", "rel diff",
                        "plain steps/n"), rows))

    first = peaks[f"tc.grad checkpointed, snapshots={SNAPSHOTS} (1st order)"]
    second = peaks[f"tc.hvp checkpointed, snapshots={SNAPSHOTS}"]
    r, A, _ = revolve_cost(n, SNAPSHOTS)
    print(f"\npeak memory of the checkpointed hvp / checkpointed gradient: {second / first:.2f}x")
    with tc.profile() as prof:
        hvp_ckpt(h0, W, b, n, v)
    (stats,) = prof.loops.values()
    print(f"checkpointed hvp: {stats.forward_steps} plain steps = Revolve optimum A + 1 = "
          f"{A + 1} (n = {n}, s = {SNAPSHOTS}, r = {r}); {stats.peak_snapshots} snapshots of "
          f"{common.fmt_bytes(stats.peak_snapshot_bytes // max(stats.peak_snapshots, 1))} "
          f"(h and dh)")
    short = max(n // 10, 1)
    m_short, _ = common.peak_memory(jvp, h0, W, b, short, v)
    print(f"tc.jvp peak memory: {common.fmt_bytes(m_short)} at T = {short}, "
          f"{common.fmt_bytes(peaks['tc.jvp (value + tangent)'])} at T = {n} "
          "(no tape: independent of T)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
