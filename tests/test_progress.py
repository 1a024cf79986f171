"""Progress of checkpointed loops (runtime/loops/progress.py): off by default and then
silent; on through reporting() or TANGENT_CKPT_PROGRESS=1, with one line per
sweep giving steps done, steps recomputed and snapshots held."""

import numpy as np
import pytest

import tangent_ckpt as tc
from tangent_ckpt.runtime.loops import progress


def rnn(h, W, n):
    for t in range(n):
        h = np.tanh(h @ W)
    return np.sum(h)


def run_while(x, n):
    t = 0
    while t < n:
        x = np.sin(x) * 1.01
        t += 1
    return np.sum(x)


ARGS = (np.array([0.1, -0.2, 0.3]), np.eye(3) * 0.5, 40)


@pytest.fixture
def plain_counter(monkeypatch):
    monkeypatch.setattr(progress, "_tqdm", lambda: None)
    monkeypatch.setattr(progress, "REFRESH", 0.0)
    monkeypatch.delenv("TANGENT_CKPT_PROGRESS", raising=False)


def test_silent_when_off(plain_counter, capsys):
    tc.grad(rnn, wrt=(1,), checkpoint=True, snapshots=3)(*ARGS)
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_reporting_shows_both_sweeps(plain_counter, capsys):
    df = tc.grad(rnn, wrt=(1,), checkpoint=True, snapshots=3)
    with progress.reporting():
        with tc.profile() as prof:
            df(*ARGS)
    err = capsys.readouterr().err
    forward = [line for line in err.replace("\r", "\n").splitlines() if "forward" in line]
    reverse = [line for line in err.replace("\r", "\n").splitlines() if "reverse" in line]
    assert forward[-1].endswith("40/40 steps, 0 recomputed, 3 snapshots"), forward[-1]
    recomputed = prof.forward_steps - 40
    assert f"reverse: 40/40 steps, {recomputed} recomputed, " in reverse[-1], reverse[-1]
    assert recomputed > 0


def test_environment_variable_turns_it_on(plain_counter, monkeypatch, capsys):
    monkeypatch.setenv("TANGENT_CKPT_PROGRESS", "1")
    tc.grad(run_while, checkpoint=True, snapshots=2)(np.array([0.3, 0.1]), 12)
    err = capsys.readouterr().err
    assert "forward: 12/? steps" in err.replace("\r", "\n") or "forward: 12/" in err
    assert "reverse: 12/12 steps" in err


def test_reporting_off_overrides_the_environment(plain_counter, monkeypatch, capsys):
    monkeypatch.setenv("TANGENT_CKPT_PROGRESS", "1")
    with progress.reporting(False):
        tc.grad(rnn, wrt=(1,), checkpoint=True, snapshots=3)(*ARGS)
    assert capsys.readouterr().err == ""


def test_progress_does_not_change_the_gradient(plain_counter, capsys):
    df = tc.grad(rnn, wrt=(1,), checkpoint=True, snapshots=3)
    quiet = df(*ARGS)
    with progress.reporting():
        loud = df(*ARGS)
    np.testing.assert_array_equal(quiet, loud)


def test_tqdm_bar_when_installed(monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.delenv("TANGENT_CKPT_PROGRESS", raising=False)
    with progress.reporting():
        tc.grad(rnn, wrt=(1,), checkpoint=True, snapshots=3)(*ARGS)
    assert "step" in capsys.readouterr().err


@pytest.mark.parametrize("make", [
    lambda f: tc.grad(f, wrt=(1,), checkpoint=True, snapshots=3, progress=True),
    lambda f: tc.value_and_grad(f, wrt=(1,), checkpoint=True, snapshots=3, progress=True),
    lambda f: tc.grad_with_checkpointing(f, wrt=(1,), snapshots=3, progress=True),
], ids=["grad", "value_and_grad", "grad_with_checkpointing"])
def test_progress_option_shows_both_sweeps_and_only_for_that_gradient(plain_counter, capsys,
                                                                      make):
    df = make(rnn)
    df(*ARGS)
    err = capsys.readouterr().err.replace("\r", "\n")
    assert "forward: 40/40 steps" in err and "reverse: 40/40 steps" in err, err
    tc.grad(rnn, wrt=(1,), checkpoint=True, snapshots=3)(*ARGS)  # another gradient: silent
    assert capsys.readouterr().err == ""
    assert not progress.enabled()  # the option does not leak past the call


class _FakeShell:
    config = {"IPKernelApp": {}}


def test_a_kernel_without_ipywidgets_gets_the_text_bar_without_a_warning(monkeypatch):
    """tqdm.auto warned "IProgress not found" in Jupyter without ipywidgets."""
    tqdm_std = pytest.importorskip("tqdm.std")
    import importlib.util
    import sys
    import types
    import warnings
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: _FakeShell()
    monkeypatch.setitem(sys.modules, "IPython", fake)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ipywidgets"
                        else real_find_spec(name, *a))
    assert progress._in_kernel()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bar = progress._tqdm()
    assert bar is tqdm_std.tqdm


@pytest.mark.parametrize("fn, args, options", [
    (rnn, ARGS, {"snapshots": 3}),
    (rnn, ARGS, {"snapshots": 10, "schedule": "uniform"}),
    (rnn, ARGS, {"snapshots": 3, "schedule": "online"}),
    (rnn, ARGS, {"snapshots": 3, "verify": True}),
    (run_while, (np.array([0.1, 0.2]), 30), {"snapshots": 3}),
], ids=["revolve", "uniform", "online", "verify", "online-while"])
def test_the_profiler_and_the_bar_count_the_same_recomputed_steps(plain_counter, capsys, fn,
                                                                  args, options):
    """The profiler said "recomputed 546" where the bar said recomputed=246: it
    counted the forward sweep's first run of each step as recomputed."""
    wrt = (1,) if fn is rnn else (0,)
    with tc.profile() as prof:
        tc.grad(fn, wrt=wrt, checkpoint=True, progress=True, **options)(*args)
    err = capsys.readouterr().err.replace("\r", "\n")
    reverse = [line for line in err.splitlines() if " reverse: " in line][-1]
    bar = int(reverse.split(" recomputed")[0].rsplit(" ", 1)[1])
    (stats,) = prof.loops.values()
    assert stats.steps_recomputed == bar > 0
    assert stats.steps_recomputed == stats.forward_steps - stats.steps  # the forward sweep ran each once
    assert f"  {bar}  " in prof.report()
