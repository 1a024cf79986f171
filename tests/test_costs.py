"""The ``costs=`` option (runtime/scheduling/costs.py): the forms it takes, the errors it gives,
and the timing of one step and one disk snapshot."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt import runtime as rt
from tangent_ckpt.errors import CheckpointError
from tangent_ckpt.runtime.scheduling.costs import Costs, as_costs, measure_costs
from tangent_ckpt.runtime.scheduling.hrevolve import plan_two_level


def test_forms():
    assert as_costs(None) is None and as_costs("measure") == "measure"
    c = as_costs({"forward": 2, "write": 10, "read": 4})
    assert c == Costs(2.0, 0.0, 10.0, 4.0) and c.relative() == (5.0, 2.0)
    assert as_costs((1, 1, 3, 3)) == Costs(1.0, 1.0, 3.0, 3.0)
    assert as_costs(Costs(1, 0, 2, 2)).total(10, 25, 2, 3) == 25 + 4 + 6
    assert hash(as_costs((1, 0, 2, 2)))  # part of the compile cache key


@pytest.mark.parametrize("bad", ["fast", {"forward": 1}, {"forward": 1, "write": 1, "read": 1, "x": 2},
                                 (1, 2), (0, 0, 1, 1), (1, 0, -1, 1), ("a", 0, 1, 1)])
def test_errors(bad):
    with pytest.raises(CheckpointError):
        as_costs(bad)


def test_measure_times_step_write_and_read():
    calls = []
    c = measure_costs(lambda: calls.append("step"), lambda: calls.append("write"),
                      lambda: calls.append("read"), lambda: calls.append("free"))
    assert calls == ["step", "step", "step", "write", "read", "free"]
    assert c.forward > 0 and c.write >= 0 and c.read >= 0


def test_measure_frees_the_test_snapshot_on_errors():
    freed = []

    def fail():
        raise OSError("disk full")
    with pytest.raises(OSError):
        measure_costs(lambda: None, fail, lambda: None, lambda: freed.append(1))
    assert freed == [1]


def rnn_loss(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


def test_costs_option_reaches_the_generated_loop():
    h, W = np.full((2, 3), 0.1), np.eye(3) * 0.5 + 0.01
    g = tc.grad(rnn_loss, wrt=1, checkpoint=True, snapshots=2, disk_snapshots=3,
                costs={"forward": 1, "write": 4, "read": 4})
    assert "costs=(1.0, 0.0, 4.0, 4.0)" in g.source
    with tc.profile() as prof:
        got = g(h, W, 60)
    plan = plan_two_level(60, 2, 3, 4.0, 4.0)
    assert (prof.disk_writes, prof.disk_reads) == (plan.disk_writes, plan.disk_reads)
    assert np.allclose(got, tc.grad(rnn_loss, wrt=1)(h, W, 60), rtol=1e-12, atol=1e-14)


def test_measuring_leaves_nothing_behind_when_the_step_fails(tmp_path):
    def step(t, h):
        raise ValueError("boom")
    loop = rt.CheckpointedLoop(20, snapshots=2, disk_snapshots=2, disk_dir=tmp_path, costs="measure")
    with pytest.raises(ValueError, match="boom"):
        loop.forward(step, np.zeros(3))
    assert list(tmp_path.iterdir()) == []
