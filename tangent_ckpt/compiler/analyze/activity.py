"""Analyze: which variables are active, and the facts about each loop.

Activity is computed per name over the whole function (flow-insensitive, so it
may keep an adjoint that is always zero, never drop one that is not):
a variable is *varied* when it depends on a ``wrt`` input, *useful* when the
result depends on it, and *active* when both.  :func:`varied_on_entry` is the
flow-sensitive half for one question: which names may hold a varied value where
a statement runs (a name bound to a counter, read as an index, then rebound to a
differentiated value is active, but its value at the index is not varied).
"""

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.errors import WrtError


def _diff_operands(expr):
    """Names whose adjoints the expression's rule propagates to."""
    if isinstance(expr, ir.Copy):
        return ir.operand_names(expr.value)
    if isinstance(expr, ir.Prim):
        rule = registry.lookup(expr.fn)
        if rule is None:
            # no rule: every operand would need one; the reverse pass reports it
            return _all_operands(expr)
        if rule.constant:
            return ()
        try:
            bound = rule.bind(expr.args, expr.kwargs)
        except TypeError:  # the call does not fit the rule: the reverse pass reports it
            return _all_operands(expr)
        names = []
        # static parameters too: a differentiated value reaching one is refused by
        # the reverse pass, which needs to see it as active to do so
        for param in rule.differentiable_params() + rule.static_params():
            op = bound.get(param)
            if isinstance(op, ir.Index):
                names.extend(op.names)
            elif isinstance(op, (ir.Name, ir.Seq)):
                names.extend(ir.operand_names(op))
            elif isinstance(op, tuple):  # varargs
                for item in op:
                    names.extend(ir.operand_names(item) if isinstance(item, (ir.Name, ir.Seq))
                                 else ())
        return tuple(names)
    return ()


def _all_operands(prim):
    return tuple(n for a in list(prim.args) + list(prim.kwargs.values())
                 for n in ir.operand_names(a) if not isinstance(a, ir.Index))


def wrt_parameters(function, wrt):
    """The names of the parameters at positions ``wrt`` (checked)."""
    for k in wrt:
        if not -len(function.params) <= k < len(function.params):
            raise WrtError(f"wrt index {k} is out of range: {function.name}() has "
                           f"{len(function.params)} parameters")
    return [function.params[k] for k in wrt]


def activity(function, wrt_names):
    """The set of active variable names of ``function`` for inputs ``wrt_names``."""
    edges = []  # (source name, target name): target depends differentiably on source
    for stmt in ir.walk(function.body):
        if isinstance(stmt, ir.Assign):
            for src in _diff_operands(stmt.expr):
                edges.append((src, stmt.target))
        elif isinstance(stmt, ir.SetItem):
            for src in ir.operand_names(stmt.value):
                edges.append((src, stmt.target))
            edges.append((stmt.target, stmt.target))
    varied = _reachable(set(wrt_names), edges)
    useful = _reachable(ir.output_names(function), [(dst, src) for src, dst in edges])
    return varied & useful


def varied_on_entry(function, wrt_names):
    """{id(statement): (the statement, the names that may hold a value depending
    (differentiably, along the edges :func:`activity` follows) on ``wrt_names`` when
    it runs)}, for every statement of ``function`` (``ir.Function.varied_on_entry``;
    the statement is kept so that a reader checks it is the same object).

    Flow-sensitive and over-approximating: an assignment binds its target varied
    or not from its operands (a ``SetItem`` only adds); an ``if`` joins both
    branches; a loop's head holds what enters it and everything any point of its
    body may hold (so a ``break`` or a skipped rest of the body loses nothing),
    iterated until nothing changes; a ``for`` loop's counter takes a ``range``
    value, never varied."""
    entry, kept = {}, {}

    def block(stmts, varied):
        for stmt in stmts:
            varied = statement(stmt, varied)
        return varied

    def statement(stmt, varied):
        # (joined: a statement object met twice keeps what either place may hold)
        entry[id(stmt)] = entry.get(id(stmt), frozenset()) | varied
        kept[id(stmt)] = stmt
        if isinstance(stmt, ir.Assign):
            if any(n in varied for n in _diff_operands(stmt.expr)):
                return varied | {stmt.target}
            return varied - {stmt.target}
        if isinstance(stmt, ir.SetItem):
            if any(n in varied for n in ir.operand_names(stmt.value)):
                return varied | {stmt.target}
            return varied
        if isinstance(stmt, ir.If):
            return block(stmt.body, varied) | block(stmt.orelse, varied)
        if isinstance(stmt, ir.Segment):
            return block(stmt.body, varied)
        if isinstance(stmt, (ir.For, ir.While)):
            head = varied
            while True:
                inside = head - {stmt.target} if isinstance(stmt, ir.For) else head
                after = block(stmt.body, inside)
                grown = head.union(after, *(entry[id(s)] for s in ir.walk(stmt.body)))
                if grown == head:
                    return head
                head = grown
        return varied

    block(function.body, frozenset(wrt_names))
    return {key: (kept[key], names) for key, names in entry.items()}


def _reachable(start, edges):
    """Every name reachable from ``start`` along ``edges`` (source, target)."""
    successors = {}
    for src, dst in edges:
        successors.setdefault(src, []).append(dst)
    seen, todo = set(start), list(start)
    while todo:
        for nxt in successors.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def assignment_counts(body, params=()):
    """How many places assign each name (parameters count once)."""
    counts = {p: 1 for p in params}
    for stmt in ir.walk(body):
        if isinstance(stmt, (ir.Assign, ir.SetItem)):
            counts[stmt.target] = counts.get(stmt.target, 0) + 1
        elif isinstance(stmt, ir.For):
            counts[stmt.target] = counts.get(stmt.target, 0) + 1
    return counts


class LoopFacts:
    """What a checkpointed loop needs: carried state, invariants, index.

    ``carried``: variables assigned in the body and live at the loop head (read
    in the body before being assigned, or read after the loop).
    ``invariants``: variables read in the body and never assigned there.
    """

    def __init__(self, loop, carried, invariants, locals_):
        self.loop = loop
        self.carried = carried
        self.invariants = invariants
        self.locals = locals_

    def __repr__(self):
        return f"LoopFacts(carried={self.carried}, invariants={self.invariants})"


def upward_exposed(body):
    """Names read in ``body`` before any assignment that surely precedes the read."""
    exposed = []
    defined = set()

    def visit(stmts, defined):
        for stmt in stmts:
            reads = []
            if isinstance(stmt, ir.Assign):
                reads = ir.expr_reads(stmt.expr)
            elif isinstance(stmt, ir.SetItem):
                reads = (stmt.target,) + stmt.index.names + ir.operand_names(stmt.value)
            elif isinstance(stmt, ir.If):
                reads = (stmt.test,)
            elif isinstance(stmt, ir.For):
                reads = tuple(n for b in stmt.bounds for n in ir.operand_names(b))
            elif isinstance(stmt, ir.While):
                reads = stmt.test.names
            elif isinstance(stmt, ir.Break):
                reads = (stmt.flag,)
            elif isinstance(stmt, ir.Segment):
                reads = ir.operand_names(stmt.min_bytes) + ir.operand_names(stmt.enabled)
            for r in reads:
                if r not in defined and r not in exposed:
                    exposed.append(r)
            if isinstance(stmt, (ir.Assign, ir.SetItem)):
                defined.add(stmt.target)
            elif isinstance(stmt, ir.If):
                d1, d2 = set(defined), set(defined)
                visit(stmt.body, d1)
                visit(stmt.orelse, d2)
                defined |= (d1 & d2)
            elif isinstance(stmt, (ir.For, ir.While)):
                inner = set(defined)
                if isinstance(stmt, ir.For):
                    inner.add(stmt.target)
                visit(stmt.body, inner)  # the body may run zero times: defines nothing sure
            elif isinstance(stmt, ir.Segment):
                visit(stmt.body, defined)  # a segment always runs

    visit(body, defined)
    return exposed


def loop_exposed(loop):
    """Names a step of ``loop`` reads before assigning them: its body's upward
    exposed reads, and a ``while`` loop's test (read before every step, and
    after the last: ``while err > tol`` with ``err`` computed in the body)."""
    exposed = upward_exposed(loop.body)
    if isinstance(loop, ir.While):
        exposed += [n for n in loop.test.names if n not in exposed]
    return exposed


def loop_facts(loop, after_reads, defined_before):
    """Carried state and invariants of ``loop``.

    ``after_reads``: names read anywhere after the loop (in program order, or
    anywhere in an enclosing loop's body).  ``defined_before``: names that hold
    a value when the loop starts.
    """
    assigned = list(dict.fromkeys(ir.assigned_names(loop.body)))
    exposed = loop_exposed(loop)
    index = loop.target if isinstance(loop, ir.For) else None
    carried = [n for n in assigned
               if n != index and (n in exposed or n in after_reads)]
    if loop.break_flag and loop.break_flag not in carried:
        carried.append(loop.break_flag)
    reads = list(dict.fromkeys(ir.read_names(loop.body)))
    if isinstance(loop, ir.While):
        reads = list(dict.fromkeys(list(loop.test.names) + reads))
    invariants = [n for n in reads if n not in assigned and n != index
                  and n in defined_before]
    locals_ = [n for n in assigned if n not in carried and n != index]
    return LoopFacts(loop, carried, invariants, locals_)
