"""Desugar: ``enumerate(xs, start=k)`` as ``enumerate(xs, k)``.

The builtin takes its start by position or by keyword, with the same meaning;
the passes and the lowering that unroll or index a loop over ``enumerate``
read the start where Python's signature puts it first, by position (a start
given by keyword crashed the lowering's unrolling with no file and line).
Only a call of the builtin itself (no local or global ``enumerate`` of the
user's) with ``start`` its one keyword is rewritten.

Later (after the passes that unroll loops over containers, which count from the
start themselves), :func:`count_enumerates_from_zero` writes each loop still
counting from a start as one counting from 0, the start added in the body --
the lowering's loops over an array's rows count from 0 only::

    for i, row in enumerate(A, 1):        for i_0, row in enumerate(A):
        y = y + i * row             ->        i = i_0 + 1
                                              y = y + i * row

``i`` is then each trip's number, and after the loop the last one, as in
Python.  A start that is not an int constant is bound to a name before the
loop (``i_start = k``), where Python evaluates it: only where evaluating it
there cannot change what the iterable gives, or the other way round (a name,
arithmetic of names and constants; or an iterable that is a name or a ``zip``
of names); any other start is refused at its line (a start that is no integer,
for which Python raises, too): the lowering counts from 0 only.
"""

import gast

from tangent_ckpt.compiler.desugar.local_bindings import (builtins_meant, local_names,
                                                          names_seen_outside, parameter_names)
from tangent_ckpt.compiler.desugar.view_shape import block_holding, fresh_name, names_taken
from tangent_ckpt.errors import UnsupportedSyntaxError


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


def count_enumerates_from_zero(parsed):
    """Rewrite each ``for i, x in enumerate(xs, start)`` of ``parsed.node`` (nested
    blocks too) as the loop counting from 0 that binds ``i = i_0 + start`` first
    in its body (see the module's docstring), in place."""
    fnode = parsed.node
    loops = [n for n in gast.walk(fnode)
             if isinstance(n, gast.For) and isinstance(n.iter, gast.Call) and
             isinstance(n.iter.func, gast.Name) and n.iter.func.id == "enumerate" and
             len(n.iter.args) + len(n.iter.keywords) == 2]
    if not loops or not builtins_meant({"enumerate"}, fnode, parsed.resolve):
        return
    taken, quiet = names_taken(fnode), quiet_names(fnode, parsed.resolve)
    for loop in loops:
        hoisted = counted_from_zero(loop, taken, quiet)
        if hoisted is None and _counted_by_name(loop):
            raise _refused(parsed, loop)
        if isinstance(hoisted, gast.stmt):
            block, k = block_holding(fnode, loop)
            block.insert(k, hoisted)


def quiet_names(fnode, resolve):
    """The names :func:`counted_from_zero` may read earlier or later than an
    iterable: locals of ``fnode`` alone (no call can rebind them: not
    ``global``/``nonlocal``, not mentioned by a nested scope), and ``zip`` when
    it is the builtin."""
    own = set(local_names(fnode)) - (names_seen_outside(fnode) - set(parameter_names(fnode)))
    return own | ({"zip"} if builtins_meant({"zip"}, fnode, resolve) else set())


def counted_from_zero(loop, taken, quiet=None):
    """``for i, x in enumerate(xs, start)`` -> ``for i_0, x in enumerate(xs): i =
    i_0 + start``, in place (``taken``: the names the function holds; a name
    added joins it; ``quiet``: :func:`quiet_names`, or None where the caller
    knows the iterable is quiet: a ``zip`` of its own lists' names).
    Returns None where the loop is left (no start; a target other than ``name,
    x``; a start that is a constant other than an int, for which Python raises;
    a start that could not be moved before the loop), True where the start is
    an int constant, else the assignment ``i_start = start`` to go before the
    loop."""
    call = loop.iter
    starts = call.args[1:] + [k.value for k in call.keywords if k.arg == "start"]
    target = loop.target
    if len(starts) != 1 or len(call.args) + len(call.keywords) != 2 or \
            isinstance(call.args[0], gast.Starred) or \
            not (isinstance(target, gast.Tuple) and len(target.elts) == 2 and
                 isinstance(target.elts[0], gast.Name)):
        return None
    start = starts[0]
    constant = isinstance(start, gast.Constant)
    if constant and type(start.value) is not int:
        return None  # (enumerate(xs, 1.5) raises: left to the lowering's refusal)
    if not constant and quiet is not None and \
            not (_quiet(start, quiet) or _quiet(call.args[0], quiet)):
        return None
    index = target.elts[0]
    call.args, call.keywords = call.args[:1], []
    counted = fresh_name(f"{index.id}_0", taken)
    target.elts[0] = gast.copy_location(
        gast.Name(id=counted, ctx=gast.Store(), annotation=None, type_comment=None), index)
    hoisted = None
    if not constant:
        held = fresh_name(f"{index.id}_start", taken)
        hoisted = gast.copy_location(gast.Assign(
            targets=[gast.Name(id=held, ctx=gast.Store(), annotation=None,
                               type_comment=None)],
            value=start, type_comment=None), loop)
        start = gast.Name(id=held, ctx=gast.Load(), annotation=None, type_comment=None)
    bound = gast.Assign(targets=[index], value=gast.BinOp(
        left=gast.Name(id=counted, ctx=gast.Load(), annotation=None, type_comment=None),
        op=gast.Add(), right=start), type_comment=None)
    loop.body.insert(0, gast.fix_missing_locations(gast.copy_location(bound, loop)))
    return gast.fix_missing_locations(hoisted) if hoisted is not None else True


def _counted_by_name(loop):
    """``for i, x in enumerate(xs, start)``: a name counting, and a start."""
    call, target = loop.iter, loop.target
    return isinstance(target, gast.Tuple) and len(target.elts) == 2 and \
        isinstance(target.elts[0], gast.Name) and len(call.args) + len(call.keywords) == 2


def _refused(parsed, loop):
    """The error for a start :func:`counted_from_zero` leaves, at its line."""
    call = loop.iter
    start = (call.args[1:] + [k.value for k in call.keywords])[0]
    if isinstance(start, gast.Constant):
        return parsed.located(
            UnsupportedSyntaxError, f"enumerate(..., start) with the start {start.value!r}, "
            f"no integer (Python raises a TypeError)", loop, construct="enumerate(..., start)",
            hint="start from an integer")
    return parsed.located(
        UnsupportedSyntaxError, "enumerate(..., start) whose start and iterable both call "
        "something: which runs first matters", loop, construct="enumerate(..., start)",
        hint="bind the start to a name before the loop, or add it to the index in the body")


def _quiet(node, quiet):
    """Whether evaluating ``node`` earlier or later than an iterable changes
    nothing: names of ``quiet``, constants, arithmetic of those, ``zip(...)`` of
    such (no call of the user's, no draw)."""
    if isinstance(node, gast.Name):
        return node.id in quiet
    if isinstance(node, gast.Constant):
        return True
    if isinstance(node, gast.BinOp):
        return _quiet(node.left, quiet) and _quiet(node.right, quiet)
    if isinstance(node, gast.UnaryOp):
        return _quiet(node.operand, quiet)
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id == "zip" and "zip" in quiet and not node.keywords:
        return all(_quiet(a, quiet) for a in node.args)
    return False
