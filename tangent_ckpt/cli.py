"""Command line: ``tangent-ckpt`` / ``python -m tangent_ckpt``.

Subcommands are registered in ``SUBCOMMANDS``: each entry is
``name -> (add_arguments(parser), run(args) -> int, help)``.  To add one (e.g.
``dump``), write the two functions and call :func:`register` (see "schedule").
A subcommand reports a user error by raising :class:`CliError` (one line on
stderr, exit status 2, no traceback).
"""

import argparse
import json
import sys

from tangent_ckpt import schedule_report

__all__ = ["main", "register", "SUBCOMMANDS", "CliError"]

SUBCOMMANDS = {}


class CliError(Exception):
    """A user error: printed as one line on stderr, exit status 2."""


def register(name, add_arguments, run, help):
    """Register a subcommand: ``add_arguments(parser)`` and ``run(args) -> int``."""
    SUBCOMMANDS[name] = [add_arguments, run, help]


# --------------------------------------------------------------------------- schedule

def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _schedule_args(p):
    p.add_argument("n", type=_positive_int, metavar="N", help="number of loop steps")
    p.add_argument("s", type=_positive_int, metavar="S", help="number of snapshots")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--plot", metavar="FILE.png", help="draw the schedule (needs matplotlib)")
    p.add_argument("--disk", type=int, default=0, metavar="D",
                   help="disk snapshots beside the S in RAM: plan RAM + disk for the costs below")
    p.add_argument("--write-cost", type=float, default=1.0, metavar="W",
                   help="cost of one disk write, in forward steps (default 1)")
    p.add_argument("--read-cost", type=float, default=1.0, metavar="R",
                   help="cost of one disk read, in forward steps (default 1)")
    p.add_argument("--online", action="store_true",
                   help="the online schedule's figures (trip count unknown until the loop ends)")


def _schedule_run(args):
    return schedule_report.run(args)


register("schedule", _schedule_args, _schedule_run,
         "print (and optionally plot) the cost of the schedule for N steps and S snapshots "
         "(Revolve, RAM + disk with --disk, or --online)")


# --------------------------------------------------------------------------- dump

def _dump_args(p):
    p.add_argument("target", metavar="FILE.py:FUNC",
                   help="the Python file and the name of the function in it")
    p.add_argument("--wrt", default="0", metavar="I,J",
                   help="comma-separated positions of the arguments to differentiate (default 0)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--snapshots", type=_positive_int, metavar="S",
                   help="keep at most S loop states (default: chosen at run time)")
    g.add_argument("--memory-budget", metavar="B",
                   help="bytes or a size like 64MB for the snapshots, measured at run time")
    p.add_argument("--schedule", choices=("revolve", "uniform", "online"), default="revolve",
                   help="checkpointing schedule (default revolve)")
    p.add_argument("--no-checkpoint", action="store_true",
                   help="tape the loops instead of checkpointing them (like tc.grad)")
    p.add_argument("--value", action="store_true",
                   help="the gradient also returns the function's value (tc.value_and_grad)")
    p.add_argument("-o", "--output", metavar="OUT.py", help="write the module here instead of stdout")


def _parse_wrt(text):
    parts = [t.strip() for t in text.split(",")]
    try:
        wrt = tuple(int(t) for t in parts)
    except ValueError:
        raise CliError(f"tangent-ckpt dump: --wrt expects comma-separated argument positions "
                       f"like 0,1, got {text!r}") from None
    if len(set(wrt)) != len(wrt):
        raise CliError(f"tangent-ckpt dump: --wrt names an argument twice: {text!r}")
    return wrt


def _user_frame(exc, path):
    """(line, text) of the innermost traceback frame inside the user's file, or None."""
    import os
    import traceback
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename and os.path.abspath(frame.filename) == path:
            found = frame.lineno
    return found


def load_module(path_text):
    """Import a Python file by path (its folder on sys.path while it imports), as a module."""
    import importlib.util
    import os
    path = os.path.abspath(path_text)
    if not os.path.exists(path):
        raise CliError(f"{path_text}: no such file")
    if os.path.isdir(path):
        raise CliError(f"{path_text}: is a folder, expected a Python file")
    name = os.path.splitext(os.path.basename(path))[0]
    if not name.isidentifier():
        raise CliError(f"{path_text}: the file name must be a valid module name to be imported")
    folder = os.path.dirname(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CliError(f"{path_text}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.get(name)
    sys.modules[name] = module
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        _restore(name, saved)
        shown = path_text if not e.filename or os.path.abspath(e.filename) == path else e.filename
        where = f"{shown}:{e.lineno}" if e.lineno else shown
        raise CliError(f"{where}: syntax error: {e.msg}") from None
    except SystemExit as e:
        _restore(name, saved)
        raise CliError(f"{path_text}: exited while being imported (status {e.code}); "
                       "guard scripts with `if __name__ == '__main__':`") from None
    except BaseException as e:
        _restore(name, saved)
        if isinstance(e, KeyboardInterrupt):
            raise
        line = _user_frame(e, path)
        where = f"{path_text}:{line}" if line else path_text
        raise CliError(f"{where}: error while importing: {type(e).__name__}: {e}") from None
    finally:
        try:
            sys.path.remove(folder)
        except ValueError:  # pragma: no cover
            pass
    return module


def _restore(name, saved):
    if saved is None:
        sys.modules.pop(name, None)
    else:
        sys.modules[name] = saved


def _split_target(target):
    path, sep, func = target.rpartition(":")
    if not sep or not path or not func:
        raise CliError(f"tangent-ckpt dump: expected FILE.py:FUNC, got {target!r}")
    return path, func


def dump_source(target, wrt="0", snapshots=None, memory_budget=None, schedule="revolve",
                checkpoint=True, value=False):
    """The importable module text `tangent-ckpt dump` prints (raises CliError on user errors)."""
    import inspect
    import tangent_ckpt as tc
    import os
    from tangent_ckpt.api import CheckpointOptions, GradientFunction
    from tangent_ckpt.emit_module import module_source
    from tangent_ckpt.errors import TangentCkptError

    path, func = _split_target(target)
    wrt_t = _parse_wrt(wrt) if isinstance(wrt, str) else tuple(wrt)
    if not checkpoint and (snapshots is not None or memory_budget is not None or
                           schedule != "revolve"):
        raise CliError("tangent-ckpt dump: --no-checkpoint cannot be combined with "
                       "--snapshots, --memory-budget or --schedule")
    module = load_module(path)
    obj = getattr(module, func, None)
    if obj is None:
        names = sorted(k for k, v in vars(module).items()
                       if inspect.isfunction(v) and not k.startswith("_")
                       and v.__module__ == module.__name__)
        raise CliError(f"{path}: no function named {func!r}"
                       + (f" (functions defined there: {', '.join(names)})" if names else ""))
    if isinstance(obj, GradientFunction):  # a decorated function: differentiate the original
        obj = obj.fn
    if not inspect.isfunction(obj):
        raise CliError(f"{path}: {func!r} is a {type(obj).__name__}, not a Python function")
    try:
        lineno = inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        lineno = None
    where = f"{path}:{lineno}" if lineno else path
    nparams = len(inspect.signature(obj).parameters)
    for k in wrt_t:
        if not -nparams <= k < nparams:
            raise CliError(f"{where}: --wrt {k} is out of range: {func}() has {nparams} "
                           f"parameter{'s' if nparams != 1 else ''}")
    options = {}
    if checkpoint:
        options = dict(checkpoint=True, snapshots=snapshots, memory_budget=memory_budget,
                       schedule=schedule)
        try:
            CheckpointOptions(**options)
        except TangentCkptError as e:
            raise CliError(f"tangent-ckpt dump: {e}") from None
    try:
        if value:
            df = tc.value_and_grad(obj, wrt=wrt_t, **options)
        else:
            df = tc.grad(obj, wrt=wrt_t, **options)
        df.compile()
        kind = ("taped" if not checkpoint else
                f"checkpointed ({schedule}"
                + (f", {snapshots} snapshots" if snapshots else "")
                + (f", memory budget {memory_budget}" if memory_budget else "") + ")")
        import tangent_ckpt
        header = (f"{'Value and gradient' if value else 'Gradient'} of {func}() from {path} "
                  f"with respect to {', '.join(df.compile().wrt_names)}, loops {kind}.\n"
                  f"Generated by tangent-ckpt {tangent_ckpt.__version__}: "
                  f"tangent-ckpt dump {target} --wrt {','.join(map(str, wrt_t))}"
                  + (" --no-checkpoint" if not checkpoint else "")
                  + (f" --snapshots {snapshots}" if snapshots else "")
                  + (f" --memory-budget {memory_budget}" if memory_budget else "")
                  + (f" --schedule {schedule}" if checkpoint and schedule != "revolve" else "")
                  + (" --value" if value else ""))
        return module_source(df, module=module, function_ref=func, header=header)
    except TangentCkptError as e:
        text = str(e).replace(os.path.abspath(path), path)
        if getattr(e, "filename", None) is None:
            text = f"{where}: {text}"
        raise CliError(" ".join(text.split())) from None


def _dump_run(args):
    text = dump_source(args.target, wrt=args.wrt, snapshots=args.snapshots,
                       memory_budget=args.memory_budget, schedule=args.schedule,
                       checkpoint=not args.no_checkpoint, value=args.value)
    if args.output:
        try:
            with open(args.output, "w") as fh:
                fh.write(text)
        except OSError as e:
            raise CliError(f"{args.output}: cannot write: {e.strerror or e}") from None
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


register("dump", _dump_args, _dump_run,
         "print the gradient of FILE.py:FUNC as an importable Python module")


# --------------------------------------------------------------------------- demo

def _demo_args(p):
    from tangent_ckpt import demo
    demo.add_arguments(p)


def _demo_run(args):
    from tangent_ckpt import demo
    return demo.run(args)


register("demo", _demo_args, _demo_run,
         "differentiate a long RNN loop taped and checkpointed: gradient check, peak memory, "
         "recomputation vs the Revolve optimum")


# --------------------------------------------------------------------------- main

class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CliError(f"{self.prog}: {message}")


def build_parser():
    import tangent_ckpt
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
