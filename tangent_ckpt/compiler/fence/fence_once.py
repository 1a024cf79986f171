"""Fence: the view lowering and the aliasing fence, run once before lowering on
the differentiated function and on every user function it may inline.

For the differentiated function, ``views.py`` makes the writes through views it
can follow explicit and ``aliasing.py`` refuses the rest, at once.  The helpers,
methods and lambdas the lowering may inline are found from what the code names
(``reached_functions.py``) and prepared the way the lowering inlines them: a
function called by name as a helper (its views followed, then fenced), a method
or generator as written (fenced).  What preparing one raises is kept, and the
lowering raises it where it inlines that function (``fenced.py``): a helper that
is named but never inlined refuses nothing, as before.
"""

import collections

from tangent_ckpt.compiler.fence.aliasing import check_writes
from tangent_ckpt.compiler.fence.fenced import Fenced, FencedFunction
from tangent_ckpt.compiler.frontend.parse import parse_function
from tangent_ckpt.compiler.frontend.reached_functions import (
    FUNCTION, functions_named, functions_of_arguments,
)
from tangent_ckpt.compiler.desugar.views import follow_views


def fence_once(parsed, containers=None):
    """Follow the views of ``parsed`` (rewriting its tree in place) and fence its
    writes, then prepare every function it may inline; returns the
    :class:`~.fenced.Fenced` the lowering reads.  ``containers``: the structures
    of the arguments given as containers or objects (their classes' methods)."""
    fenced = Fenced()
    followed = follow_views(parsed)
    receivers, fenced.findings = check_writes(parsed, followed=followed)
    fenced.checked_receivers.update(receivers)
    fenced.index.add(fenced.findings)
    fenced.marks.update(followed.marks)
    pending = collections.deque(functions_named(parsed))
    pending.extend(functions_of_arguments(containers))
    while pending:
        role, fn = pending.popleft()
        if (role, fn) in fenced.functions:
            continue
        prepared = fenced.functions[(role, fn)] = _prepared(role, fn, fenced)
        if prepared.error is None:
            pending.extend(functions_named(prepared.parsed))
    return fenced


def _prepared(role, fn, fenced):
    try:
        parsed = parse_function(fn)
    except Exception as error:  # raised again where the lowering inlines fn
        return FencedFunction(None, error)
    try:
        if role == FUNCTION:
            followed = follow_views(parsed, helper=True)
            receivers, findings = check_writes(parsed, followed=followed)
            fenced.marks.update(followed.marks)
        else:
            receivers, findings = check_writes(parsed)
    except Exception as error:
        return FencedFunction(parsed, error)
    fenced.checked_receivers.update(receivers)
    fenced.index.add(findings)
    return FencedFunction(parsed, findings=findings)
