"""``tangent-ckpt dump FILE.py:FUNC``: the gradient as an importable Python module."""

import importlib.util
import inspect
import os
import sys
import traceback

import tangent_ckpt
from tangent_ckpt.api import GradientFunction
from tangent_ckpt.cli.commands import CliError, positive_int, register
from tangent_ckpt.compiler.pipeline import desugared
from tangent_ckpt.emit_module import module_source
from tangent_ckpt.errors import TangentCkptError
from tangent_ckpt.options import CheckpointOptions


def _dump_args(p):
    p.add_argument("target", metavar="FILE.py:FUNC",
                   help="the Python file and the name of the function in it")
    p.add_argument("--wrt", default="0", metavar="I,J",
                   help="comma-separated positions of the arguments to differentiate (default 0)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--snapshots", type=positive_int, metavar="S",
                   help="keep at most S loop states (default: chosen at run time)")
    g.add_argument("--memory-budget", metavar="B",
                   help="bytes or a size like 64MB for the snapshots, measured at run time")
    p.add_argument("--schedule", choices=("revolve", "uniform", "online"), default="revolve",
                   help="checkpointing schedule (default revolve)")
    p.add_argument("--no-checkpoint", action="store_true",
                   help="tape the loops instead of checkpointing them (like tc.grad)")
    p.add_argument("--value", action="store_true",
                   help="the gradient also returns the function's value (tc.value_and_grad)")
    p.add_argument("--mode", choices=("reverse", "forward"), default="reverse",
                   help="reverse: the gradient (default); forward: the tangent-linear "
                        "function (tc.jvp), which takes one tangent per --wrt argument")
    p.add_argument("--backend", choices=("numpy", "numba"), default="numpy",
                   help="numba: the steps decorated with @njit(cache=True) (the [numba] extra)")
    p.add_argument("--stage", choices=("gradient", "desugar"), default="gradient",
                   help="gradient: the generated module (default); desugar: the function as "
                        "the compiler's front half leaves it for lowering (writes through "
                        "views and aliases made explicit, loops over written tuples of "
                        "arrays unrolled), then each helper it inlines")
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
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename and os.path.abspath(frame.filename) == path:
            found = frame.lineno
    return found


def load_module(path_text):
    """Import a Python file by path (its folder on sys.path while it imports), as a module."""
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
                checkpoint=True, value=False, mode="reverse", backend="numpy",
                stage="gradient"):
    """The importable module text `tangent-ckpt dump` prints (raises CliError on user
    errors); with ``stage="desugar"`` the user's function as the front half leaves it."""

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
    if stage == "desugar":
        try:
            return desugared(obj)
        except TangentCkptError as e:
            raise _cli_error(e, path, where) from None
    nparams = len(inspect.signature(obj).parameters)
    for k in wrt_t:
        if not -nparams <= k < nparams:
            raise CliError(f"{where}: --wrt {k} is out of range: {func}() has {nparams} "
                           f"parameter{'s' if nparams != 1 else ''}")
    options = {"backend": backend}
    if checkpoint:
        options.update(checkpoint=True, snapshots=snapshots, memory_budget=memory_budget,
                       schedule=schedule)
        try:
            CheckpointOptions(**options)
        except TangentCkptError as e:
            raise CliError(f"tangent-ckpt dump: {e}") from None
    if mode == "forward":
        if backend != "numpy":
            raise CliError("tangent-ckpt dump: --mode forward has no --backend numba yet")
        return _dump_forward(obj, wrt_t, module, func, path, target, where)
    try:
        if value:
            df = tangent_ckpt.value_and_grad(obj, wrt=wrt_t, **options)
        else:
            df = tangent_ckpt.grad(obj, wrt=wrt_t, **options)
        df.compile()
        kind = ("taped" if not checkpoint else
                f"checkpointed ({schedule}"
                + (f", {snapshots} snapshots" if snapshots else "")
                + (f", memory budget {memory_budget}" if memory_budget else "") + ")")
        header = (f"{'Value and gradient' if value else 'Gradient'} of {func}() from {path} "
                  f"with respect to {', '.join(df.compile().wrt_names)}, loops {kind}.\n"
                  f"Generated by tangent-ckpt {tangent_ckpt.__version__}: "
                  f"tangent-ckpt dump {target} --wrt {','.join(map(str, wrt_t))}"
                  + (" --no-checkpoint" if not checkpoint else "")
                  + (f" --snapshots {snapshots}" if snapshots else "")
                  + (f" --memory-budget {memory_budget}" if memory_budget else "")
                  + (f" --schedule {schedule}" if checkpoint and schedule != "revolve" else "")
                  + (" --value" if value else "")
                  + (f" --backend {backend}" if backend != "numpy" else ""))
        return module_source(df, module=module, function_ref=func, header=header)
    except TangentCkptError as e:
        raise _cli_error(e, path, where) from None


def _dump_forward(obj, wrt, module, func, path, target, where):
    """The tangent-linear function (tc.jvp) as a module: no loops to checkpoint."""
    try:
        jvp = tangent_ckpt.jvp(obj, wrt=wrt)
        header = (f"Tangent-linear function (forward mode) of {func}() from {path} in the "
                  f"direction of {', '.join(jvp.compile().wrt_names)}.\n"
                  f"Generated by tangent-ckpt {tangent_ckpt.__version__}: "
                  f"tangent-ckpt dump {target} --wrt {','.join(map(str, wrt))} --mode forward")
        return module_source(jvp, module=module, function_ref=func, header=header)
    except TangentCkptError as e:
        raise _cli_error(e, path, where) from None


def _cli_error(e, path, where):
    """A compile error as the one line the command prints."""
    text = str(e).replace(os.path.abspath(path), path)
    if getattr(e, "filename", None) is None:
        text = f"{where}: {text}"
    return CliError(" ".join(text.split()))


def _dump_run(args):
    text = dump_source(args.target, wrt=args.wrt, snapshots=args.snapshots,
                       memory_budget=args.memory_budget, schedule=args.schedule,
                       checkpoint=not args.no_checkpoint, value=args.value, mode=args.mode,
                       backend=args.backend, stage=args.stage)
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
