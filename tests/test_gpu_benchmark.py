"""benchmarks/gpu.py runs where there is no GPU: its CPU rows, its GPU rows
reported as skipped (the full table needs a GPU machine; docs/backends.md)."""

import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def load_benchmark():
    path = os.path.join(HERE, "..", "benchmarks", "gpu.py")
    spec = importlib.util.spec_from_file_location("gpu_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_benchmark_runs_its_cpu_rows_without_a_gpu(capsys):
    gpu = load_benchmark()
    assert gpu.main(["--cpu-only", "--quick", "--problems", "rnn32", "--repeat", "1",
                     "--methods", "tc-numpy-revolve,tc-cupy-revolve,jax-scan-ckpt"]) == 0
    out = capsys.readouterr().out
    assert "no GPU here (--cpu-only)" in out
    row = next(line for line in out.splitlines() if "tc-numpy-revolve" in line and "cpu" in line)
    assert " ms" in row or " s " in row     # timed, with a peak memory
    for method in ("tc-cupy-revolve", "jax-scan-ckpt"):
        assert "skipped" in next(line for line in out.splitlines()
                                 if line.startswith("rnn32") and method in line)


def test_gpu_benchmark_refuses_an_unknown_method():
    gpu = load_benchmark()
    with pytest.raises(SystemExit):
        gpu.main(["--methods", "tc-cuda"])
