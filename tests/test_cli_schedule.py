import builtins
import json

import pytest

import tangent_ckpt
from tangent_ckpt.cli import SUBCOMMANDS, main
from tangent_ckpt.runtime.scheduling.hrevolve import plan_two_level
from tangent_ckpt.runtime.scheduling.online import online_cost
from tangent_ckpt.runtime.scheduling.schedules import revolve_cost, uniform_cost


def test_version(capsys):
    assert main(["--version"]) == 0
    assert tangent_ckpt.__version__ in capsys.readouterr().out


def test_schedule_text(capsys):
    assert main(["schedule", "1000", "10"]) == 0
    out = capsys.readouterr().out
    r, a, t = revolve_cost(1000, 10)
    assert f"r      {r}" in out and str(a) in out and str(t) in out
    assert "sqrt(n)" in out


def test_schedule_json(capsys):
    assert main(["schedule", "1000", "70", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    r, a, t = revolve_cost(1000, 70)
    assert (d["repetition_number"], d["plain_forward_steps"], d["total_forward_steps"]) == (r, a, t)
    assert d["recomputation_factor"] == pytest.approx(t / 1000)
    assert d["peak_memory_states"] == 71
    u = d["uniform"]
    assert u["fits"] and u["peak_snapshots"] <= 70
    assert u["total_forward_steps"] == uniform_cost(1000, u["segment_length"])[1]


@pytest.mark.parametrize("argv", [["schedule", "0", "3"], ["schedule", "x", "3"],
                                  ["schedule", "10", "-1"], ["schedule"], ["nope"]])
def test_bad_arguments_one_line_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err


def test_plot_without_matplotlib(monkeypatch, capsys, tmp_path):
    real_import = builtins.__import__

    def fake(name, *a, **k):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", fake)
    assert main(["schedule", "10", "3", "--plot", str(tmp_path / "s.png")]) == 2
    assert "pip install matplotlib" in capsys.readouterr().err


def test_plot_with_matplotlib(tmp_path):
    pytest.importorskip("matplotlib")
    f = tmp_path / "s.png"
    assert main(["schedule", "30", "3", "--plot", str(f)]) == 0
    assert f.stat().st_size > 0


def test_subcommand_registry_is_extensible():
    assert "schedule" in SUBCOMMANDS
    add, run, help = SUBCOMMANDS["schedule"]
    assert callable(add) and callable(run) and help


def test_schedule_close_to_n_snapshots(capsys):
    # issue 11: `tangent-ckpt schedule 500 499` died with RecursionError
    assert main(["schedule", "500", "499", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["total_forward_steps"] == 999 and d["peak_memory_states"] == 500


def test_schedule_ram_and_disk_json(capsys):
    argv = ["schedule", "1000", "10", "--disk", "100", "--write-cost", "10", "--read-cost", "10", "--json"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    plan = plan_two_level(1000, 10, 100, 10, 10)
    assert (d["total_forward_steps"], d["disk_writes"], d["disk_reads"]) == (
        plan.total_forward_steps, plan.disk_writes, plan.disk_reads)
    assert d["total_cost"] == d["total_forward_steps"] + 10 * (d["disk_writes"] + d["disk_reads"])
    assert d["total_cost"] <= d["ram_only"]["total_cost"] == revolve_cost(1000, 10)[2]


def test_schedule_ram_and_disk_text(capsys):
    assert main(["schedule", "300", "4", "--disk", "6", "--write-cost", "2", "--read-cost", "3"]) == 0
    out = capsys.readouterr().out
    plan = plan_two_level(300, 4, 6, 2, 3)
    assert f"disk writes              {plan.disk_writes}" in out
    assert f"total cost               {plan.cost:g}" in out


def test_schedule_online(capsys):
    assert main(["schedule", "60", "10", "--online", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["schedule"] == "online" and d["exact_up_to"] == 67
    assert d["total_forward_steps"] == online_cost(60, 10)[1] == revolve_cost(60, 10)[2]
    assert main(["schedule", "200", "10", "--online"]) == 0
    assert f"total forward steps  T   {online_cost(200, 10)[1]}" in capsys.readouterr().out


def test_plot_ram_and_disk(tmp_path):
    pytest.importorskip("matplotlib")
    f = tmp_path / "s.png"
    assert main(["schedule", "200", "3", "--disk", "4", "--plot", str(f)]) == 0
    assert f.stat().st_size > 0
    assert main(["schedule", "100", "3", "--online", "--plot", str(tmp_path / "o.png")]) == 0
