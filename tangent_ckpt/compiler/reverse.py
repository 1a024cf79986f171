"""Reverse: the normalized function -> primal code followed by adjoint code.

Straight-line code needs no tape: a value about to be overwritten is kept in a
local (``h_old = h``) and put back in the reverse sweep.  Inside loops the same
values go on a tape (a list: ``tape.append(h)`` / ``h = tape.pop()``).  Saves
for values the reverse sweep never reads are dropped.

Adjoints are named after the user's variables (``bW`` for ``W``).  The pass
tracks which adjoints are still zero, so the first contribution is a plain
assignment (``bW = ...``) and later ones accumulate (``bW = bW + ...``); a zero
is written out (``bW = 0.0``) only where control flow needs a value.
"""

import builtins
import functools
import operator

import astor
import gast

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.code import Block, Line, Restore, Save
from tangent_ckpt.compiler.ir import render_operand
from tangent_ckpt.errors import UnsupportedFunctionError

SYMBOLS = {"binop:+": "+", "binop:-": "-", "binop:*": "*", "binop:/": "/",
           "binop:**": "**", "binop:@": "@", "binop:%": "%"}


@functools.lru_cache(maxsize=None)
def _parse_template(expression):
    return gast.parse(expression, mode="eval").body


def instantiate(expression, mapping, runtime_alias="rt"):
    """Substitute names in an adjoint expression; unknown free names are runtime helpers."""
    import copy
    tree = copy.deepcopy(_parse_template(expression))

    class Subst(gast.NodeTransformer):
        def visit_Name(self, node):  # noqa: N802
            if node.id in mapping:
                return gast.parse(mapping[node.id], mode="eval").body
            if node.id == "np" or hasattr(builtins, node.id):
                return node
            return gast.Attribute(value=gast.Name(id=runtime_alias, ctx=gast.Load(),
                                                  annotation=None, type_comment=None),
                                  attr=node.id, ctx=gast.Load())

    tree = Subst().visit(tree)
    return astor.to_source(gast.gast_to_ast(gast.Expression(body=tree))).strip()


def _call_arguments(text, fn):
    """``"g, x1, x2"`` when ``text`` is exactly one call ``fn(g, x1, x2)``, else None."""
    if not (text.startswith(fn + "(") and text.endswith(")")):
        return None
    inner = text[len(fn) + 1:-1]
    depth = 0
    for ch in inner:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth < 0:
            return None
    return inner if depth == 0 else None


def _strip_parens(text):
    if text.startswith("(") and text.endswith(")"):
        depth = 0
        for k, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(text) - 1:
                return text
        return text[1:-1]
    return text


def _operand_text(op):
    """``render_operand``, with a negative constant in parentheses: ``(-0.7) ** 2``
    rendered as ``-0.7 ** 2`` is -0.49 (found by tests/test_fuzz.py)."""
    text = render_operand(op)
    if isinstance(op, ir.Const) and text.startswith("-"):
        return f"({text})"
    return text


def render_prim(prim):
    """The primal right-hand side of a primitive application."""
    if prim.render == "call":  # call arguments need no parentheses: np.roll(x, -1)
        parts = [render_operand(a) for a in prim.args] + \
            [f"{k}={render_operand(v)}" for k, v in prim.kwargs.items()]
        return f"{prim.ref}({', '.join(parts)})"
    args = [_operand_text(a) for a in prim.args]
    if prim.render in SYMBOLS:
        return f"{args[0]} {SYMBOLS[prim.render]} {args[1]}"
    if prim.render == "unary:-":
        return f"-{args[0]}"
    if prim.render == "getitem":
        return f"{args[0]}[{prim.args[1].source}]"
    if prim.render == "attr:T":
        return f"{args[0]}.T"
    raise ValueError(f"unknown primitive rendering {prim.render!r}")


def render_expr(expr):
    if isinstance(expr, ir.Prim):
        return render_prim(expr)
    if isinstance(expr, ir.Copy):
        return render_operand(expr.value)
    if isinstance(expr, ir.NonDiff):
        return expr.source
    raise TypeError(expr)


class AdjointNames:
    """``b`` + the variable's name, with a prefix no user variable collides with."""

    def __init__(self, user_names):
        for prefix in ("b", "d", "adj_", "adjoint_"):
            if not any(prefix + n in user_names for n in user_names):
                break
        self.prefix = prefix

    def __call__(self, name):
        return self.prefix + name


class Reverser:
    """Builds the primal and adjoint code of one generated function body."""

    def __init__(self, function, active, namer, adj, bindings, parsed_error,
                 loop_handler=None):
        self.function = function
        self.active = active
        self.namer = namer
        self.adj = adj
        self.bindings = bindings
        self.error = parsed_error
        self.loop_handler = loop_handler  # checkpointed loops (compiler.loops)
        self.slots = {}  # id(stmt) -> (slot name, is tape)
        self.predeclare = []
        self.tape = None
        self.maybe_scalar_zero = set()
        self.counts = {}
        self.owned = set()  # adjoints that are private accumulators: updated in place
        self.batched = set()  # owned adjoints that may be an rt.ProductSum until settled

    # --- primal -----------------------------------------------------------------
    def primal(self, body, defined, possibly, in_loop=False):
        """Primal code for ``body``; ``defined``/``possibly`` are the names surely /
        possibly holding a value (updated in place)."""
        out = []
        for stmt in body:
            if isinstance(stmt, (ir.Assign, ir.SetItem)):
                self._save(out, stmt, stmt.target, defined, possibly, in_loop)
                out.extend(self._primal_statement(stmt))
                defined.add(stmt.target)
                possibly.add(stmt.target)
            elif isinstance(stmt, ir.If):
                d1, d2 = set(defined), set(defined)
                p1, p2 = set(possibly), set(possibly)
                body1 = self.primal(stmt.body, d1, p1, in_loop)
                body2 = self.primal(stmt.orelse, d2, p2, in_loop)
                out.append(Block(f"if {stmt.test}:", body1, stmt.line))
                if body2:
                    out.append(Block("else:", body2, stmt.line))
                defined |= d1 & d2
                possibly |= p1 | p2
            elif isinstance(stmt, (ir.For, ir.While)):
                if stmt.checkpoint and self.loop_handler is not None:
                    out.extend(self.loop_handler.primal(self, stmt, defined, possibly, in_loop))
                else:
                    out.extend(self._primal_loop(stmt, defined, possibly, in_loop))
            elif isinstance(stmt, ir.Break):
                out.append(Block(f"if {stmt.flag}:", [Line("break", stmt.line)], stmt.line))
            elif isinstance(stmt, ir.Segment):  # checkpointed segments (compiler.segments)
                out.extend(self.function.segment_handler.primal(self, stmt, defined, possibly,
                                                                in_loop))
        return out

    def _save(self, out, stmt, target, defined, possibly, in_loop):
        if in_loop:
            if target not in defined:
                self._predeclare(target)
            out.append(Save(target, self._tape(), True, stmt.line))
            self.slots[id(stmt)] = (self._tape(), True)
        elif target in possibly:
            if target not in defined:
                self._predeclare(target)
            slot = self.namer.fresh(f"{target}_old")
            out.append(Save(target, slot, False, stmt.line))
            self.slots[id(stmt)] = (slot, False)

    def _predeclare(self, name):
        if name not in self.predeclare:
            self.predeclare.append(name)

    def _tape(self):
        if self.tape is None:
            self.tape = self.namer.fresh("tape")
        return self.tape

    def _primal_statement(self, stmt):
        if isinstance(stmt, ir.SetItem):
            value = render_operand(stmt.value)
            return [Line(f"{stmt.target} = {stmt.target}.copy()", stmt.line),
                    Line(f"{stmt.target}[{stmt.index.source}] = {value}", stmt.line)]
        return [Line(f"{stmt.target} = {render_expr(stmt.expr)}", stmt.line)]

    def _primal_loop(self, loop, defined, possibly, in_loop):
        out = []
        counter = None
        if isinstance(loop, ir.While) or loop.break_flag:
            counter = self.namer.fresh("steps")
            loop.counter = counter
            fake = ir.Assign(counter, ir.Copy(ir.Const(0)), loop.line)
            self._save(out, fake, counter, defined, possibly, in_loop)
            loop.counter_save = self.slots.get(id(fake))
            out.append(Line(f"{counter} = 0", loop.line))
            defined.add(counter)
            possibly.add(counter)
        inner_defined = set(defined)
        inner_possibly = set(possibly)
        if isinstance(loop, ir.For):
            inner_defined.add(loop.target)
            inner_possibly.add(loop.target)
        body = self.primal(loop.body, inner_defined, inner_possibly, in_loop=True)
        if counter:
            body.insert(0, Line(f"{counter} = {counter} + 1", loop.line))
        if isinstance(loop, ir.For) and getattr(loop, "iter_text", None):
            loop.range_text = loop.iter_text  # a taped segment: `for t in steps`
            header = f"for {loop.target} in {loop.range_text}:"
        elif isinstance(loop, ir.For):
            bounds = ", ".join(render_operand(b) for b in loop.bounds)
            assigned = set(ir.assigned_names(loop.body))
            if any(n in assigned for b in loop.bounds for n in ir.operand_names(b)):
                rng = self.namer.fresh("loop_range")
                out.append(Line(f"{rng} = range({bounds})", loop.line))
                loop.range_text = rng
            else:
                loop.range_text = f"range({bounds})"
            header = f"for {loop.target} in {loop.range_text}:"
        else:
            header = f"while {loop.test.source}:"
        out.append(Block(header, body, loop.line))
        possibly |= inner_possibly
        return out

    # --- adjoint ----------------------------------------------------------------
    def adjoint(self, body, nonzero):
        """Adjoint code for ``body`` (statements in reverse order).

        ``nonzero``: adjoint names that may hold a value at the end of ``body``;
        returns (code, nonzero at the start of ``body``)."""
        out = []
        nonzero = set(nonzero)
        for stmt in reversed(body):
            if isinstance(stmt, ir.Assign):
                self._adjoint_assign(stmt, out, nonzero)
            elif isinstance(stmt, ir.SetItem):
                self._adjoint_setitem(stmt, out, nonzero)
            elif isinstance(stmt, ir.If):
                code1, n1 = self.adjoint(stmt.body, nonzero)
                code2, n2 = self.adjoint(stmt.orelse, nonzero)
                merged = n1 | n2
                code1 += self.materialize(merged - n1, stmt.line)
                code2 += self.materialize(merged - n2, stmt.line)
                if code1 or code2:
                    out.append(Block(f"if {stmt.test}:", code1, stmt.line, True))
                    if code2:
                        out.append(Block("else:", code2, stmt.line, True))
                nonzero = merged
            elif isinstance(stmt, (ir.For, ir.While)):
                if stmt.checkpoint and self.loop_handler is not None:
                    code, nonzero = self.loop_handler.adjoint(self, stmt, nonzero)
                else:
                    code, nonzero = self._adjoint_loop(stmt, nonzero)
                out.extend(code)
            elif isinstance(stmt, ir.Segment):
                code, nonzero = self.function.segment_handler.adjoint(self, stmt, nonzero)
                out.extend(code)
        return out, nonzero

    def materialize(self, names, line):
        code = []
        for b in sorted(names):
            code.append(Line(f"{b} = {self.zero_of(b)}", line, True))
        return code

    def zero_of(self, adjoint_name):
        """How to write a zero adjoint: shaped like the variable's value at this point.

        The reverse sweep has restored the variable there, so the zero has the
        right shape even when the variable changes shape across assignments; a
        scalar ``0.0`` would break adjoints such as ``np.swapaxes(g, 0, 1)``."""
        var = self.primal_of(adjoint_name)
        if var is not None:
            return f"rt.zeros_like({var})"
        self.maybe_scalar_zero.add(adjoint_name)
        return "0.0"

    def primal_of(self, adjoint_name):
        return self._primal_names.get(adjoint_name)

    def accumulators(self, loop):
        """Adjoints of active variables the loop body reads and never assigns: they
        only accumulate across iterations, so they can be private and in place."""
        assigned = set(ir.assigned_names(loop.body))
        if isinstance(loop, ir.For):
            assigned.add(loop.target)
        return {self.adj(n) for n in ir.read_names(loop.body)
                if n in self.active and n not in assigned}

    def make_private(self, names, nonzero, line):
        """Before a loop accumulates in place: fresh zeros, or a private copy."""
        code = []
        for b in sorted(names):
            var = self.primal_of(b)
            if b in nonzero:
                code.append(Line(f"{b} = rt.private_adjoint({b}, {var})", line, True))
            else:
                code.append(Line(f"{b} = rt.zeros_like({var})", line, True))
        return code

    def _adjoint_loop(self, loop, nonzero):
        n0 = set(nonzero)
        accumulators = self.accumulators(loop)
        outer_owned = self.owned
        self.owned = outer_owned | accumulators
        head = set(n0) | accumulators
        try:
            while True:
                code, n_start = self.adjoint(loop.body, head)
                new_head = head | n_start
                if new_head == head:
                    break
                head = new_head
        finally:
            self.owned = outer_owned
        out = self.make_private(accumulators - outer_owned, n0, loop.line)
        out += self.materialize(head - n0 - accumulators, loop.line)
        code += self.materialize(head - n_start, loop.line)
        if isinstance(loop, ir.For):
            rng = loop.range_text
            if loop.break_flag:
                rng = f"{rng}[:{loop.counter}]"
            header = f"for {loop.target} in reversed({rng}):"
        else:
            header = f"for _ in range({loop.counter}):"
        if code:
            out.append(Block(header, code, loop.line, True))
        for b in sorted(self.batched & (accumulators - outer_owned)):
            out.append(Line(f"{b} = rt.settled({b})", loop.line, True))
            self.batched.discard(b)
        if getattr(loop, "counter_save", None):
            slot, tape = loop.counter_save
            out.append(Restore(loop.counter, slot, tape, loop.line))
        return out, head

    def _restore(self, stmt, out):
        slot = self.slots.get(id(stmt))
        if slot is not None:
            out.append(Restore(stmt.target, slot[0], slot[1], stmt.line))

    def _accumulate(self, name, contribution, out, nonzero, line):
        b = self.adj(name)
        if b in nonzero and b in self.owned:
            inner = _call_arguments(contribution, "rt.matmul_adjoint_x2")
            if inner is not None:  # gathered a few steps at a time (rt.ProductSum)
                out.append(Line(f"{b} = rt.accumulate_matmul_adjoint_x2({b}, {inner})", line, True))
                self.batched.add(b)
                return
            out.append(Line(f"{b} += {_strip_parens(contribution)}", line, True))
        elif b in nonzero:
            out.append(Line(f"{b} = {b} + {contribution}", line, True))
        else:
            out.append(Line(f"{b} = {_strip_parens(contribution)}", line, True))
            nonzero.add(b)

    def _adjoint_assign(self, stmt, out, nonzero):
        target = stmt.target
        g = self.adj(target)
        if target in self.active and g in nonzero and not isinstance(stmt.expr, ir.NonDiff):
            expr = stmt.expr
            if isinstance(expr, ir.Copy):
                for name in ir.operand_names(expr.value):
                    if name in self.active:
                        self._accumulate(name, g, out, nonzero, stmt.line)
            elif isinstance(expr, ir.Prim):
                self._adjoint_prim(stmt, expr, g, out, nonzero)
        nonzero.discard(g)
        self._restore(stmt, out)

    def _adjoint_prim(self, stmt, prim, g, out, nonzero):
        rule = registry.lookup(prim.fn)
        active_args = [n for a in list(prim.args) + list(prim.kwargs.values())
                       if not isinstance(a, ir.Index)
                       for n in ir.operand_names(a) if n in self.active]
        if rule is None:
            if active_args:
                name = prim.ref or getattr(prim.fn, "__name__", repr(prim.fn))
                raise self.error(UnsupportedFunctionError,
                                 f"no adjoint rule for {name}", stmt.line,
                                 construct=name,
                                 hint=f"register one with tangent_ckpt.register_adjoint({name}, "
                                      "rule), or compute it outside the differentiated path")
            return
        if rule.constant:
            return
        try:
            bound = rule.bind(prim.args, prim.kwargs)
        except TypeError as exc:
            if not active_args:
                return
            raise self.error(UnsupportedFunctionError,
                             f"the call does not fit the adjoint rule of {rule.name}: {exc}",
                             stmt.line, construct=rule.name,
                             hint="pass the arguments the rule's signature names, or register "
                                  "your own adjoint with tangent_ckpt.register_adjoint") from None
        if rule.vjp is not None:
            self._adjoint_callable(stmt, prim, rule, bound, g, out, nonzero)
            return
        self._check_static(stmt, prim, rule, bound)
        if prim.fn is operator.getitem and self._accumulate_read(stmt, bound, g, out, nonzero):
            return
        mapping = {"g": g, "ans": stmt.target}
        for param, op in bound.items():
            mapping[param] = self._render_bound(op)
        for param, expression in rule.templates.items():
            op = bound.get(param)
            if param in rule.sequence_params and isinstance(op, (ir.Seq, tuple)):
                items = op.items if isinstance(op, ir.Seq) else op
                for k, item in enumerate(items):
                    if isinstance(item, ir.Name) and item.id in self.active:
                        m = dict(mapping, i=str(k))
                        self._accumulate(item.id, instantiate(expression, m), out, nonzero,
                                         stmt.line)
            elif param in rule.sequence_params and isinstance(op, ir.Name) and \
                    op.id in self.active:   # one array passed for the sequence: np.vstack(x)
                if param in rule.whole:
                    contribution = instantiate(rule.whole[param], mapping)
                else:
                    k = self.namer.fresh("k")
                    item = instantiate(expression, dict(mapping, i=k))
                    contribution = f"np.stack([{item} for {k} in range(len({op.id}))])"
                self._accumulate(op.id, contribution, out, nonzero, stmt.line)
            elif isinstance(op, ir.Name) and op.id in self.active:
                self._accumulate(op.id, instantiate(expression, mapping), out, nonzero, stmt.line)
            elif isinstance(op, ir.Seq):
                if any(n in self.active for n in ir.operand_names(op)):
                    raise self.error(UnsupportedFunctionError,
                                     f"{rule.name}: a list of differentiated values passed "
                                     f"as '{param}', which takes one array", stmt.line,
                                     construct=f"{rule.name}([...])",
                                     hint=f"for a list of arrays use {rule.name}(np.stack([...]))")

    def _check_static(self, stmt, prim, rule, bound):
        """Refuse what the rule's expressions would get wrong: a differentiated
        value where the rule has no adjoint (``np.sum(x, initial=y)``, an index
        computed from ``y``), or a value outside the rule's ``only=``."""
        for param in rule.static_params():
            op = bound.get(param)
            items = op if isinstance(op, tuple) else (op,)
            names = [n for item in items if isinstance(item, (ir.Name, ir.Seq, ir.Index))
                     for n in (item.names if isinstance(item, ir.Index)
                               else ir.operand_names(item))]
            active = [n for n in names if n in self.active]
            if active:
                what = "an index" if isinstance(op, ir.Index) else f"argument '{param}'"
                raise self.error(UnsupportedFunctionError,
                                 f"{rule.name}: {what} depends on the differentiated input "
                                 f"({active[0]}), and the rule has no derivative for it",
                                 stmt.line, construct=f"{rule.name}(..., {param}=...)"
                                 if not isinstance(op, ir.Index) else "index",
                                 hint="compute it from constants, or register your own adjoint "
                                      "with tangent_ckpt.register_adjoint")
        for param, allowed in rule.only.items():
            op = bound.get(param)
            value = op.value if isinstance(op, ir.Const) else op
            if isinstance(op, ir.Seq) or isinstance(op, (ir.Name, ir.Index)) or \
                    not any(value is a or (type(value) is type(a) and value == a)
                            for a in allowed):
                shown = render_operand(op) if isinstance(op, (ir.Name, ir.Const, ir.Seq)) \
                    else repr(op)
                raise self.error(UnsupportedFunctionError,
                                 f"{rule.name}(..., {param}={shown}): the adjoint is written "
                                 f"for {param} in {', '.join(map(repr, allowed))} only",
                                 stmt.line, construct=f"{rule.name}(..., {param}={shown})",
                                 hint=f"pass {param} as a constant among those, or register "
                                      "your own adjoint with tangent_ckpt.register_adjoint")

    def _accumulate_read(self, stmt, bound, g, out, nonzero):
        """``x[i]`` read in a loop whose adjoint ``bx`` is a private accumulator: add
        ``g`` into ``bx[i]`` in place, O(size of x[i]) instead of a full-size array
        per step (``price[t]``, ``for row in data``)."""
        base = bound.get("a")
        if not isinstance(base, ir.Name) or base.id not in self.active:
            return False
        b = self.adj(base.id)
        if b not in self.owned or b not in nonzero:
            return False
        index = self._render_bound(bound["index"])
        out.append(Line(f"{b} = rt.accumulate_at({b}, {base.id}, {index}, {g})", stmt.line, True))
        return True

    def _render_bound(self, op):
        if isinstance(op, (ir.Name, ir.Const, ir.Seq, ir.Index)):
            return render_operand(op)
        if isinstance(op, tuple):
            return "(" + ", ".join(self._render_bound(o) for o in op) + ("," if len(op) == 1 else "") + ")"
        if op is None or isinstance(op, (bool, int, float, str)):
            return repr(op)
        name = self.namer.fresh("default")
        self.bindings[name] = op
        return name

    def _adjoint_callable(self, stmt, prim, rule, bound, g, out, nonzero):
        rule_name = self.namer.fresh(f"{getattr(prim.fn, '__name__', 'fn')}_adjoint")
        self.bindings[rule_name] = rule.vjp
        args = ", ".join([render_operand(a) for a in prim.args] +
                         [f"{k}={render_operand(v)}" for k, v in prim.kwargs.items()])
        parts = self.namer.fresh(f"{self.adj(stmt.target)}_parts")
        out.append(Line(f"{parts} = rt.adjoint_parts({rule_name}({g}, {stmt.target}, {args}), "
                        f"{len(prim.args)})", stmt.line, True))
        for k, a in enumerate(prim.args):
            for name in ir.operand_names(a):
                if name in self.active:
                    self._accumulate(name, f"{parts}[{k}]", out, nonzero, stmt.line)

    def _adjoint_setitem(self, stmt, out, nonzero):
        g = self.adj(stmt.target)
        if stmt.target in self.active and g in nonzero:
            index = stmt.index.value_source
            value = stmt.value
            if isinstance(value, ir.Name) and value.id in self.active:
                self._accumulate(value.id, f"rt.setitem_adjoint_value({g}, {index}, {value.id})",
                                 out, nonzero, stmt.line)
            out.append(Line(f"{g} = rt.setitem_adjoint_array({g}, {index})", stmt.line, True))
        self._restore(stmt, out)

    _primal_names = {}
