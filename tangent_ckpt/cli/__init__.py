"""Command line: ``tangent-ckpt`` / ``python -m tangent_ckpt``.

Subcommands are registered in ``SUBCOMMANDS`` (``commands.py``): each entry is
``name -> (add_arguments(parser), run(args) -> int, help)``, one module per
subcommand (``schedule.py``, ``dump.py``, ``demo_command.py``).  A subcommand
reports a user error by raising :class:`CliError` (one line on stderr, exit
status 2, no traceback).
"""

import argparse
import sys

import tangent_ckpt
from tangent_ckpt.cli import demo_command, dump, schedule  # noqa: F401  (they register)
from tangent_ckpt.cli.commands import SUBCOMMANDS, CliError, register
from tangent_ckpt.cli.dump import dump_source, load_module
from tangent_ckpt.cli.schedule import schedule_summary

__all__ = ["main", "register", "SUBCOMMANDS", "CliError", "dump_source", "load_module",
           "schedule_summary"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CliError(f"{self.prog}: {message}")


def build_parser():
    parser = _Parser(prog="tangent-ckpt",
                     description="Source-to-source reverse-mode AD for NumPy with optimal loop checkpointing")
    parser.add_argument("--version", action="version", version=f"tangent-ckpt {tangent_ckpt.__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for name, (add, run, help) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help, description=help)
        add(p)
        p.set_defaults(_run=run)
    return parser


def main(argv=None):
    """Entry point; returns the exit status."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if getattr(args, "_run", None) is None:
            parser.print_help(sys.stderr)
            return 2
        return int(args._run(args) or 0)
    except CliError as e:
        print(str(e), file=sys.stderr)
        return 2
    except SystemExit as e:  # --version / --help
        return e.code if isinstance(e.code, int) else 0
    except (ValueError, OSError) as e:
        print(f"tangent-ckpt: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
