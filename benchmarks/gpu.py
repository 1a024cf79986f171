"""GPU side by side: tangent_ckpt on CuPy against JAX and PyTorch on the GPU,
and tangent_ckpt on one CPU core, in one run.

    python benchmarks/gpu.py                 # the full table (needs a GPU for its GPU rows)
    python benchmarks/gpu.py --quick         # small sizes, 3 runs: a smoke test
    python benchmarks/gpu.py --cpu-only      # only the CPU rows (automatic without a GPU)
    python benchmarks/gpu.py --problems heat1k --methods tc-cupy-revolve,jax-scan-ckpt

Problems (float64):

* ``heat1k`` / ``heat1m``: the explicit 1-D heat equation of
  ``examples/heat_equation.py`` (the interior updated through slices after
  ``u = u0.copy()``), 1 024 cells and 10 000 steps / 1 048 576 cells and 1 000
  steps; gradient w.r.t. u0 and k.
* ``rnn32`` / ``rnn1024``: ``h = tanh(h @ W + b)``, 1 000 steps, hidden 256,
  batch 32 / 1 024; gradient w.r.t. W and b.

Methods (each optional: a row whose library or device is missing says so):

* ``tc-cupy-taped``, ``tc-cupy-revolve``: the same NumPy source on CuPy arrays
  (docs/backends.md), taped, and checkpointed with ``sqrt(T)`` snapshots kept in
  device memory (Revolve);
* ``jax-scan-ckpt``: JAX's ``lax.scan`` over ``jax.checkpoint``'ed blocks of
  ``sqrt(T)`` steps on the GPU (``jit``-compiled ahead of time, not timed);
* ``torch-ckpt``: PyTorch with ``torch.utils.checkpoint`` over ``sqrt(T)``-step
  segments on the GPU;
* ``tc-numpy-revolve``, ``tc-numba``: tangent_ckpt on one CPU core, NumPy and
  ``backend="numba"`` (its compile time is not timed), Revolve with ``sqrt(T)``
  snapshots.

Time is the median of ``--repeat`` runs after a warm-up, the device
synchronised after each.  Peak memory is the device memory the call held at its
most above what was held before it: CuPy's (a counting allocator over its
memory pool), JAX's (``memory_stats()["peak_bytes_in_use"]``, which JAX keeps
since the process started: its ahead-of-time compilation is included) and PyTorch's
(``torch.cuda.max_memory_allocated``); for the CPU rows the tracemalloc peak.
Every (problem, method) runs in a process of its own (JAX preallocates no
memory there).  Each gradient is compared with tc-numpy-revolve's
(``rel diff``), where that row ran.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

CPU_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1", "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
           "JAX_ENABLE_X64": "1"}
for _k, _v in CPU_ENV.items():
    os.environ.setdefault(_k, _v)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PROBLEMS = {
    "heat1k": dict(kind="heat", cells=1024, T=10_000),
    "heat1m": dict(kind="heat", cells=1_048_576, T=1_000),
    "rnn32": dict(kind="rnn", batch=32, hidden=256, T=1_000),
    "rnn1024": dict(kind="rnn", batch=1024, hidden=256, T=1_000),
}
QUICK = {
    "heat1k": dict(kind="heat", cells=256, T=400),
    "heat1m": dict(kind="heat", cells=16_384, T=100),
    "rnn32": dict(kind="rnn", batch=32, hidden=64, T=100),
    "rnn1024": dict(kind="rnn", batch=256, hidden=64, T=100),
}
METHODS = [
    ("tc-cupy-taped", "gpu", "tangent_ckpt on CuPy, taped"),
    ("tc-cupy-revolve", "gpu", "tangent_ckpt on CuPy, Revolve, sqrt(T) snapshots on the device"),
    ("jax-scan-ckpt", "gpu", "JAX lax.scan of jax.checkpoint'ed sqrt(T) blocks"),
    ("torch-ckpt", "gpu", "PyTorch + torch.utils.checkpoint, sqrt(T) segments"),
    ("tc-numpy-revolve", "cpu", "tangent_ckpt NumPy, one core, Revolve, sqrt(T) snapshots"),
    ("tc-numba", "cpu", "tangent_ckpt backend='numba', one core, Revolve, sqrt(T) snapshots"),
]
REFERENCE = "tc-numpy-revolve"


# --------------------------------------------------------------------------- problems

def make_inputs(p):
    import numpy as np
    rng = np.random.default_rng(0)
    if p["kind"] == "rnn":
        H = p["hidden"]
        return (rng.standard_normal((p["batch"], H)),
                0.5 * rng.standard_normal((H, H)) / np.sqrt(H), 0.1 * rng.standard_normal(H))
    x = np.linspace(0.0, 1.0, p["cells"])
    return (np.exp(-((x - 0.3) / 0.1) ** 2), 0.2 + 0.1 * rng.random(p["cells"]),
            0.5 * np.exp(-((x - 0.5) / 0.2) ** 2))


def rnn_loss(h, W, b, n):
    for t in range(n):
        h = np.tanh(h @ W + b)
    return np.sum(h)


def heat_loss(u0, k, target, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + k[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum((u - target) ** 2)


def snapshots_for(T):
    return max(2, math.isqrt(T))


# --------------------------------------------------------------------------- methods

class CupyPeak:
    """The most bytes CuPy's memory pool held in use while counting, above the
    level when counting started (a counting allocator over the default pool)."""

    def __init__(self, cp):
        self.cp, self.pool = cp, cp.get_default_memory_pool()
        self.base = self.peak = self.pool.used_bytes()
        cp.cuda.set_allocator(self._malloc)

    def _malloc(self, size):
        memory = self.pool.malloc(size)
        self.peak = max(self.peak, self.pool.used_bytes())
        return memory

    def reset(self):
        self.cp.cuda.Device().synchronize()
        self.base = self.peak = self.pool.used_bytes()

    def held(self):
        return self.peak - self.base


def build(method, p, inputs):
    """(call, synchronise, peak tracker with reset() / held()) for one row; call()
    returns the gradient as NumPy arrays only when asked (``call(True)``)."""
    import numpy as np
    T, heat = p["T"], p["kind"] == "heat"
    wrt = (0, 1) if heat else (1, 2)
    fn = heat_loss if heat else rnn_loss
    if method.startswith("tc-"):
        sys.path.insert(0, ROOT)
        import tangent_ckpt as tc
        if method == "tc-cupy-taped":
            opts = {}
        elif method == "tc-numba":
            opts = dict(snapshots=snapshots_for(T), backend="numba")
        else:
            opts = dict(snapshots=snapshots_for(T))
        grad = tc.grad_with_checkpointing(fn, wrt=wrt, **opts) if opts else tc.grad(fn, wrt=wrt)
        if method.startswith("tc-cupy"):
            import cupy as cp
            args = tuple(cp.asarray(a) for a in inputs) + (T,)
            sync = cp.cuda.Device().synchronize
            tracker = CupyPeak(cp)

            def call(host=False):
                out = grad(*args)
                sync()
                return tuple(o.get() for o in out) if host else out
            return call, sync, tracker
        args = tuple(inputs) + (T,)
        grad(*args)   # the Numba backend compiles here, untimed
        return (lambda host=False: grad(*args)), (lambda: None), TracemallocPeak()
    if method == "jax-scan-ckpt":
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        device = jax.devices("gpu")[0]
        k = snapshots_for(T)
        if heat:
            def step(u, kk, _):
                return u.at[1:-1].set(u[1:-1] + kk[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
        else:
            def step(h, W, b):
                return jnp.tanh(h @ W + b)

        def run(x, a, c):
            def body(x, _):
                return step(x, a, c), None
            nb, rem = divmod(T, k)

            @jax.checkpoint
            def block(x, _):
                x, _ = jax.lax.scan(body, x, None, length=k)
                return x, None
            x, _ = jax.lax.scan(block, x, None, length=nb)
            if rem:
                x, _ = jax.lax.scan(body, x, None, length=rem)
            return x
        put = [jax.device_put(jnp.asarray(v), device) for v in inputs]
        if heat:
            target = put[2]
            loss = lambda u0, kk: jnp.sum((run(u0, kk, None) - target) ** 2)  # noqa: E731
            args = (put[0], put[1])
        else:
            h0 = put[0]
            loss = lambda W, b: jnp.sum(run(h0, W, b))  # noqa: E731
            args = (put[1], put[2])
        compiled = jax.jit(jax.grad(loss, (0, 1))).lower(*args).compile()

        def call(host=False):
            out = jax.block_until_ready(compiled(*args))
            return tuple(np.asarray(o) for o in out) if host else out
        return call, (lambda: None), JaxPeak(device)
    if method == "torch-ckpt":
        import torch
        import torch.utils.checkpoint as tcp
        torch.set_default_dtype(torch.float64)
        dev = torch.device("cuda")
        k = snapshots_for(T)
        on = [torch.from_numpy(v).to(dev) for v in inputs]
        if heat:
            def step(u, kk, _):
                return torch.cat([u[:1], u[1:-1] + kk[1:-1] * (u[2:] - 2.0 * u[1:-1] + u[:-2]),
                                  u[-1:]])
        else:
            def step(h, W, b):
                return torch.tanh(h @ W + b)

        def segment(x, a, c, n):
            for _ in range(n):
                x = step(x, a, c)
            return x

        def call(host=False):
            a = on[0 if heat else 1].clone().requires_grad_(True)
            c = on[1 if heat else 2].clone().requires_grad_(True)
            x, p1, p2 = (a, c, None) if heat else (on[0], a, c)
            done = 0
            while done < T:
                n = min(k, T - done)
                x = tcp.checkpoint(segment, x, p1, p2, n, use_reentrant=False)
                done += n
            loss = torch.sum((x - on[2]) ** 2) if heat else torch.sum(x)
            ga, gc = torch.autograd.grad(loss, (a, c))
            torch.cuda.synchronize()
            return (ga.cpu().numpy(), gc.cpu().numpy()) if host else (ga, gc)
        return call, torch.cuda.synchronize, TorchPeak(torch)
    raise ValueError(method)


class TracemallocPeak:
    def __init__(self):
        import tracemalloc
        self.tm = tracemalloc

    def reset(self):
        self.tm.start()
        self.base = self.tm.get_traced_memory()[0]

    def held(self):
        peak = self.tm.get_traced_memory()[1] - self.base
        self.tm.stop()
        return peak


class JaxPeak:
    def __init__(self, device):
        self.device = device

    def _stats(self):
        return self.device.memory_stats() or {}

    def reset(self):
        # JAX keeps one peak for the process: this worker runs one gradient, measured first
        self.base = self._stats().get("bytes_in_use", 0)

    def held(self):
        peak = self._stats().get("peak_bytes_in_use")
        return None if peak is None else peak - self.base


class TorchPeak:
    def __init__(self, torch):
        self.torch = torch

    def reset(self):
        self.torch.cuda.synchronize()
        self.torch.cuda.reset_peak_memory_stats()
        self.base = self.torch.cuda.memory_allocated()

    def held(self):
        return self.torch.cuda.max_memory_allocated() - self.base


# --------------------------------------------------------------------------- running

def available(method):
    """None when the row can run here, else why not."""
    import importlib.util
    module = {"tc-cupy-taped": "cupy", "tc-cupy-revolve": "cupy", "jax-scan-ckpt": "jax",
              "torch-ckpt": "torch", "tc-numba": "numba"}.get(method)
    if module is not None and importlib.util.find_spec(module) is None:
        return f"{module} not installed"
    return None


def gpu_present():
    """Is there an NVIDIA GPU (asked of nvidia-smi: no library is imported here)?"""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


def worker(method, problem, repeat, quick, out_path):
    import statistics
    import time
    import numpy as np
    p = (QUICK if quick else PROBLEMS)[problem]
    call, sync, tracker = build(method, p, make_inputs(p))
    tracker.reset()           # memory first, on the first (warm-up) call
    grads = call(True)
    peak = tracker.held()
    times = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    np.savez(out_path, *grads)
    print(json.dumps({"time": statistics.median(times), "peak": peak}))


def run_row(method, problem, repeat, quick, timeout, tmp):
    out = os.path.join(tmp, f"{problem}-{method}.npz")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", method, problem,
           str(repeat), "1" if quick else "0", out]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}, None
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or ["?"]
        return {"error": lines[-1].strip()[:200]}, None
    import numpy as np
    with np.load(out) as z:
        grads = [z[f"arr_{i}"] for i in range(len(z.files))]
    return json.loads(proc.stdout.strip().splitlines()[-1]), grads


def rel_diff(got, want):
    import numpy as np
    return max(float(np.max(np.abs(g - w))) / max(float(np.max(np.abs(w))), 1e-300)
               for g, w in zip(got, want))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 runs")
    ap.add_argument("--cpu-only", action="store_true", help="only the CPU rows")
    ap.add_argument("--problems", default=",".join(PROBLEMS))
    ap.add_argument("--methods", default=",".join(m for m, _, _ in METHODS))
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per row")
    ap.add_argument("--worker", nargs=5, metavar=("METHOD", "PROBLEM", "REPEAT", "QUICK", "OUT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        method, problem, repeat, quick, out = args.worker
        worker(method, problem, int(repeat), quick == "1", out)
        return 0
    repeat = args.repeat or (3 if args.quick else 5)
    gpu = gpu_present() and not args.cpu_only
    sizes = QUICK if args.quick else PROBLEMS
    kinds = {m: kind for m, kind, _ in METHODS}
    methods = [m for m in args.methods.split(",") if m]
    unknown = [m for m in methods if m not in kinds] + \
        [p for p in args.problems.split(",") if p not in PROBLEMS]
    if unknown:
        ap.error(f"unknown method or problem: {', '.join(unknown)}")
    print("GPU side by side" + (" (quick sizes)" if args.quick else "") +
          f"; time: median of {repeat} runs; memory: peak above the start of the call")
    if not gpu:
        print("no GPU here" + (" (--cpu-only)" if args.cpu_only else "") +
              ": the GPU rows are skipped; run this on a GPU machine for them")
    # the reference first: every other row is compared with it
    methods.sort(key=lambda m: m != REFERENCE)
    rows, notes = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for problem in args.problems.split(","):
            p = sizes[problem]
            size = f"{p['cells']} cells" if p["kind"] == "heat" else f"batch {p['batch']}"
            reference = None
            for method in methods:
                why = available(method) or (None if gpu or kinds[method] == "cpu"
                                            else "no GPU")
                if why is not None:
                    rows.append((problem, f"{size}, T={p['T']}", method, kinds[method],
                                 f"skipped: {why}", "-", "-"))
                    continue
                result, grads = run_row(method, problem, repeat, args.quick, args.timeout, tmp)
                if "error" in result:
                    rows.append((problem, f"{size}, T={p['T']}", method, kinds[method],
                                 "failed", "-", "-"))
                    notes.append(f"{problem} {method}: {result['error']}")
                    continue
                if method == REFERENCE:
                    reference = grads
                diff = "-" if reference is None or method == REFERENCE else \
                    f"{rel_diff(grads, reference):.1e}"
                rows.append((problem, f"{size}, T={p['T']}", method, kinds[method],
                             fmt_seconds(result["time"]), fmt_bytes(result["peak"]), diff))
    print(table(("problem", "size", "method", "on", "time", "peak memory", "rel diff"), rows))
    for note in notes:
        print("note:", note)
    print("methods: " + "; ".join(f"{m}: {text}" for m, _, text in METHODS))
    return 0


def fmt_seconds(t):
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def fmt_bytes(n):
    if n is None:
        return "-"
    for unit, size in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def table(headers, rows):
    text = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in text]) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.ljust(w) if i < 4 else c.rjust(w)  # noqa: E731
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in text])


import numpy as np  # noqa: E402  (the loss functions' NumPy, after the thread settings)

if __name__ == "__main__":
    sys.exit(main())
