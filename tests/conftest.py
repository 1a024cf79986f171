"""Shared pytest options.

``--fuzz-long``: run the program fuzzer (tests/test_fuzz.py, and the random runs of
tests/test_numba_passes.py) with thousands of
examples instead of the bounded CI count.  When autograd (the second oracle) is
installed, the session ends with how many programs it checked.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import autograd_oracle  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="run the random-program fuzzer with thousands of examples")


def pytest_terminal_summary(terminalreporter):
    counts = autograd_oracle.COUNTS
    if sum(counts.values()):
        terminalreporter.write_line(
            "autograd oracle: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
            " (programs; every compared gradient matched to 1e-10 or the test failed)")
