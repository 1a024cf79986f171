"""Side-by-side: tangent_ckpt against autograd, JAX, PyTorch and tangent-ad.

    python benchmarks/peers.py                  # RNN T=1000, T=10000, heat, Lorenz-96
    python benchmarks/peers.py --quick          # small sizes, 2 runs: a smoke test
    python benchmarks/peers.py --problems rnn1000 --methods tc-taped,jax-scan

Problems (float64 everywhere, one BLAS/intra-op thread):

* ``rnn1000`` / ``rnn10000``: ``h = tanh(h @ W + b)`` T times, h (32, 256),
  W (256, 256), loss = sum(h); gradient w.r.t. W and b.
* ``heat``: explicit 1-D heat equation, 1024 cells, 10 000 steps, the interior
  updated through slices; loss = squared misfit; gradient w.r.t. u0 and k.
* ``lorenz96`` (Lorenz-96 RK4, 40 variables, 5 000 steps) and ``building`` (a
  4-zone building RC model, 10 000 steps): the small-state problems of
  ``benchmarks/small_state.py``, run by tangent_ckpt and the hand-written rows
  only (the peers are not written for them here).

``hand-taped`` / ``hand-revolve``: the hand-written NumPy gradients (taped, and
Revolve with 10 snapshots on the same schedule) of ``benchmarks/rnn.py`` and
``benchmarks/small_state.py``: each problem's floor, in the same run.  JAX's ``lax.scan`` rows run Lorenz-96 too.

``tc-numba`` is ``backend="numba"`` (docs/numba.md), whose checkpointed loops
run their whole Revolve schedule compiled; its compile time (first call,
excluded from the grad time) is printed as a note under the table, and its
memory is the larger of the tracemalloc peak (which does not see Numba's own
allocations) and the peak RSS (which misses what fits in pages already mapped).

Every (problem, method) runs in its own subprocess, twice: once to time (the
NumPy forward loop is timed in the same process, so the ratio compares like with
like; median of ``--repeat`` runs after one warm-up), once to measure memory (a
fresh process: only the gradient call is measured).  Memory is the tracemalloc
peak for NumPy-based methods (tangent_ckpt, autograd, tangent-ad: NumPy reports
its buffers to tracemalloc) and the peak resident set size above the level just
before the call for JAX and PyTorch (their allocators are invisible to
tracemalloc; the peak RSS is reset through /proc/self/clear_refs; JAX is
compiled ahead of time, before the measurement).  The gradient of every method
is compared with tangent_ckpt's taped gradient (``rel diff``).

Peers are optional: a method whose library is missing is reported as "not
installed" and skipped.  ``pip install -e '.[peers]'`` installs autograd, JAX,
PyTorch and tangent-ad (PyTorch: prefer the CPU wheel).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "JAX_PLATFORMS": "cpu", "JAX_ENABLE_X64": "1",
}
for _k, _v in THREAD_ENV.items():
    os.environ.setdefault(_k, _v)

HERE = os.path.dirname(os.path.abspath(__file__))
#: the tc-numba worker's Numba compile time (first call), reported beside its row
COMPILE = {}

import numpy as np  # noqa: E402  (after the thread settings above)

METHODS = [
    ("tc-taped", "tangent_ckpt taped (tc.grad)"),
    ("tc-revolve", "tangent_ckpt Revolve, snapshots=10"),
    ("tc-budget", 'tangent_ckpt memory_budget="10MB"'),
    ("tc-numba", "tangent_ckpt backend='numba', Revolve, snapshots=150"),
    ("hand-taped", "hand-written NumPy taped"),
    ("hand-revolve", "hand-written NumPy Revolve, snapshots=10"),
    ("autograd", "autograd"),
    ("jax-scan", "JAX lax.scan"),
    ("jax-scan-ckpt", "JAX scan of jax.checkpoint'ed sqrt(T) blocks"),
    ("torch", "PyTorch loop"),
    ("torch-ckpt", "PyTorch + torch.utils.checkpoint, sqrt(T) segments"),
    ("tangent-ad", "tangent-ad, checkpoint=True"),
]
PROBLEMS = {
    "rnn1000": dict(kind="rnn", T=1000, batch=32, hidden=256),
    "rnn10000": dict(kind="rnn", T=10000, batch=32, hidden=256),
    "heat": dict(kind="heat", T=10000, cells=1024),
    "lorenz96": dict(kind="lorenz96", T=5000, size=40, dt=0.001),
    "building": dict(kind="building", T=10000, size=4),
}
QUICK = {
    "rnn1000": dict(kind="rnn", T=100, batch=8, hidden=32),
    "rnn10000": dict(kind="rnn", T=400, batch=8, hidden=32),
    "heat": dict(kind="heat", T=400, cells=64),
    "lorenz96": dict(kind="lorenz96", T=300, size=40, dt=0.001),
    "building": dict(kind="building", T=400, size=4),
}
SMALL_STATE = ("lorenz96", "building")  # problems only tangent_ckpt and the hand rows run


# --------------------------------------------------------------------------- problems

def make_inputs(p):
    import numpy as np
    if p["kind"] in SMALL_STATE:
        return small_state_problem(p)[3]
    rng = np.random.default_rng(0)
    if p["kind"] == "rnn":
        H = p["hidden"]
        h0 = rng.standard_normal((p["batch"], H))
        W = 0.5 * rng.standard_normal((H, H)) / np.sqrt(H)
        b = 0.1 * rng.standard_normal(H)
        return h0, W, b
    x = np.linspace(0.0, 1.0, p["cells"])
    u0 = np.exp(-((x - 0.3) / 0.1) ** 2)
    k = 0.2 + 0.1 * rng.random(p["cells"])
    target = 0.5 * np.exp(-((x - 0.5) / 0.2) ** 2)
    return u0, k, target


def rnn_loss(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def heat_loss(u0, k, target, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum((u - target) ** 2)


def small_state_problem(p):
    """(user function, wrt, hand taped, inputs incl. T, hand Revolve) from small_state.py."""
    sys.path.insert(0, HERE)
    import small_state
    _, f, wrt, _, taped, revolve = small_state.PROBLEMS[p["kind"]]
    make = {"lorenz96": small_state.lorenz96_inputs, "building": small_state.building_inputs}
    return f, wrt, taped, make[p["kind"]](p["size"], p["T"]), revolve


def hand_written(method, p, inputs):
    """The hand-written gradient of ``method`` ('hand-taped' / 'hand-revolve')."""
    sys.path.insert(0, HERE)
    if p["kind"] == "rnn":
        import rnn
        taped, revolve = rnn.bptt, rnn.hand_revolve
        args = inputs + (p["T"],)
    else:
        import small_state
        taped, revolve = (small_state.heat_taped, small_state.heat_revolve) \
            if p["kind"] == "heat" else small_state_problem(p)[2::2]
        args = inputs if p["kind"] in SMALL_STATE else inputs + (p["T"],)
    fn = taped if method == "hand-taped" else (lambda *a: revolve(*a, snapshots=10))
    return lambda: fn(*args)


def written_for(method, p):
    """The peers are written for the RNN and the heat equation (JAX's scans also
    for Lorenz-96)."""
    return p["kind"] not in SMALL_STATE or method.startswith(("tc-", "hand-")) or \
        (p["kind"] == "lorenz96" and method.startswith("jax"))


def numpy_forward(p, inputs):
    if p["kind"] in SMALL_STATE:
        f = small_state_problem(p)[0]
        return lambda: f(*inputs)
    if p["kind"] == "rnn":
        return lambda: rnn_loss(*inputs, p["T"])
    return lambda: heat_loss(*inputs, p["T"])


def block_size(T):
    return max(1, int(round(T ** 0.5)))


def build(method, p, inputs):
    """A zero-argument gradient call returning a tuple of NumPy arrays, plus the memory kind."""
    import numpy as np
    T = p["T"]
    rnn = p["kind"] == "rnn"
    if method.startswith("hand-"):
        return hand_written(method, p, inputs), "tracemalloc"
    if method.startswith("tc-"):
        import tangent_ckpt as tc
        f = rnn_loss if rnn else heat_loss
        wrt = (1, 2) if rnn else (0, 1)
        call = inputs + (T,)
        if p["kind"] in SMALL_STATE:
            f, wrt, _, call, _ = small_state_problem(p)
        opts = {"tc-taped": {}, "tc-revolve": dict(checkpoint=True, snapshots=10),
                "tc-budget": dict(checkpoint=True, memory_budget="10MB"),
                "tc-numba": dict(checkpoint=True, snapshots=150, backend="numba")}[method]
        df = tc.grad(f, wrt=wrt, **opts)
        df.compile()  # compile outside the measurement
        if method == "tc-numba":
            df(*call)  # Numba compiles (or loads its cache) on the first call
            COMPILE["seconds"] = df.backend_report.compile_seconds
            COMPILE["cache_hits"] = df.backend_report.cache_hits
            # Numba's own allocations (the steps' temporaries) are invisible to
            # tracemalloc, and the peak resident set size misses what fits in
            # pages already mapped: the larger of the two
            return (lambda: df(*call)), "max(RSS,tm)"
        return (lambda: df(*call)), "tracemalloc"
    if method == "autograd":
        import autograd
        import autograd.numpy as anp

        if rnn:
            def f(W, b, h):
                for t in range(T):
                    h = anp.tanh(anp.dot(h, W) + b)
                return anp.sum(h)
            g = autograd.grad(f, (0, 1))
            h0, W, b = inputs
            return (lambda: g(W, b, h0)), "tracemalloc"

        def f(u, k, target):
            for t in range(T):
                u = anp.concatenate([u[:1], u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2]),
                                     u[-1:]])
            return anp.sum((u - target) ** 2)
        g = autograd.grad(f, (0, 1))
        return (lambda: g(*inputs)), "tracemalloc"
    if method == "tangent-ad":
        import tangent
        if rnn:
            def tad_rnn(W, b, h, n):
                for t in range(n):
                    h = np.tanh(np.dot(h, W) + b)
                return np.sum(h)
            fn, args = tad_rnn, (inputs[1], inputs[2], inputs[0], T)
        else:
            def tad_heat(u, k, target, n):
                for t in range(n):
                    u = np.concatenate([u[:1], u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] +
                                                                     u[:-2]), u[-1:]])
                return np.sum((u - target) ** 2)
            fn, args = tad_heat, (inputs[0], inputs[1], inputs[2], T)
        _write_source(fn)
        g = tangent.grad(fn, wrt=(0, 1), checkpoint=True, verbose=0)
        return (lambda: g(*args)), "tracemalloc"
    if method.startswith("jax"):
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        ckpt = method == "jax-scan-ckpt"
        k = block_size(T)
        if rnn:
            def step(h, W, b):
                return jnp.tanh(h @ W + b)
        elif p["kind"] == "lorenz96":
            dt = p["dt"]

            def tendency(x, F):
                return (jnp.roll(x, -1) - jnp.roll(x, 2)) * jnp.roll(x, 1) - x + F

            def step(x, F, _):
                k1 = tendency(x, F)
                k2 = tendency(x + 0.5 * dt * k1, F)
                k3 = tendency(x + 0.5 * dt * k2, F)
                k4 = tendency(x + dt * k3, F)
                return x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        else:
            def step(u, kk, _):
                return u.at[1:-1].set(u[1:-1] + kk[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2]))

        def run(x, a, c):
            def body(x, _):
                return step(x, a, c), None
            if not ckpt:
                x, _ = jax.lax.scan(body, x, None, length=T)
                return x
            nb, rem = divmod(T, k)

            @jax.checkpoint
            def block(x, _):
                x, _ = jax.lax.scan(body, x, None, length=k)
                return x, None
            x, _ = jax.lax.scan(block, x, None, length=nb)
            if rem:
                x, _ = jax.lax.scan(body, x, None, length=rem)
            return x

        if rnn:
            h0, W, b = (jnp.asarray(v) for v in inputs)
            loss = lambda W, b: jnp.sum(run(h0, W, b))  # noqa: E731
            g = jax.jit(jax.grad(loss, (0, 1)))
            args = (W, b)
        elif p["kind"] == "lorenz96":
            x0, F = jnp.asarray(inputs[0]), jnp.asarray(inputs[1])  # small_state's inputs
            loss = lambda x0, F: jnp.sum(run(x0, F, None) ** 2)  # noqa: E731
            g = jax.jit(jax.grad(loss, (0, 1)))
            args = (x0, F)
        else:
            u0, kk, target = (jnp.asarray(v) for v in inputs)
            loss = lambda u0, kk: jnp.sum((run(u0, kk, None) - target) ** 2)  # noqa: E731
            g = jax.jit(jax.grad(loss, (0, 1)))
            args = (u0, kk)
        compiled = g.lower(*args).compile()

        def call():
            out = compiled(*args)
            jax.block_until_ready(out)
            return tuple(np.asarray(o) for o in out)
        return call, "RSS"
    if method.startswith("torch"):
        import torch
        import torch.utils.checkpoint as tcp
        torch.set_num_threads(1)
        torch.set_default_dtype(torch.float64)
        ckpt = method == "torch-ckpt"
        k = block_size(T)
        if rnn:
            h0 = torch.from_numpy(inputs[0])

            def step(h, W, b):
                return torch.tanh(h @ W + b)
            first, params_np = h0, (inputs[1], inputs[2])
        else:
            target = torch.from_numpy(inputs[2])

            def step(u, kk, _):
                return torch.cat([u[:1], u[1:-1] + kk[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2]),
                                  u[-1:]])
            first, params_np = None, (inputs[0], inputs[1])

        def segment(x, a, c, n):
            for _ in range(n):
                x = step(x, a, c)
            return x

        def call():
            a = torch.tensor(params_np[0], requires_grad=True)
            c = torch.tensor(params_np[1], requires_grad=True)
            if rnn:
                x, p1, p2 = first, a, c
            else:
                x, p1, p2 = a, c, None
            done = 0
            while done < T:
                n = min(k, T - done) if ckpt else T - done
                if ckpt:
                    x = tcp.checkpoint(segment, x, p1, p2, n, use_reentrant=False)
                else:
                    x = segment(x, p1, p2, n)
                done += n
            loss = torch.sum(x) if rnn else torch.sum((x - target) ** 2)
            ga, gc = torch.autograd.grad(loss, (a, c))
            return ga.numpy(), gc.numpy()
        return call, "RSS"
    raise ValueError(method)


def _write_source(fn):
    """tangent-ad reads source with inspect: nested functions defined here are fine."""
    return fn


def available(method):
    mod = {"autograd": "autograd", "tangent-ad": "tangent"}.get(method)
    if method.startswith("jax"):
        mod = "jax"
    elif method.startswith("torch"):
        mod = "torch"
    if mod is None:
        return True
    import importlib.util
    return importlib.util.find_spec(mod) is not None


def version(method):
    try:
        if method.startswith("hand-"):
            return f"numpy {np.__version__}"
        if method.startswith("jax"):
            import jax
            return jax.__version__
        if method.startswith("torch"):
            import torch
            return torch.__version__
        if method == "autograd":
            from importlib.metadata import version as v
            return v("autograd")
        if method == "tangent-ad":
            from importlib.metadata import version as v
            return v("tangent-ad")
        import tangent_ckpt
        return tangent_ckpt.__version__
    except Exception:  # pragma: no cover
        return "?"


# --------------------------------------------------------------------------- workers

def _rss_now():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return None


def _rss_peak():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def worker(mode, method, problem, repeat, quick, out_path):
    sys.path.insert(0, HERE)
    import common  # noqa: F401  (pins BLAS threads)
    import numpy as np
    p = (QUICK if quick else PROBLEMS)[problem]
    inputs = make_inputs(p)
    call, kind = build(method, p, inputs)
    result = {"method": method, "problem": problem, "memory_kind": kind}
    if mode == "time":
        fwd = numpy_forward(p, inputs)
        result["fwd_time"] = common.time_median(fwd, repeat=repeat)
        result["grad_time"] = common.time_median(call, repeat=repeat)
        if COMPILE:
            result["compile_seconds"] = COMPILE["seconds"]
            result["cache_hits"] = COMPILE["cache_hits"]
        grads = call()
        np.savez(out_path, *[np.asarray(g) for g in grads])
    else:
        import gc
        if kind == "tracemalloc":
            call_small = None  # noqa: F841
            peak, _ = common.peak_memory(call)
        else:
            gc.collect()
            base = _rss_now()
            if not _reset_peak():
                result["error"] = "cannot reset the peak RSS (/proc/self/clear_refs)"
                peak = None
            elif kind == "max(RSS,tm)":
                traced, _ = common.peak_memory(call)
                peak = max(traced, _rss_peak() - base)
            else:
                call()
                peak = _rss_peak() - base
        result["peak_bytes"] = peak
    print(json.dumps(result))


def run_worker(mode, method, problem, repeat, quick, timeout):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "grads.npz")
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", mode, method, problem,
               str(repeat), "1" if quick else "0", out]
        env = dict(os.environ, **THREAD_ENV)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout} s"}, None
        if proc.returncode != 0:
            lines = [ln for ln in proc.stderr.strip().splitlines() if "Error" in ln or
                     "error" in ln] or proc.stderr.strip().splitlines() or ["?"]
            return {"error": lines[-1].strip()[:300]}, None
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        grads = None
        if mode == "time":
            import numpy as np
            with np.load(out) as z:
                grads = [z[f"arr_{i}"] for i in range(len(z.files))]
        return result, grads


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", default="rnn1000,rnn10000,heat,lorenz96,building")
    ap.add_argument("--methods", default=",".join(m for m, _ in METHODS))
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per method (default 5)")
    ap.add_argument("--long-repeat", type=int, default=3,
                    help="timed runs for T = 10000 problems (default 3)")
    ap.add_argument("--quick", action="store_true", help="small sizes, 2 runs (a smoke test)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", metavar="FILE", help="also write the raw results here")
    ap.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        mode, method, problem, repeat, quick, out = args.worker
        worker(mode, method, problem, int(repeat), quick == "1", out)
        return 0

    sys.path.insert(0, HERE)
    import common
    import numpy as np
    labels = dict(METHODS)
    methods = [m for m in args.methods.split(",") if m]
    problems = [q for q in args.problems.split(",") if q]
    for m in methods:
        if m not in labels:
            ap.error(f"unknown method {m!r}; choose from {', '.join(labels)}")
    for q in problems:
        if q not in PROBLEMS:
            ap.error(f"unknown problem {q!r}; choose from {', '.join(PROBLEMS)}")
    sizes = QUICK if args.quick else PROBLEMS
    raw, notes = [], []
    for q in problems:
        p = sizes[q]
        repeat = 2 if args.quick else (args.long_repeat if p["T"] >= 10000 else args.repeat)
        desc = {"rnn": lambda: f"RNN h {(p['batch'], p['hidden'])}, T = {p['T']}",
                "heat": lambda: f"heat equation, {p['cells']} cells, T = {p['T']}",
                "lorenz96": lambda: f"Lorenz-96 RK4, {p['size']} variables, T = {p['T']}",
                "building": lambda: f"building RC model, {p['size']} zones, T = {p['T']}",
                }[p["kind"]]()
        print(f"\n## {desc}  (grad time: median of {repeat} runs)\n", flush=True)
        rows, ref = [], None
        for m in methods:
            if not available(m):
                rows.append([labels[m], "not installed", "-", "-", "-", "-"])
                continue
            if not written_for(m, p):
                continue
            timing, grads = run_worker("time", m, q, repeat, args.quick, args.timeout)
            if "error" in timing:
                notes.append(f"{labels[m]} on {q}: {timing['error']}")
                rows.append([labels[m], f"failed [{len(notes)}]", "-", "-", "-", "-"])
                raw.append(dict(timing, method=m, problem=q))
                continue
            mem, _ = run_worker("memory", m, q, repeat, args.quick, args.timeout)
            if ref is None and m == "tc-taped":
                ref = grads
            rel = "-"
            if ref is not None:
                rel = max(float(np.max(np.abs(a - r))) / max(float(np.max(np.abs(r))), 1e-300)
                          for a, r in zip(grads, ref))
                rel = f"{rel:.1e}"
            peak = mem.get("peak_bytes")
            rows.append([f"{labels[m]} ({version(m)})",
                         common.fmt_seconds(timing["grad_time"]),
                         f"{timing['grad_time'] / timing['fwd_time']:.2f}",
                         common.fmt_bytes(peak) if peak is not None else mem.get("error", "-"),
                         mem.get("memory_kind", "-"), rel])
            raw.append(dict(timing, **{k: v for k, v in mem.items() if k != "method"}))
            if "compile_seconds" in timing:
                notes.append(f"{labels[m]} on {q}: Numba compile time "
                             f"{timing['compile_seconds']:.1f} s (first call, not in grad time; "
                             f"{timing['cache_hits']} functions loaded from Numba's cache)")
            print(f"  {m}: done", file=sys.stderr, flush=True)
        print(common.table(["method", "grad time", "grad/fwd", "peak memory", "measured by",
                            "rel diff"], rows), flush=True)
    for i, note in enumerate(notes, 1):
        print(f"[{i}] {note}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(raw, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
