"""Transform (forward mode): the lowered function -> its tangent-linear code.

Each primal statement ``y = f(a, b)`` is followed (or preceded, when the
tangent does not read ``y``) by the statement of its tangent, named after the
user's variable with a ``d`` prefix::

    h = np.tanh(_pre)
    dh = d_pre * (1.0 - h * h)

The tangent of a primitive is read from the same registry row as its adjoint
(``tangent=`` expressions of ``t``, or ``linear=``).  Control flow is copied:
``if`` keeps its branches, loops their headers, so a loop of the tangent-linear
program carries (state, tangent state) and needs no tape: memory does not
grow with the trip count.  Tangents known to be zero are not computed; where
control flow needs a value, a zero is written out (``dx = np.zeros_like(x)``).
"""

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.analyze.complex_values import complex_names, refused_for_complex
from tangent_ckpt.compiler.analyze.inexact_arrays import surely_inexact
from tangent_ckpt.compiler.ir import expr_node, operand_node, prim_node
from tangent_ckpt.compiler.transform.reverse import error_factory
from tangent_ckpt.compiler.transform.linear_tangents import each_linear_tangent, joint_tangent
from tangent_ckpt.compiler.transform.rules import (_bound_node, check_static, instantiate,
                                                  singular_guard)
from tangent_ckpt.errors import UnsupportedFunctionError


class TangentNames:
    """``d`` + the variable's name, with a prefix no user variable collides with."""

    def __init__(self, user_names):
        for prefix in ("d", "dot_", "tangent_"):
            if not any(prefix + n in user_names for n in user_names):
                break
        self.prefix = prefix

    def __call__(self, name):
        return self.prefix + name


def tangent_function(function, active, namer, bindings, wrt_names):
    """Transform (forward mode).  Takes the lowered ``ir.Function``, its active
    names, the compile's namer and bindings, and the ``wrt`` parameter names;
    gives ``(code items of the body, tangent names, the tangents nonzero at the
    end)``: the primal statements with their tangents interleaved."""
    tan = TangentNames(namer.used)
    namer.reserve({tan(n) for n in namer.used})
    forward = Forwarder(function, active, namer, bindings, tan)
    nonzero = set(wrt_names)
    defined = set(function.params) | set(bindings)
    code = forward.body(function.body, nonzero, defined)
    return code, tan, nonzero


class Forwarder:
    """Builds the tangent-linear code of one function body.  Offers the seams
    the rules module reads of the ``Reverser`` (``active``, ``error``,
    ``namer``, ``bindings``)."""

    def __init__(self, function, active, namer, bindings, tan):
        self.function = function
        self.active = active
        self.namer = namer
        self.bindings = bindings
        self.tan = tan
        self.error = error_factory(function)
        self.complex_values = frozenset(complex_names(function, bindings))  # complex_values.py
        self.inexact = surely_inexact(function, bindings)  # inexact_arrays.py
        self.bound = set()  # names bound by the statements written so far (on some path)

    def body(self, body, nonzero, defined):
        """Code for ``body``.  ``nonzero``: variables whose tangent may be nonzero;
        ``defined``: variables surely bound (both updated in place)."""
        out = []
        for stmt in body:
            if isinstance(stmt, (ir.Assign, ir.SetItem)):
                self.bound.add(stmt.target)
            if isinstance(stmt, ir.Assign):
                self._assign(stmt, nonzero, out)
                defined.add(stmt.target)
            elif isinstance(stmt, ir.SetItem):
                self._setitem(stmt, nonzero, defined, out)
            elif isinstance(stmt, ir.If):
                self._if(stmt, nonzero, defined, out)
            elif isinstance(stmt, (ir.For, ir.While)):
                self._loop(stmt, nonzero, defined, out)
            elif isinstance(stmt, ir.Break):
                out.append(Block(sx.if_(stmt.flag), [Line(sx.break_(), stmt.line)], stmt.line))
            elif isinstance(stmt, ir.Segment):  # a checkpoint marker: nothing to keep forward
                out.extend(self.body(stmt.body, nonzero, defined))
        return out

    # --- statements ------------------------------------------------------------
    def _assign(self, stmt, nonzero, out):
        target, expr = stmt.target, stmt.expr
        if isinstance(expr, ir.Prim):
            self._refuse_real_only_rule(stmt, expr, nonzero)
        if target not in self.active or isinstance(expr, ir.NonDiff):
            out.append(Line(sx.assign(target, expr_node(expr)), stmt.line))
            nonzero.discard(target)
            return
        if isinstance(expr, ir.Copy):
            out.append(Line(sx.assign(target, expr_node(expr)), stmt.line))
            names = [n for n in ir.operand_names(expr.value) if n in nonzero]
            if names:
                out.append(Line(sx.assign(self.tan(target), sx.name(self.tan(names[0]))),
                                stmt.line))
                nonzero.add(target)
            else:
                nonzero.discard(target)
            return
        overwrites = target in ir.expr_reads(expr)
        ans = self.namer.fresh(f"{target}_new") if overwrites else target
        tangent = self._primitive(stmt, expr, ans, nonzero)
        primal = Line(sx.assign(ans, expr_node(expr)), stmt.line)
        if tangent is None:
            out.append(Line(sx.assign(target, expr_node(expr)), stmt.line))
            nonzero.discard(target)
            return
        line = Line(sx.assign(self.tan(target), tangent), stmt.line)
        if ans not in sx.all_names(tangent):
            out += [line, Line(sx.assign(target, expr_node(expr)), stmt.line)]
        elif overwrites:
            out += [primal, line, Line(sx.assign(target, sx.name(ans)), stmt.line)]
        else:
            out += [primal, line]
        nonzero.add(target)

    def _setitem(self, stmt, nonzero, defined, out):
        """``y[i] = v``: the tangent is written the same way, ``dy[i] = dv``."""
        write = sx.subscript(stmt.target, sx.copy_tree(stmt.index.node))
        out += [Line(sx.assign(stmt.target, sx.method(stmt.target, "copy")), stmt.line),
                Line(sx.assign(write, operand_node(stmt.value)), stmt.line)]
        value = [n for n in ir.operand_names(stmt.value) if n in nonzero]
        if stmt.target not in self.active or (stmt.target not in nonzero and not value):
            return
        dy = self.tan(stmt.target)
        if stmt.target not in nonzero:
            out.append(Line(sx.assign(dy, sx.call("np.zeros_like", stmt.target)), stmt.line))
        else:
            out.append(Line(sx.assign(dy, sx.method(dy, "copy")), stmt.line))
        dvalue = sx.name(self.tan(value[0])) if value else sx.const(0.0)
        if value and stmt.target not in self.inexact:  # maybe an integer array, which
            dvalue = sx.rt("stored_tangent", dvalue, stmt.target)  # truncates what it stores
        out.append(Line(sx.assign(sx.subscript(dy, sx.copy_tree(stmt.index.node)), dvalue),
                        stmt.line))
        nonzero.add(stmt.target)

    def _if(self, stmt, nonzero, defined, out):
        n1, n2 = set(nonzero), set(nonzero)
        d1, d2 = set(defined), set(defined)
        body1 = self.body(stmt.body, n1, d1)
        body2 = self.body(stmt.orelse, n2, d2)
        merged = n1 | n2
        # a tangent a branch leaves unset needs a value only where its variable has
        # one after the ``if`` (bound before it, or by both branches)
        bound = defined | (d1 & d2)
        body1 += self.zeros((merged - n1) & bound, d1, stmt.line)
        body2 += self.zeros((merged - n2) & bound, d2, stmt.line)
        out.append(Block(sx.if_(stmt.test), body1, stmt.line))
        if body2:
            out.append(Block(None, body2, stmt.line))
        nonzero |= merged
        defined |= d1 & d2

    def _loop(self, loop, nonzero, defined, out):
        """The loop with its body's tangents: the tangents it carries are those
        nonzero at its entry or at the end of an iteration (a fixed point)."""
        body = list(loop.body)
        tail = [body.pop()] if body and isinstance(body[-1], ir.Break) else []
        head = set(nonzero)
        bound_before = set(self.bound)  # maybe bound at the loop's entry (in one branch)
        while True:
            inner, inner_defined = set(head), set(defined)
            if isinstance(loop, ir.For):
                inner_defined.add(loop.target)
            code = self.body(body, inner, inner_defined)
            if inner <= head:
                break
            head |= inner
        # a tangent needs a value at the loop's head only where its variable has one
        # there (bound at the body's end, the value the next step or the code after
        # the loop reads): the others are assigned before they are read.  A name
        # bound before the loop in one branch only, that the body rebinds with a
        # zero tangent, is one of them: its tangent from before the loop is stale
        code += self.zeros((head - inner) & inner_defined, inner_defined, loop.line)
        code += self.body(tail, inner, inner_defined)
        # a zero before the loop for each tangent it may carry out: dt = np.zeros_like(t)
        # where t is surely bound, 0.0 where a branch may have bound it (a loop that
        # runs no step leaves t as that branch made it)
        out += self.zeros((head - nonzero) & (defined | bound_before), defined, loop.line)
        if isinstance(loop, ir.For):
            header = sx.for_(loop.target,
                             sx.builtin_call("range", *[operand_node(b) for b in loop.bounds]))
        else:
            header = sx.while_(sx.copy_tree(loop.test.node))
        out.append(Block(header, code, loop.line))
        nonzero |= head

    def zeros(self, names, defined, line):
        """``dx = np.zeros_like(x)`` for tangents control flow needs as values."""
        return [Line(sx.assign(self.tan(n), sx.call("np.zeros_like", n) if n in defined
                               else sx.const(0.0)), line) for n in sorted(names)]

    # --- primitives --------------------------------------------------------------
    def _refuse_real_only_rule(self, stmt, prim, nonzero):
        """A complex value with a tangent reaching a rule written for real input
        (``np.sign``, ``np.linalg.norm``...): refused (complex_values.py)."""
        varied = [n for a in prim.args for n in ir.operand_names(a) if n in nonzero]
        label = refused_for_complex(prim, varied, self.complex_values)
        if label is not None:
            raise self.error(UnsupportedFunctionError, f"{label} of a differentiated complex "
                             "value: its rule is written for real input", stmt.line,
                             construct=label, hint="take np.real / np.imag / np.abs of the "
                             "complex value first (docs/spectral.md)")

    def _primitive(self, stmt, prim, ans, nonzero):
        """The tangent of ``ans = prim(...)`` as an expression, or None when zero."""
        operands = list(prim.args) + list(prim.kwargs.values())
        varied = [n for a in operands if not isinstance(a, ir.Index)
                  for n in ir.operand_names(a) if n in nonzero]
        if not varied:
            return None
        rule = registry.lookup(prim.fn)
        label = prim.ref or getattr(prim.fn, "__name__", repr(prim.fn))
        if rule is None:
            raise self.error(UnsupportedFunctionError, f"no derivative rule for {label}",
                             stmt.line, construct=label,
                             hint=f"register one with tangent_ckpt.register_adjoint({label}, "
                                  f"rule) and tangent_ckpt.register_tangent({label}, rule)")
        if rule.constant:
            return None
        try:
            bound = rule.bind(prim.args, prim.kwargs)
        except TypeError as exc:
            raise self.error(UnsupportedFunctionError,
                             f"the call does not fit the rule of {rule.name}: {exc}",
                             stmt.line, construct=rule.name) from None
        if not rule.has_tangent():
            raise self.error(UnsupportedFunctionError,
                             f"{rule.name} has an adjoint but no tangent rule", stmt.line,
                             construct=rule.name,
                             hint=f"register one with tangent_ckpt.register_tangent({label}, "
                                  "rule)")
        check_static(self, stmt, rule, bound)
        if rule.jvp is not None:
            return self._user_tangent(prim, rule, ans, nonzero)
        if rule.is_joint():
            return joint_tangent(stmt, prim, rule, lambda op: self._tangent_operand(op, nonzero))
        if rule.linear:
            terms = each_linear_tangent(prim, rule, lambda op: self._tangent_operand(op, nonzero))
        else:
            terms = self._expressions(stmt, rule, bound, ans, nonzero)
        total = terms[0]
        for term in terms[1:]:
            total = sx.binop(total, "+", term)
        return total

    def _tangent_operand(self, op, nonzero):
        """The tangent of an operand as a node, or None when it is zero."""
        if isinstance(op, ir.Name) and op.id in nonzero:
            return sx.name(self.tan(op.id))
        return None

    def _expressions(self, stmt, rule, bound, ans, nonzero):
        mapping = {"ans": sx.name(ans)}
        for param, op in bound.items():
            mapping[param] = _bound_node(self, op)
        guard = singular_guard(rule, bound, "t")
        terms = []
        for param in rule.templates:
            op = bound.get(param)
            if isinstance(op, ir.Seq) and any(n in nonzero for n in ir.operand_names(op)):
                raise self.error(UnsupportedFunctionError,
                                 f"{rule.name}: a list of differentiated values passed as "
                                 f"'{param}'", stmt.line, construct=f"{rule.name}([...])",
                                 hint=f"for a list of arrays use {rule.name}(np.stack([...]))")
            tangent = self._tangent_operand(op, nonzero) if isinstance(op, ir.Name) else None
            if tangent is not None:
                template = rule.tangents[param]
                if callable(template):
                    template = self._chosen_tangent(stmt, rule, template, bound)
                terms.append(instantiate(template, dict(mapping, t=tangent), guard))
        return terms

    def _chosen_tangent(self, stmt, rule, choose, bound):
        """The expression a callable tangent chooses for the call's constant arguments;
        refused when one of them is a variable."""
        known = {}
        for param, op in bound.items():
            known_here, value = _constant(op)
            if known_here:
                known[param] = value
        static = [p for p in rule.param_names if p not in rule.templates and p in bound]
        # a variable where the choice reads a constant: no guess at its value
        template = choose(**known) if all(p in known for p in static) else None
        if template is None:
            shown = ", ".join(f"{p}={known[p]!r}" if p in known else f"{p}=<variable>"
                              for p in rule.param_names if p not in rule.templates
                              and p in bound)
            raise self.error(UnsupportedFunctionError,
                             f"{rule.name}: no tangent rule for these arguments ({shown})",
                             stmt.line, construct=rule.name,
                             hint=getattr(choose, "hint", "register your own tangent with "
                                          "tangent_ckpt.register_tangent"))
        return template

    def _user_tangent(self, prim, rule, ans, nonzero):
        rule_name = self.namer.fresh(f"{getattr(prim.fn, '__name__', 'fn')}_tangent")
        self.bindings[rule_name] = rule.jvp
        tangents = [self._tangent_operand(a, nonzero) or sx.const(None) for a in prim.args]
        return sx.call(rule_name, sx.tuple_(tangents), ans,
                       *[operand_node(a) for a in prim.args],
                       **{k: operand_node(v) for k, v in prim.kwargs.items()})


def _constant(op):
    """(True, value) for an argument known at compile time: a literal, a tuple
    of literals or a default; (False, None) for a variable."""
    if isinstance(op, ir.Const):
        return True, op.value
    if isinstance(op, ir.Seq):
        items = [_constant(item) for item in op.items]
        if all(known for known, _ in items):
            return True, tuple(value for _, value in items)
        return False, None
    if isinstance(op, (ir.Name, ir.Index)):
        return False, None
    if isinstance(op, tuple):
        return False, None
    return True, op
