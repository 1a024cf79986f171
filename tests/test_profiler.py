import threading

import numpy as np
import pytest

import tangent_ckpt
from tangent_ckpt.runtime.loops.driver import CheckpointedLoop
from tangent_ckpt.runtime.loops.profiler import active_profilers, profile, record
from tangent_ckpt.runtime.scheduling.schedules import revolve_cost


def step(t, h):
    return np.sin(h) + 0.1


def adj(t, h, bh):
    tape = np.cos(h)  # allocate something like a tape
    return bh * tape


def run(n, s, name):
    loop = CheckpointedLoop(n, snapshots=s, name=name)
    loop.forward(step, np.ones(1000))
    return loop.reverse(adj, np.ones(1000))


def test_counts_per_loop_and_totals():
    with tangent_ckpt.profile() as prof:
        run(50, 4, "a")
        run(20, 2, "b")
        run(20, 2, "b")
    a, b = prof.loops["a"], prof.loops["b"]
    assert a.forward_steps == revolve_cost(50, 4)[1] + 1 and a.recorded_steps == 50
    assert b.forward_steps == 2 * (revolve_cost(20, 2)[1] + 1) and b.runs == 2
    assert prof.forward_steps == a.forward_steps + b.forward_steps
    assert a.peak_snapshots == 4 and b.peak_snapshots == 2 and prof.peak_snapshots == 4
    assert a.peak_snapshot_bytes == 4 * 8000
    assert a.snapshots_stored >= 4 and a.disk_bytes_written == 0
    assert a.tape_bytes_per_step is not None and a.tape_bytes_per_step >= 8000
    # the 50 states a full tape keeps, less the 4 snapshots held
    assert a.memory_saved_bytes == 50 * 8000 - 4 * 8000
    text = prof.report()
    assert "TOTAL" in text and "a" in text.splitlines()[2]


def test_tape_not_measured_when_tracemalloc_busy():
    import tracemalloc
    tracemalloc.start()
    try:
        with profile() as prof:
            run(10, 2, "t")
    finally:
        tracemalloc.stop()
    assert prof.loops["t"].tape_bytes_per_step is None
    assert prof.loops["t"].memory_saved_bytes == 10 * 8000 - 2 * 8000


def test_nested_profilers_and_inactive():
    run(5, 2, "nobody")  # no profiler active: nothing breaks
    with profile() as outer:
        with profile() as inner:
            run(5, 2, "x")
        run(5, 2, "y")
    assert "x" in inner.loops and "y" not in inner.loops
    assert set(outer.loops) == {"x", "y"}
    assert active_profilers() == []


def test_threads_do_not_mix():
    results = {}

    def work(name, n):
        with profile() as p:
            run(n, 3, name)
        results[name] = p

    ts = [threading.Thread(target=work, args=(f"th{i}", 10 + 5 * i)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i in range(4):
        p = results[f"th{i}"]
        assert set(p.loops) == {f"th{i}"}
        assert p.recorded_steps == 10 + 5 * i


def test_record_hook():
    with profile() as prof:
        record("scope", forward_steps=3, peak_snapshots=2)
        record("scope", forward_steps=4, peak_snapshots=1)
    assert prof.loops["scope"].forward_steps == 7 and prof.loops["scope"].peak_snapshots == 2


def test_the_report_has_one_column_per_meaning_and_readable_bytes():
    with profile() as prof:
        run(50, 4, "a")
    lines = prof.report().splitlines()
    heads = [h.strip() for h in lines[0].split("  ") if h.strip()]
    assert heads == ["loop", "runs", "steps", "recomputed", "adjoint steps", "checkpoints",
                     "peak snapshots", "held", "saved", "disk written", "tape/step"]
    a = dict(zip(heads, lines[2].split()[:7]))
    stats = prof.loops["a"]
    assert a["recomputed"] == str(stats.steps_recomputed)
    assert a["adjoint steps"] == "50" and a["steps"] == "50"
    assert "32.0 kB" in lines[2]  # 4 snapshots of 8000 bytes held
    assert "368.0 kB" not in lines[2] and "368 kB" in lines[2]  # 50 * 8000 - 4 * 8000 saved


@pytest.mark.parametrize("n, text", [(0, "0 B"), (999, "999 B"), (1000, "1.0 kB"),
                                     (8000, "8.0 kB"), (368000, "368 kB"),
                                     (1_500_000, "1.5 MB"), (2 * 10 ** 9, "2.0 GB")])
def test_readable_bytes(n, text):
    from tangent_ckpt.runtime.loops.profiler import readable_bytes
    assert readable_bytes(n) == text
