"""``tangent-ckpt demo``: the RNN demo of :mod:`tangent_ckpt.demo`."""

from tangent_ckpt import demo
from tangent_ckpt.cli.commands import CliError, register


def _demo_args(p):
    demo.add_arguments(p)


def _demo_run(args):
    if args.steps < 1 or args.snapshots < 1:
        raise CliError("tangent-ckpt demo: --steps and --snapshots must be at least 1")
    return demo.run(args)


register("demo", _demo_args, _demo_run,
         "differentiate a long RNN loop taped and checkpointed: gradient check, peak memory, "
         "recomputation vs the Revolve optimum")
