"""Benchmark: compile time of a gradient against the length of the function.

    python benchmarks/compile_time.py                 # 500 / 1000 / 2000 / 5000 lines
    python benchmarks/compile_time.py --lines 500 1000 --repeat 3
    python benchmarks/compile_time.py --lambdas 30 100 300    # many lambdas in one file

Each function is straight-line NumPy code, one assignment per line, a mix of
elementwise functions, products and reductions over a few variables, with a
loop every 50 lines (``for k in range(3)``) so that the packaging of loops is
timed too (see :func:`long_function`).  A row is the median over ``--repeat``
compilations (each on a fresh function object, so nothing is cached) of
``tc.grad(f).compile()``, taped, and of the checkpointed gradient; ``ms/line``
is that median divided by the number of source lines, in wall time and in CPU
time of this process (``time.process_time``: on a shared machine, the wall time
also counts the time other processes held the CPU).  The compiler is linear
when ``ms/line`` stays flat down the table.

``--lambdas N ...``: a module of N lambdas (``FS = [lambda x: ..., ...]``,
one per line), each differentiated (``tc.grad(f).compile()``); prints the
CPU milliseconds per lambda, which stay flat when finding one lambda does not
cost a pass over all the others.
"""

import argparse
import gc
import linecache
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402,F401  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402

_LINES = (
    "a = np.sin(x) * 0.5 + b",
    "b = np.tanh(a * b) - 0.1 * x",
    "c = np.sum(a * b) + c * 0.9",
    "x = x + 0.01 * np.cos(b)",
    "b = b @ M",
)


def long_function(n_lines):
    """Source of a function ``f(x, M)`` of about ``n_lines`` lines."""
    body = ["b = x * 0.5", "c = 0.0"]
    k = 0
    while len(body) < n_lines - 2:
        if len(body) % 50 == 0:
            body += ["for k in range(3):", "    a = np.sin(a) + b", "    b = b * 0.9 + a * 0.1"]
        else:
            body.append(_LINES[k % len(_LINES)])
            k += 1
    body.append("return c + np.sum(b * b)")
    return "def f(x, M):\n" + "".join(f"    {line}\n" for line in body)


def make(text):
    namespace = {"np": np}
    exec(compile(text, "<compile_time>", "exec"), namespace)
    return namespace["f"]


def compile_seconds(text, **options):
    """(wall seconds, CPU seconds) of one compilation."""
    fn = make(text)
    df = tc.grad(fn, source=text, **options)
    wall, cpu = time.perf_counter(), time.process_time()
    df.compile()
    return time.perf_counter() - wall, time.process_time() - cpu


def lambda_module(n):
    """Source of a module holding ``FS``, a list of ``n`` lambdas, one per line."""
    return "import numpy as np\nFS = [\n" + "".join(
        f"    lambda x: np.sum(np.sin(x) * {k}.0 + x ** 2),\n" for k in range(n)) + "]\n"


def lambdas_cpu_ms(n):
    """CPU milliseconds per lambda to compile the gradient of each of ``n``."""
    text = lambda_module(n)
    filename = f"<compile_time lambdas {n}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    try:
        namespace = {}
        exec(compile(text, filename, "exec"), namespace)
        cpu = time.process_time()
        for fn in namespace["FS"]:
            tc.grad(fn).compile()
        return 1e3 * (time.process_time() - cpu) / n
    finally:
        linecache.cache.pop(filename, None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--lambdas", type=int, nargs="+", default=None)
    args = parser.parse_args(argv)
    if args.lambdas:
        lambdas_cpu_ms(10)  # warm-up
        print(f"{'lambdas':>8} {'cpu ms/lambda':>14}")
        for n in args.lambdas:
            print(f"{n:>8} {lambdas_cpu_ms(n):>14.1f}", flush=True)
        return
    compile_seconds(long_function(20))  # warm-up: the first compilation imports the compiler
    print(f"{'lines':>6} {'taped s':>8} {'ms/line':>8} {'cpu ms/line':>11}  "
          f"{'checkpointed s':>14} {'ms/line':>8} {'cpu ms/line':>11}")
    for n in args.lines:
        text = long_function(n)
        lines = text.count("\n")
        runs = {False: [], True: []}
        for _ in range(args.repeat):
            for checkpoint in runs:
                gc.collect()
                runs[checkpoint].append(compile_seconds(text, checkpoint=checkpoint))
        cells = []
        for checkpoint, width in ((False, 8), (True, 14)):
            wall = statistics.median(w for w, _ in runs[checkpoint])
            cpu = statistics.median(c for _, c in runs[checkpoint])
            cells.append(f"{wall:>{width}.3f} {1e3 * wall / lines:>8.3f} "
                         f"{1e3 * cpu / lines:>11.3f}")
        print(f"{lines:>6} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
