"""Shared pytest options.

Runs alone or across processes (``python -m pytest -n auto``, pytest-xdist, the test
extra): each worker then has a temporary folder of its own.

``--fuzz-long``: run the program fuzzer (tests/test_fuzz.py, and the random runs of
tests/test_numba_passes.py) with thousands of
examples instead of the bounded CI count.  When autograd (the second oracle) is
installed, the session ends with how many programs it checked.
"""

import atexit
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

# Under pytest-xdist (``-n auto``) each worker gets a temporary folder of its own, so
# that the tests checking that a gradient leaves no file behind see only their own
# worker's files; processes the tests start inherit it through TMPDIR.
if os.environ.get("PYTEST_XDIST_WORKER"):
    _worker_tmp = os.path.join(tempfile.gettempdir(),
                               f"tc-tests-{os.getpid()}-{os.environ['PYTEST_XDIST_WORKER']}")
    os.makedirs(_worker_tmp, exist_ok=True)
    os.environ["TMPDIR"] = _worker_tmp
    tempfile.tempdir = _worker_tmp
    atexit.register(shutil.rmtree, _worker_tmp, ignore_errors=True)  # nothing left behind

import autograd_oracle  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="run the random-program fuzzer with thousands of examples")
    parser.addoption("--fuzz-examples", type=int, default=None,
                     help="with --fuzz-long: this many examples per fuzz test instead of "
                          "4000 (a long run bounded to fit a time slot)")


def pytest_terminal_summary(terminalreporter):
    counts = autograd_oracle.COUNTS
    if sum(counts.values()):
        terminalreporter.write_line(
            "autograd oracle: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
            " (programs; every compared gradient matched to 1e-10 or the test failed)")
