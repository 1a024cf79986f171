"""The table of subcommands, ``name -> (add_arguments(parser), run(args) -> int, help)``,
and the error a subcommand raises for a user's mistake.

To add one, write the two functions in a module of this package and call
:func:`register` there (see ``schedule.py``); list the module in ``__init__.py``.
"""

import argparse

SUBCOMMANDS = {}


class CliError(Exception):
    """A user error: printed as one line on stderr, exit status 2."""


def register(name, add_arguments, run, help):
    """Register a subcommand: ``add_arguments(parser)`` and ``run(args) -> int``."""
    SUBCOMMANDS[name] = [add_arguments, run, help]


def positive_int(text):
    """An argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
