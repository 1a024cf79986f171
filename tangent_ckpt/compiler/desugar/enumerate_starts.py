"""Desugar: ``enumerate(xs, start=k)`` as ``enumerate(xs, k)``.

The builtin takes its start by position or by keyword, with the same meaning;
the passes and the lowering that unroll or index a loop over ``enumerate``
read the start where Python's signature puts it first, by position (a start
given by keyword crashed the lowering's unrolling with no file and line).
Only a call of the builtin itself (no local or global ``enumerate`` of the
user's) with ``start`` its one keyword is rewritten.
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import builtins_meant


def position_enumerate_starts(parsed, fnode=None):
    """Rewrite, in ``fnode`` (by default ``parsed.node``; a helper's template,
    ``parsed`` its module's), each ``enumerate(xs, start=k)`` as
    ``enumerate(xs, k)``, in place."""
    fnode = fnode if fnode is not None else parsed.node
    calls = [n for n in gast.walk(fnode)
             if isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and
             n.func.id == "enumerate" and len(n.args) == 1 and
             not isinstance(n.args[0], gast.Starred) and len(n.keywords) == 1 and
             n.keywords[0].arg == "start"]
    if not calls or not builtins_meant({"enumerate"}, fnode, parsed.resolve):
        return
    for call in calls:
        call.args.append(call.keywords[0].value)
        call.keywords = []
