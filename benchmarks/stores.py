"""Disk-level snapshot stores: how much of the I/O the sweep waits for.

    python benchmarks/stores.py                 # 64 MB per snapshot, 12 steps, 3 runs each
    python benchmarks/stores.py --mb 16 --steps 8 --repeat 1   # quick

A loop whose state is one float64 array of ``--mb`` MB, checkpointed with one
RAM snapshot and ``--disk`` disk snapshots, so nearly every restore of the
reverse sweep reads a disk snapshot.  For each store (``.npy`` files in a
folder; zarr on a ``file://`` URL, uncompressed and zstd) the gradient runs
with prefetching on and off.  Columns: wall time of the gradient (median), I/O
seconds spent by the store's thread (writes + reads, checksums included),
seconds the sweep waited for I/O, seconds overlapped with computation, and the
bytes written.  The store lives in a temporary folder on the local disk (the
page cache may serve reads of snapshots just written: that is what a machine
with spare RAM does).  zarr needs the ``[store]`` extra.
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402  (pins BLAS threads before NumPy loads)

import numpy as np  # noqa: E402

import tangent_ckpt as tc  # noqa: E402

try:
    import zarr  # noqa: F401,E402
except ImportError:  # pragma: no cover
    zarr = None


def loss(x, a, n):
    for t in range(n):
        x = np.sin(x) * a + 0.1 * x
    return np.sum(x)


def run(store, x, a, n, disk, repeat):
    df = tc.grad_with_checkpointing(loss, wrt=1, snapshots=1, disk_snapshots=disk,
                                    snapshot_store=store)
    df(x, a, 2)  # compile, warm up
    rows = []
    for _ in range(repeat):
        with tc.profile() as prof:
            seconds, _ = common.time_once(df, x, a, n)
        rows.append((seconds, prof.io_seconds, prof.io_waited_seconds,
                     prof.io_overlapped_seconds, prof.disk_bytes_written, prof.forward_steps))
    return [statistics.median(col) for col in zip(*rows)]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=float, default=64.0, help="MB per snapshot")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--disk", type=int, default=4, help="disk snapshots")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    size = int(args.mb * 1e6 / 8)
    rng = np.random.default_rng(0)
    x, a = rng.standard_normal(size), 0.5 + 0.1 * rng.random(size)
    print(f"state {x.nbytes / 1e6:.0f} MB per snapshot, {args.steps} steps, 1 RAM + "
          f"{args.disk} disk snapshots, median of {args.repeat}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="tangent_ckpt_bench_") as folder:
        stores = [(".npy folder", folder, None)]
        if zarr is not None:
            stores += [("zarr file://", f"file://{folder}", None),
                       ("zarr file:// zstd", f"file://{folder}", "zstd")]
        for label, where, codec in stores:
            for prefetch in (True, False):
                store = tc.SnapshotStore(where, codec=codec, prefetch=prefetch)
                t, io, waited, overlapped, written, fwd = run(store, x, a, args.steps,
                                                               args.disk, args.repeat)
                rows.append((label, "on" if prefetch else "off", f"{t:.2f}", f"{io:.2f}",
                             f"{waited:.2f}", f"{overlapped:.2f}",
                             f"{100 * overlapped / io:.0f}%" if io else "-",
                             common.fmt_bytes(written), fwd))
                print("  ".join(map(str, rows[-1])), file=sys.stderr, flush=True)
    print(common.table(("store", "prefetch", "wall s", "I/O s", "waited s", "overlapped s",
                        "hidden", "written", "fwd steps"), rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
