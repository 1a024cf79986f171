"""Package: which variables a checkpointed loop carries from step to step.

A variable the body assigns is carried when a step reads the value the step
before left (read before assigned in the body) or the code after the loop reads
it; the names the body reads and never assigns are its invariants.  The step
functions take the carried state and the invariants as parameters.
"""

from collections import Counter

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.analyze.activity import loop_exposed, loop_facts


def carried_state(function, loop, defined, bindings, header_reads):
    """The :class:`~tangent_ckpt.compiler.analyze.activity.LoopFacts` of a checkpointed
    ``loop`` of ``function``: its carried state and invariants.  ``defined``:
    the names bound when it starts; ``header_reads``: :func:`header_reads` of
    ``function``, made once per compile."""
    before = set(defined) - set(bindings)
    outside = _reads_outside(function, loop, header_reads)
    facts = loop_facts(loop, outside, before)
    local_first = [c for c in facts.carried if c not in loop_exposed(loop)]
    if local_first:  # assigned before any read in the body: carried only if read later
        after = _reads_after(function.body, loop) | ir.returned_names(function)
        if any(c not in after for c in local_first):
            facts = loop_facts(loop, outside - (set(local_first) - after), before)
    return facts


def header_reads(function):
    """{id(statement): the names its header reads} for every statement of
    ``function``, and how many statements read each name."""
    reads = {id(stmt): set(ir.read_names([_shallow(stmt)])) for stmt in ir.walk(function.body)}
    return reads, Counter(name for names in reads.values() for name in names)


def _reads_outside(function, loop, header_reads):
    """Names read anywhere in the function outside ``loop``'s body (conservative
    stand-in for "read after the loop"): the names some statement outside it
    reads, found by taking the loop's own readers from the function's counts
    (:func:`header_reads`, made once), so that n loops cost O(function + loops), not
    O(n * function)."""
    reads, counts = header_reads
    inside = Counter(name for stmt in [loop, *ir.walk(loop.body)]
                     for name in reads.get(id(stmt), ()))
    names = {name for name, k in counts.items() if k > inside[name]}
    names |= ir.returned_names(function)
    return names


def _reads_after(body, loop):
    """Names read after ``loop`` in program order (a whole enclosing loop counts
    as after), or None when ``loop`` is not in ``body``.  A name the loop body
    assigns before reading it and nothing reads later (a view taken again at the
    top of each step, views.py) need not be carried: the steps run in their own
    functions, so the values before the loop stay for the reverse sweep."""
    for k, stmt in enumerate(body):
        if stmt is loop:
            return set(ir.read_names(body[k + 1:]))
        blocks = [stmt.body, stmt.orelse] if isinstance(stmt, ir.If) else \
            [stmt.body] if isinstance(stmt, (ir.For, ir.While, ir.Segment)) else []
        for block in blocks:
            inner = _reads_after(block, loop)
            if inner is not None:
                inner |= set(ir.read_names(body[k + 1:]))
                if isinstance(stmt, (ir.For, ir.While)):
                    inner |= set(ir.read_names([stmt]))
                return inner
    return None


def target_read_after(function, loop):
    """Whether code that runs after the for ``loop`` may read its loop variable,
    which Python leaves at the last index: the statements after it, the
    function's result, and the rest of every loop around it (the next iteration
    reads what this one left)."""
    if not isinstance(loop, ir.For):
        return False
    return loop.target == function.result or \
        loop.target in _reads_following(function.body, loop)


def _reads_following(body, loop):
    """Names read after ``loop`` (which is in ``body``, at any depth): the
    statements after it in program order and, for each loop around it, that
    loop's header and body except ``loop`` itself; None when it is not in ``body``."""
    for k, stmt in enumerate(body):
        if stmt is loop:
            return set(ir.read_names(body[k + 1:]))
        for block in _blocks(stmt):
            inner = _reads_following(block, loop)
            if inner is not None:
                inner |= set(ir.read_names(body[k + 1:]))
                if isinstance(stmt, (ir.For, ir.While)):
                    inner |= _reads_skipping([stmt], loop)
                return inner
    return None


def _reads_skipping(body, skipped):
    """Names ``body`` reads, leaving out the statement ``skipped`` and its body."""
    names = set()
    for stmt in body:
        if stmt is skipped:
            continue
        if isinstance(stmt, ir.Segment):  # its header: what decides whether it is kept
            names |= set(ir.operand_names(stmt.min_bytes)) | set(ir.operand_names(stmt.enabled))
        else:
            names |= set(ir.read_names([_shallow(stmt)]))
        for block in _blocks(stmt):
            names |= _reads_skipping(block, skipped)
    return names


def _blocks(stmt):
    if isinstance(stmt, ir.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (ir.For, ir.While, ir.Segment)):
        return [stmt.body]
    return []


def _shallow(stmt):
    """A compound statement without its body (its header's reads only)."""
    if isinstance(stmt, ir.If):
        return ir.If(stmt.test, [], [], stmt.line)
    if isinstance(stmt, ir.For):
        return ir.For(stmt.target, stmt.bounds, [], stmt.line)
    if isinstance(stmt, ir.While):
        return ir.While(stmt.test, [], stmt.line)
    return stmt
