"""Lower: ``for`` over ``range``, array rows, ``enumerate`` and ``zip`` (also
``reversed`` of a range or of rows, and ``enumerate(zip(...))``), and ``while``;
all become ``ir.For`` over a range or ``ir.While``."""

import ast
import copy
import operator

import gast
import numpy as np

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.lower.generator_refusals import (
    generator_function, refuse_generator_loop,
)
from tangent_ckpt.compiler.desugar.live_rows import live_root, plainly_rebinds, updates
from tangent_ckpt.compiler.lower.scopes import Lowered, rebinds, to_source
from tangent_ckpt.errors import UnsupportedSyntaxError


def builtin_iterator(fn):
    """Whether ``fn`` is a Python builtin (``map``, ``filter``, ``iter``, ...) or not
    known when compiling: its result may be an iterator without a length, not rows."""
    return fn is None or getattr(fn, "__module__", None) == "builtins"


class LoopLowering:
    """``for`` and ``while`` statements."""

    def __init__(self, lowering):
        self.lo = lowering
        self.open = 0  # loops being lowered, also around an inlined helper's body
        self.serials = []  # a number per loop being lowered, unique in the function
        self.started = 0
        self.bound_names = {}  # id(function node) -> (node, names bound other than as indices)
        # the generated names of loop indices over a range or enumerate that nothing else
        # binds: integers wherever they are read (a helper's parameter may be one)
        self.integer_indices = set()

    def loop_body(self, stmts, loop):
        """The body of one trip; ``loop`` (the lowering's ``ctx["loop"]`` while it
        is lowered) gets ``block``, the statement list of the trip itself (see
        ``container_statements.grow``)."""
        saved = self.lo.ctx["loop"]
        self.lo.ctx["loop"] = loop
        self.open += 1
        self.started += 1
        self.serials.append(self.started)
        saved_out = self.lo.out
        try:
            self.lo.out = loop["block"] = []
            self.lo.statements.block(stmts)
            body = self.lo.out
        finally:
            self.lo.out = saved_out
            self.open -= 1
            self.serials.pop()
        self.lo.ctx["loop"] = saved
        return body

    def for_(self, s):
        if self.lo.containers.holds_container(s.iter):  # for W, b in params: unrolled
            self.lo.container_loops.unrolled_for(s)
            return
        if self.lo.container_loops.indexes_a_container(s):  # params[l] in the body
            items = self.lo.container_loops.static_range(s.iter)
            if items is not None:  # for l in range(len(params)): unrolled too
                self.lo.container_loops.unrolled_for(s, items)
                return
        self.lo.run_time.prepare_loop(s)
        if s.orelse:
            raise self.lo.error(UnsupportedSyntaxError, "for ... else", s, construct="for-else",
                             hint="use a flag variable instead of the else clause")
        header = f"for {to_source(s.target)} in {to_source(s.iter)}"
        it = s.iter
        prologue = []  # (target node, sequence operand) assigned at the top of each iteration
        index_target = None
        if isinstance(it, gast.Call):
            if any(isinstance(a, gast.Starred) for a in it.args):
                it = self.lo.callables.spread(it, "rows")  # for x, y in zip(*pairs)
            fn = self.lo.expressions.static_value(it.func)
            if fn is reversed and len(it.args) == 1 and not it.keywords and \
                    isinstance(it.args[0], gast.Call) and \
                    self.lo.expressions.static_value(it.args[0].func) is range:
                if not isinstance(s.target, gast.Name):
                    raise self.lo.error(UnsupportedSyntaxError, "range loop with a tuple target", s,
                                        construct="reversed(range(...)) with a tuple target")
                bounds = self.reversed_range(it.args[0], s.lineno)   # for t in reversed(range(n))
                index_target = s.target.id
                self.lo.containers.loop_indices.add(index_target)
            elif self.reversed_rows(it) is not None:   # for x in reversed(xs)
                seq = self.rows_of(self.reversed_rows(it), s)
                bounds = [self.length(seq, s.lineno)]
                prologue.append((s.target, seq))
            elif fn is range:
                if not isinstance(s.target, gast.Name):
                    raise self.lo.error(UnsupportedSyntaxError, "range loop with a tuple target", s)
                bounds = [self.lo.expressions.atomize(self.lo.expressions.value(a, "bound"), "bound") for a in it.args]
                index_target = s.target.id
                self.lo.containers.loop_indices.add(index_target)
            elif fn is enumerate:
                if not (isinstance(s.target, gast.Tuple) and len(s.target.elts) == 2):
                    raise self.lo.error(UnsupportedSyntaxError, "enumerate needs `i, x` targets", s)
                first, second = s.target.elts
                if not isinstance(first, gast.Name):
                    raise self.lo.error(UnsupportedSyntaxError, "enumerate index must be a name", s)
                index_target = first.id   # (a start: desugar's enumerate_starts.py)
                inner = it.args[0]
                if isinstance(inner, gast.Call) and not inner.keywords and \
                        self.lo.expressions.static_value(inner.func) is zip:
                    # for i, (x, t) in enumerate(zip(X, y))
                    bounds, pairs = self.zipped_rows(inner, second, s)
                    prologue.extend(pairs)
                else:
                    inner = self.reversed_rows(inner) or inner   # enumerate(reversed(xs))
                    seq = self.rows_of(inner, s)
                    bounds = [self.length(seq, s.lineno)]
                    prologue.append((second, seq))
            elif fn is zip:
                bounds, pairs = self.zipped_rows(it, s.target, s)
                prologue.extend(pairs)
            elif generator_function(fn):  # desugar inlines the ones it can
                raise refuse_generator_loop(self.lo, s, fn)
            elif not builtin_iterator(fn):   # for Xb in np.array_split(X, k): its rows
                seq = self.lo.expressions.atomize(self.lo.expressions.value(it, "rows"), "rows")
                bounds = [self.length(seq, s.lineno)]
                prologue.append((s.target, seq))
            else:
                raise self.lo.error(UnsupportedSyntaxError, f"loop over {to_source(it)}", s,
                                 construct="for over an iterator",
                                 hint="loop over range(...), an array, enumerate or zip")
        else:
            seq = self.rows_of(it, s)
            bounds = [self.length(seq, s.lineno)]
            prologue.append((s.target, seq))
        if index_target is not None and (rebinds(s.body, index_target) or
                                         self.bound_elsewhere(index_target, s)):
            # the body rebinds the loop variable (``t = t * 2``), or the name holds
            # other values elsewhere (``t = 0.5 * s`` before the loop, maybe
            # differentiated): the loop counts with an index of its own and binds
            # the user's name from it first in each step, an assignment like any
            # other (after the loop the name holds what the body left, and its
            # adjoint stops at the loop)
            prologue.insert(0, (gast.Name(id=index_target, ctx=gast.Store(), annotation=None,
                                          type_comment=None), None))
            index_target = None
        if index_target is None:
            index = self.lo.namer.fresh("i")
        else:
            index = self.lo.assignments.store_name(index_target)
            self.integer_indices.add(index)
        loop = {"break_flag": None, "node": s}
        saved = self.lo.out
        self.lo.out = []
        for target, seq in prologue:
            if seq is None:  # the loop variable itself
                self.lo.assignments.assign_operand(target, ir.Name(index), s)
                continue
            if isinstance(seq, LiveView):  # the view of the current array, each step
                seq = self.lo.expressions.atomize(self.lo.expressions.value(
                    copy.deepcopy(seq.node), "rows"), "rows")
            self.lo.run_time.refuse_nested(seq, "a loop over the items", s.iter)
            self.lo.assignments.assign_operand(target, ir.Prim(operator.getitem,
                                                [seq, ir.Index(sx.name(index), (index,), plain=True)], {},
                                                "getitem"), s)
        head = self.lo.out
        self.lo.out = saved
        start = self.lo.container_statements.loop_start()
        body = head + self.loop_body(s.body, loop)
        self.lo.container_statements.refuse_made_in_loop(s, start,
                                                          loop.get("made", ()))
        flag = loop["break_flag"]
        if flag:
            self.lo.emit(ir.Assign(flag, ir.Copy(ir.Const(False)), s.lineno))
            body.append(ir.Break(flag, s.lineno))
        self.lo.emit(ir.For(index, bounds, body, s.lineno, header=header, break_flag=flag))

    def bound_elsewhere(self, name, loop):
        """Whether the function binds ``name`` other than as the variable of a loop
        over a range or ``enumerate`` (which bind integers), ``loop`` included."""
        fnode = self.lo.current_scope.parsed.node
        known = self.bound_names.get(id(fnode))
        if known is None or known[0] is not fnode:  # once per function: a walk each loop
            known = self.bound_names[id(fnode)] = (fnode, self._bound_names(fnode))
        return name in known[1]

    def _bound_names(self, fnode):
        index_loops = [n for n in gast.walk(fnode)
                       if isinstance(n, gast.For) and isinstance(n.iter, gast.Call) and
                       self.lo.expressions.static_value(n.iter.func) in (range, enumerate)]
        indices = {id(n.target if isinstance(n.target, gast.Name) else n.target.elts[0])
                   for n in index_loops
                   if isinstance(n.target, gast.Name) or (isinstance(n.target, gast.Tuple)
                                                          and n.target.elts)}
        return {n.id for n in gast.walk(fnode) if isinstance(n, gast.Name) and
                isinstance(n.ctx, gast.Store) and id(n) not in indices}

    def rows_of(self, node, s):
        """The operand whose rows the loop ``s`` visits, ``node`` evaluated once
        where the loop starts.  Python iterates over the array bound then, even
        where the body rebinds the name (``for i, x in enumerate(X): X = X * 2``):
        the array is pinned to a name of its own (found by tests/test_fuzz.py).
        A display (``for a in [x, y]``, ``zip(W, [0.1, 0.2])``) is the rows of
        ``np.stack`` of its items."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return self.lo.expressions.atomize(ir.Prim(
                np.stack, [self.lo.calls.sequence_argument(node, "rows")], {}, "call",
                ref="np.stack"), "rows")
        if not isinstance(node, gast.Name) and live_root(node, s.body) is not None:
            return self.live_view(node, s)
        seq = self.lo.expressions.atomize(self.lo.expressions.value(node, "rows"), "rows")
        if isinstance(node, gast.Name) and plainly_rebinds(s.body, node.id):
            if updates(s.body, node.id):  # in place (rows to come) and another object
                raise self.lo.error(UnsupportedSyntaxError, f"the body of this loop over "
                                    f"'{node.id}' both updates it in place ({node.id} op= v) "
                                    f"and binds it to another array", s,
                                    construct=f"loop over {node.id}, updated and rebound",
                                    hint="loop over a copy (np.copy(...)), or over the "
                                         "indices reading each row when it is needed")
            pinned = self.lo.namer.fresh(f"{node.id}_rows")
            self.lo.emit(ir.Assign(pinned, ir.Copy(seq), s.lineno))
            seq = ir.Name(pinned)
        return seq

    def live_view(self, node, s):
        """``y[1:]``, ``y[::-1]`` (``reversed(y)``), ``Y.T`` of an array the body
        writes into in place: Python reads each row from ``y``'s memory when the
        loop reaches it, so the rows still to come show the writes.  The view's
        bounds are computed where the loop starts, and the view itself again in
        each step, of the current ``y``.  Returns a :class:`LiveView`."""

        class Bounds(gast.NodeTransformer):
            def visit_Slice(inner, part):  # noqa: N805
                for field in ("lower", "upper", "step"):
                    e = getattr(part, field)
                    if e is not None and not isinstance(e, gast.Constant):
                        operand = self.lo.expressions.atomize(
                            self.lo.expressions.value(e, "bound"), "bound")
                        setattr(part, field, Lowered(operand, e))
                return part
        fixed = Bounds().visit(copy.deepcopy(node))
        length = self.length(self.lo.expressions.atomize(
            self.lo.expressions.value(copy.deepcopy(fixed), "rows"), "rows"), s.lineno)
        return LiveView(fixed, length)

    def reversed_rows(self, node):
        """``xs[::-1]`` for ``reversed(xs)`` (not of a range), else None."""
        if not (isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords
                and self.lo.expressions.static_value(node.func) is reversed):
            return None
        arg = node.args[0]
        if isinstance(arg, gast.Call) and self.lo.expressions.static_value(arg.func) is range:
            return None
        rows = gast.Subscript(value=arg, slice=gast.Slice(
            lower=None, upper=None, step=gast.Constant(value=-1, kind=None)), ctx=gast.Load())
        return gast.copy_location(rows, node)

    def zipped_rows(self, call, target, s):
        """The bound (the shortest length) and the (target, rows) pairs of
        ``zip(xs, ys, ...)`` looped over with the tuple ``target``."""
        # zip(reversed(xs), ys): reversed(xs) as xs[::-1], as in a loop of its own
        seqs = [self.rows_of(self.reversed_rows(a) or a, s) for a in call.args]
        if not (isinstance(target, gast.Tuple) and len(target.elts) == len(seqs)):
            raise self.lo.error(UnsupportedSyntaxError, "zip needs one target per sequence", s,
                                construct="zip with another number of targets")
        lengths = [self.length(q, s.lineno) for q in seqs]
        if len(lengths) == 1:
            return lengths, list(zip(target.elts, seqs))
        n = self.lo.namer.fresh("n")
        self.lo.emit(ir.Assign(n, ir.NonDiff(
            sx.builtin_call("min", *[ir.operand_node(x) for x in lengths]),
            tuple(x.id for x in lengths if isinstance(x, ir.Name))), s.lineno))
        return [ir.Name(n)], list(zip(target.elts, seqs))

    def reversed_range(self, call, line):
        """The bounds of ``reversed(range(...))``: those of ``range(...)[::-1]``
        (start, stop and step), computed when the loop starts."""
        args = [self.lo.expressions.atomize(self.lo.expressions.value(a, "bound"), "bound")
                for a in call.args]
        flipped = sx.subscript(sx.builtin_call("range", *[ir.operand_node(a) for a in args]),
                               ast.Slice(lower=None, upper=None, step=sx.const(-1)))
        names = tuple(a.id for a in args if isinstance(a, ir.Name))
        bounds = []
        for part in ("start", "stop", "step"):
            bound = self.lo.namer.fresh(f"reversed_{part}")
            self.lo.emit(ir.Assign(bound, ir.NonDiff(sx.attr(sx.copy_tree(flipped), part), names),
                                   line))
            bounds.append(ir.Name(bound))
        return bounds

    def length(self, seq, line):
        if isinstance(seq, LiveView):
            return seq.length
        n = self.lo.namer.fresh("n")
        self.lo.emit(ir.Assign(n, ir.NonDiff(sx.builtin_call("len", ir.operand_node(seq)),
                                          ir.operand_names(seq)), line))
        return ir.Name(n)

    def while_(self, s):
        self.lo.run_time.prepare_loop(s)
        if s.orelse:
            raise self.lo.error(UnsupportedSyntaxError, "while ... else", s)
        header = f"while {to_source(s.test)}"
        test = self.lo.expressions.nondiff(s.test)
        loop = {"break_flag": None, "node": s}
        start = self.lo.container_statements.loop_start()
        body = self.loop_body(s.body, loop)
        self.lo.container_statements.refuse_made_in_loop(s, start,
                                                          loop.get("made", ()))
        flag = loop["break_flag"]
        if flag:
            self.lo.emit(ir.Assign(flag, ir.Copy(ir.Const(False)), s.lineno))
            body.append(ir.Break(flag, s.lineno))
        self.lo.emit(ir.While(test, body, s.lineno, header=header, break_flag=flag))


class LiveView:
    """A loop's rows read from a view of an array the body writes into:
    ``node`` the view (its bounds computed once), made again each step;
    ``length`` its number of rows, known where the loop starts."""

    def __init__(self, node, length):
        self.node = node
        self.length = length

