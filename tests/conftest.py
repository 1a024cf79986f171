"""Shared pytest options.

``--fuzz-long``: run the program fuzzer (tests/test_fuzz.py) with thousands of
examples instead of the bounded CI count.
"""


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store_true", default=False,
                     help="run the random-program fuzzer with thousands of examples")
