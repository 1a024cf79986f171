"""Many gradients on a cluster: the summed gradient of an ensemble, on Dask workers.

    python examples/ensemble_dask.py                          # 16 members, 2 local workers
    python examples/ensemble_dask.py --members 32 --workers 4 --cells 2000 --steps 400
    python examples/ensemble_dask.py --scheduler tcp://host:8786   # an existing cluster

Needs the optional ``[dask]`` extra (``pip install tangent_ckpt[dask]``: dask,
distributed, cloudpickle).

Each ensemble member is one run of the heat equation of
``examples/heat_equation.py`` from its own initial temperature (a shot, an
ensemble member); the loss of the ensemble is the sum of the members' misfits,
so its gradient w.r.t. the shared diffusivity ``k`` is the sum of the members'
gradients.  The checkpointed gradient is compiled once, here, and shipped to the
workers with the tasks (cloudpickle carries the compiled function; the workers
need tangent_ckpt and NumPy, not the source).  Its loop keeps
``--disk-snapshots`` snapshots on disk; with ``snapshot_store=None`` each worker
writes them into a private folder of its own machine's temporary directory (its
local disk) and removes it when the member's gradient is done.

Prints the summed gradient's norm, its difference from the same sum computed
here serially, and one ``check: OK`` line.
"""

import argparse
import os
import sys
import tempfile

import numpy as np

import tangent_ckpt as tc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heat_equation import make_inputs, misfit  # noqa: E402


def member_inputs(member, cells, steps):
    """The inputs of one ensemble member: its own initial temperature, shared k."""
    u0, k, target, n = make_inputs(cells, steps, seed=0)
    rng = np.random.default_rng(1000 + member)
    return u0 + 0.05 * rng.standard_normal(cells), k, target, n


def member_gradient(dmisfit, member, cells, steps):
    """Runs on a worker: one member's gradient w.r.t. k (disk snapshots on the
    worker's own disk)."""
    return dmisfit(*member_inputs(member, cells, steps))


def ensemble_gradient(client, dmisfit, members, cells, steps):
    """Scatter the gradient function once, run one task per member, sum the results."""
    [shipped] = client.scatter([dmisfit], broadcast=True)
    futures = [client.submit(member_gradient, shipped, m, cells, steps, pure=False)
               for m in range(members)]
    return client.submit(sum, futures).result()


def gradient_function(snapshots, disk_snapshots):
    return tc.grad_with_checkpointing(misfit, wrt=1, snapshots=snapshots,
                                      disk_snapshots=disk_snapshots)


def main(argv=None, client=None):
    """Run the example; `client`: an existing ``distributed.Client`` to use."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--members", type=int, default=16)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--cells", type=int, default=512)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--snapshots", type=int, default=4)
    p.add_argument("--disk-snapshots", type=int, default=2)
    p.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    args = p.parse_args(argv)
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        print("this example needs dask.distributed: pip install tangent_ckpt[dask]")
        return 2

    dmisfit = gradient_function(args.snapshots, args.disk_snapshots)
    dmisfit.compile()  # compiled here; the workers get the compiled function
    print(f"ensemble of {args.members} heat-equation runs ({args.cells} cells, {args.steps} "
          f"steps, {args.snapshots} RAM + {args.disk_snapshots} disk snapshots each) "
          f"on {args.scheduler or f'{args.workers} local workers'}")
    # the scheduler's and workers' scratch space goes here and is removed at the end
    with tempfile.TemporaryDirectory(prefix="tangent_ckpt_dask_") as scratch, \
            dask.config.set({"temporary-directory": scratch}):
        own = client is None
        if not own:
            cluster = None
        elif args.scheduler:
            client, cluster = Client(args.scheduler), None
        else:
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   processes=True, dashboard_address=None,
                                   local_directory=scratch)
            client = Client(cluster)
        try:
            total = ensemble_gradient(client, dmisfit, args.members, args.cells, args.steps)
        finally:
            if own:
                client.close()
            if cluster is not None:
                cluster.close()
    serial = sum(dmisfit(*member_inputs(m, args.cells, args.steps)) for m in range(args.members))
    diff = float(np.max(np.abs(total - serial)) / max(np.max(np.abs(serial)), 1e-300))
    print(f"summed gradient w.r.t. k: norm {np.linalg.norm(total):.6e}")
    print(f"cluster vs serial sum: max relative difference {diff:.2e}")
    ok = diff <= 1e-12
    print("check: OK" if ok else "check: FAILED (the cluster's sum differs from the serial one)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
