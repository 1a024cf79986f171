"""examples/ensemble_dask.py: compiled gradients (and a dumped module) shipped to
Dask workers with cloudpickle; each worker checkpoints to its own local disk."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
cloudpickle = pytest.importorskip("cloudpickle")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import ensemble_dask  # noqa: E402
import tangent_ckpt as tc  # noqa: E402
import heat_equation  # noqa: E402


def ours(folder):
    return {p for p in os.listdir(folder) if "tangent_ckpt" in p or "dask" in p}


@pytest.fixture(scope="module")
def client():
    before = ours(tempfile.gettempdir())
    with tempfile.TemporaryDirectory(prefix="tangent_ckpt_dask_") as scratch, \
            dask.config.set({"temporary-directory": scratch}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, local_directory=scratch)
        client = distributed.Client(cluster)
        try:
            yield client
        finally:
            client.close()
            cluster.close()
    assert ours(tempfile.gettempdir()) == before  # no snapshot folder or scratch left


def test_ensemble_of_16_gradients_on_2_workers(client):
    cells, steps = 128, 60
    df = ensemble_dask.gradient_function(snapshots=3, disk_snapshots=2)
    df.compile()
    total = ensemble_dask.ensemble_gradient(client, df, 16, cells, steps)
    serial = sum(df(*ensemble_dask.member_inputs(m, cells, steps)) for m in range(16))
    np.testing.assert_allclose(total, serial, rtol=1e-12, atol=0)
    # and the sum is the gradient of the summed loss (taped, no checkpointing)
    taped = tc.grad(heat_equation.misfit, wrt=1)
    want = sum(taped(*ensemble_dask.member_inputs(m, cells, steps)) for m in range(16))
    np.testing.assert_allclose(total, want, rtol=1e-11)


def call(fn, *args):
    return fn(*args)


def test_a_dumped_module_ships_to_workers(client, tmp_path):
    out = tmp_path / "drnn.py"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-m", "tangent_ckpt", "dump", str(ROOT / "examples" / "rnn.py")
                    + ":loss", "--wrt", "1,2", "--snapshots", "3", "-o", str(out)],
                   check=True, env=env, cwd=str(ROOT), stdin=subprocess.DEVNULL)
    sys.path.insert(0, str(tmp_path))
    try:
        import drnn
    finally:
        sys.path.remove(str(tmp_path))
    cloudpickle.register_pickle_by_value(drnn)  # the workers do not have the file
    try:
        rng = np.random.default_rng(0)
        h, W, b = rng.normal(size=(4, 8)), rng.normal(size=(8, 8)) / 3, rng.normal(size=8)
        fn = getattr(drnn, drnn.__all__[0])
        # scattered, the function itself is serialized: by value, as registered
        [shipped] = client.scatter([fn], broadcast=True)
        got = client.submit(call, shipped, h, W, b, 30, pure=False).result(timeout=120)
        want = fn(h, W, b, 30)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-13)
    finally:
        cloudpickle.unregister_pickle_by_value(drnn)
        sys.modules.pop("drnn", None)


def test_example_main_runs(client, capsys):
    assert ensemble_dask.main(["--members", "16", "--cells", "64", "--steps", "30"],
                              client=client) == 0
    assert "check: OK" in capsys.readouterr().out


def profiled(df, inputs):
    """On a worker: the gradient's disk traffic and the worker's process id."""
    with tc.profile() as prof:
        df(*inputs)
    return prof.disk_bytes_written, os.getpid()


def test_each_worker_checkpoints_to_its_own_disk(client):
    df = ensemble_dask.gradient_function(snapshots=2, disk_snapshots=2)
    df.compile()
    [shipped] = client.scatter([df], broadcast=True)
    runs = [client.submit(profiled, shipped, ensemble_dask.member_inputs(m, 64, 30), pure=False)
            for m in range(4)]
    results = client.gather(runs)
    assert all(written > 0 for written, _ in results)
    workers = set(client.run(os.getpid).values())
    assert {pid for _, pid in results} <= workers and os.getpid() not in workers
