"""Lower: comprehensions and generator expressions, and ``for`` loops over
containers of static structure.

Over a container (``[np.dot(w, x) for w in ws]``, ``for W, b in params:``) the
loop is unrolled: one copy of its body per element, in which the loop target
is bound to that element -- the elements may have different shapes (the layers
of a network), which one run-time loop could not carry.  A comprehension's
variables live in a scope of their own, as in Python 3 (they never overwrite
the function's variables of the same name).

Over ``range(n)`` or the rows of an array the length is only known at run time:
``sum(f(x) for x in xs)`` becomes a loop accumulating into a variable, and a
list comprehension a loop that fills the rows of an array (what ``np.stack``
of the list would give).
"""

import ast

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.lower.container_values import (
    DictValue, iteration_items,
)
from tangent_ckpt.compiler.lower.scopes import ObjectValue, Scope, TupleValue, to_source, walk_no_defs


def _targets(node):
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _of_constants(node):
    """Is ``node`` (a stdlib ast expression) a comparison or arithmetic of constants?"""
    allowed = (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.Constant, ast.Tuple,
               ast.Load, ast.cmpop, ast.boolop, ast.unaryop, ast.operator)
    return all(isinstance(n, allowed) for n in ast.walk(node))


def _loop_target_stores(node, name):
    """How many times ``node`` binds ``name`` as a ``for`` target."""
    return sum(_stores(n.target, name) for n in gast.walk(node) if isinstance(n, gast.For))


def _stores(node, name):
    """How many times ``node`` binds ``name`` in its own scope: a comprehension's
    variables are local to the comprehension (Python 3), so ``[p[i] for i in
    range(3)]`` does not bind the ``i`` of a later ``for i in ...``."""
    own = {id(n) for c in gast.walk(node) if isinstance(c, _COMPREHENSIONS)
           for g in c.generators for n in gast.walk(g.target)}
    return sum(1 for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == name and
               isinstance(n.ctx, gast.Store) and id(n) not in own)


_COMPREHENSIONS = (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)


#: the most copies of a loop's body unrolled for an index computed from its counter
MOST_UNROLLED_COPIES = 256


def _mentions(node, names):
    return any(isinstance(n, gast.Name) and n.id in names for n in gast.walk(node))


class ComprehensionLowering:
    """List, dict and generator comprehensions; ``for`` over containers."""

    def __init__(self, lowering):
        self.lo = lowering

    def refuse(self, what, node, hint):
        return self.lo.containers.refuse(what, node, hint)

    # --- for over a container -----------------------------------------------------
    def static_range(self, node):
        """The values of ``range(...)`` whose bounds are constants or lengths of
        containers (``range(len(params))``), else None.  Emits nothing."""
        if not (isinstance(node, gast.Call) and not node.keywords and
                self.lo.expressions.static_value(node.func) is range):
            return None
        bounds = [self.lo.containers.static_scalar(a) for a in node.args]
        return [ir.Const(k) for k in range(*bounds)] if all(
            type(b) is int for b in bounds) else None

    def indexes_a_container(self, s):
        """Does the body of ``for i in ...`` index a container with ``i`` (``ps[i]``,
        ``obs[i - 1]``, ``p["W" + str(i + 1)]``), or with a name the body binds
        from ``i`` (``key = "W" + str(i); p[key]``)?"""
        if not isinstance(s.target, gast.Name):
            return False
        if any(isinstance(n, gast.Subscript) and isinstance(n.slice, gast.Name) and
               n.slice.id == s.target.id and self.lo.containers.holds_container(n.value)
               for n in gast.walk(s)):
            return True  # ps[i]: at most one copy per item
        items = self.static_range(s.iter)
        if items is not None and len(items) > MOST_UNROLLED_COPIES:
            return False  # ps[i % 2] in range(1000): left a loop (refused at ps[i % 2])
        counters = {s.target.id}
        bindings = [n for n in gast.walk(s) if isinstance(n, gast.Assign) and
                    len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)]
        grown = True
        while grown:  # names computed from the counter, through names computed from it
            grown = False
            for b in bindings:
                if b.targets[0].id not in counters and _mentions(b.value, counters):
                    counters.add(b.targets[0].id)
                    grown = True
        return any(isinstance(n, gast.Subscript) and self.lo.containers.holds_container(n.value)
                   and _mentions(n.slice, counters) for n in gast.walk(s))

    def unrolled_for(self, s, items=None):
        """``for target in container:`` -- the body once per element (``items``:
        the elements, when the loop is over a range of constants)."""
        for sub, in_loop in (pair for stmt in s.body for pair in walk_no_defs(stmt)):
            if isinstance(sub, gast.Return) or (isinstance(sub, gast.Break) and not in_loop):
                # (a return in the loop is a break by now: desugar/loop_exits.py)
                word = "return" if isinstance(sub, gast.Return) else "break (or return)"
                raise self.refuse(f"{word} inside a loop over a list, tuple or dict", sub,
                                  "the loop is unrolled (one copy per element): set a flag "
                                  "and skip the rest of the body with if")
        if s.orelse:
            raise self.refuse("for ... else", s, "use a flag variable instead of the else "
                                                 "clause")
        if items is None:
            items = iteration_items(self.lo.expressions.value(s.iter, "item"))
        fnode = self.lo.current_scope.parsed.node
        only_here = {n for n in _targets(s.target)
                     if _stores(fnode, n) == _loop_target_stores(fnode, n)}
        saved = self.lo.ctx.get("unrolled", 0)
        self.lo.ctx["unrolled"] = saved + 1  # `continue` ends this element's copy
        try:
            for item in items:
                self.bind_target(s.target, item, s, only_here)
                self.lo.statements.block(s.body)
        finally:
            self.lo.ctx["unrolled"] = saved

    def bind_target(self, target, item, node, constant_names):
        """``target = item`` for one element; a key (a constant) is bound as the
        constant itself to a name in ``constant_names`` (bound nowhere else), so
        that ``d[k]`` reads a known key."""
        if isinstance(target, gast.Name) and isinstance(item, ir.Const) and \
                target.id in constant_names:
            self.lo.assignments.store_name(target.id)
            self.lo.current_scope.tuples.pop(target.id, None)
            self.lo.current_scope.rename[target.id] = item
            return
        if isinstance(target, gast.Name):  # an object (a wrt list of dataclass layers)
            scope = self.lo.current_scope
            if isinstance(item, ObjectValue):
                scope.rename.pop(target.id, None)
                scope.tuples.pop(target.id, None)
                scope.functions[target.id] = item
                return
            if isinstance(scope.functions.get(target.id), ObjectValue):
                del scope.functions[target.id]
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(item, TupleValue) and \
                len(target.elts) == len(item.items):
            for elt, sub in zip(target.elts, item.items):
                self.bind_target(elt, sub, node, constant_names)
            return
        self.lo.assignments.assign_operand(target, item, node)

    # --- comprehensions -------------------------------------------------------------
    def value(self, node, hint):
        if not self.static(node):
            return self.run_time(node, hint)
        scope = Scope(self.lo.current_scope.parsed,
                      set().union(*(_targets(g.target) for g in node.generators)),
                      parent=self.lo.current_scope)
        for name in self._own_names(node):
            scope.rename[name] = ir.Name(name)
        saved = self.lo.current_scope
        self.lo.current_scope = scope
        try:
            results = []
            self._unroll(node, list(node.generators), hint, results, set())
        finally:
            self.lo.current_scope = saved
        if isinstance(node, gast.DictComp):
            keys, items = [], []
            for key, item in results:
                if key in keys:
                    items[keys.index(key)] = item
                else:
                    keys.append(key)
                    items.append(item)
            return DictValue(keys, items)
        return TupleValue(results, is_list=isinstance(node, gast.ListComp))

    def static(self, node):
        """Does every generator loop over a container of static structure?"""
        return all(self.lo.containers.holds_container(g.iter) or
                   (g is not node.generators[0] and self._static_range(g.iter))
                   for g in node.generators) or all(self._static_range(g.iter)
                                                    for g in node.generators)

    def _static_range(self, node):
        return self.static_range(node) is not None

    def _items(self, it, hint):
        items = self.static_range(it)
        if items is not None:
            return items
        return iteration_items(self.lo.expressions.value(it, hint))

    def _unroll(self, node, generators, hint, results, bound):
        """One result per element; ``bound``: the variables the comprehension's
        targets are bound to (the next element binds them again)."""
        g, rest = generators[0], generators[1:]
        for item in self._items(g.iter, hint):
            # a comprehension's own variables: bound nowhere else
            start = len(self.lo.out)
            self.bind_target(g.target, item, node, _targets(g.target))
            bound |= {st.target for st in self.lo.out[start:] if isinstance(st, ir.Assign)}
            if not all(self._condition(c) for c in g.ifs):
                continue
            if rest:
                self._unroll(node, rest, hint, results, bound)
            elif isinstance(node, gast.DictComp):
                key = self.lo.containers.key_value(node.key, hint)
                if key is None:
                    raise self.refuse("a dict comprehension whose key is not a constant",
                                      node, "use constant keys")
                results.append((key, self._kept(
                    self.lo.containers.element(node.value, hint), bound, hint)))
            else:
                results.append(self._kept(self.lo.containers.element(node.elt, hint),
                                          bound, hint))

    def _kept(self, value, bound, hint):
        """``value`` with each variable of ``bound`` it is (``[w for w in ws]``)
        copied to a variable of its own: the next element rebinds ``w``."""
        if isinstance(value, TupleValue):
            return TupleValue([self._kept(v, bound, hint) for v in value.items])
        if isinstance(value, DictValue):
            return DictValue(value.keys, [self._kept(v, bound, hint) for v in value.items])
        if isinstance(value, ir.Name) and value.id in bound:
            kept = self.lo.namer.fresh(hint)
            self.lo.emit(ir.Assign(kept, ir.Copy(value), self.lo.line))
            return ir.Name(kept)
        return value

    def static_truth(self, test):
        """True/False for a condition of constants (``k == 0`` with ``k`` an unrolled
        loop's constant), else None.  Emits nothing."""
        if isinstance(test, gast.BoolOp):
            return self._static_truth_of_bool_op(test)
        if not isinstance(test, (gast.Compare, gast.Name, gast.Constant, gast.UnaryOp)) and \
                not _is_isinstance(test, self.lo):
            return None
        value = self.lo.expressions.value(test, "cond")
        if isinstance(value, ir.Const):
            return bool(value.value)
        if isinstance(value, ir.NonDiff) and not value.names and _of_constants(value.node):
            tree = ast.fix_missing_locations(ast.Expression(body=value.node))
            return bool(eval(compile(tree, "<condition>", "eval"), {"__builtins__": {}}))
        return None

    def _static_truth_of_bool_op(self, test):
        """The truth of ``a and b`` / ``a or b`` as a test, where only its truth is
        used (so its operands may be any values): decided from the left as Python
        does, as long as the operands it takes are constants; None from the first
        operand known only at run time (that one and the rest run as written,
        with Python's short circuit)."""
        decides = isinstance(test.op, gast.Or)  # the operand truth that ends the test
        for operand in test.values:
            truth = self.static_truth(operand)
            if truth is None:
                return None
            if truth == decides:
                return decides
        return not decides

    def _condition(self, test):
        truth = self.static_truth(test)
        if truth is not None:
            return truth
        raise self.refuse(f"a condition known only at run time in a comprehension over a "
                          f"list or tuple ({to_source(test)})", test,
                          "compute the values and choose with np.where, or write the loop")

    def _own_names(self, node):
        """The comprehension's variables that the function uses nowhere else (at the
        top level only: an inlined helper's names are renamed to stay apart from
        its caller's)."""
        if not self.lo.current_scope.identity:
            return set()
        inside = {id(n) for n in gast.walk(node)}
        names = set().union(*(_targets(g.target) for g in node.generators))
        for n in gast.walk(self.lo.current_scope.parsed.node):
            if isinstance(n, gast.Name) and n.id in names and id(n) not in inside:
                names.discard(n.id)
        return names

    # --- comprehensions of run-time length --------------------------------------------
    def run_time(self, node, hint):
        """``[f(x) for x in xs if c]`` over a run-time length: the loop the user
        would write, appending to a list (held as its rows, lower/containers.py)
        in a scope of its own::

            items = []
            for x in xs:
                if c:
                    items.append(f(x))
        """
        if isinstance(node, gast.DictComp):
            raise self.refuse("a dict comprehension over a length known only at run time "
                              "(range(n), the rows of an array)", node,
                              "use constant keys: loop over a list or tuple, or a range of "
                              "constants")
        items = f"{hint}_items"
        statement = _at(gast.Expr(value=_at(gast.Call(
            func=_at(gast.Attribute(value=_name(items, gast.Load(), node), attr="append",
                                    ctx=gast.Load()), node),
            args=[node.elt], keywords=[]), node)), node)
        for g in reversed(node.generators):
            for test in reversed(g.ifs):
                statement = _at(gast.If(test=test, body=[statement], orelse=[]), node)
            statement = _at(gast.For(target=g.target, iter=g.iter, body=[statement],
                                     orelse=[], type_comment=None), node)
        scope = Scope(self.lo.current_scope.parsed,
                      set().union({items}, *(_targets(g.target) for g in node.generators)),
                      parent=self.lo.current_scope)
        scope.tuples[items] = TupleValue([], is_list=True)
        for name in self._own_names(node):  # used nowhere else: keeps the user's name
            scope.rename[name] = ir.Name(name)
        saved = self.lo.current_scope
        self.lo.current_scope = scope
        try:
            self.lo.statements.statement(statement)
            return self.lo.expressions.load_name(items, node)
        finally:
            self.lo.current_scope = saved


def _name(name, ctx, node):
    return _at(gast.Name(id=name, ctx=ctx, annotation=None, type_comment=None), node)


def _at(new, node):
    """``new`` placed at ``node``'s line (errors and comments quote the user's line)."""
    return gast.copy_location(new, node)


def _is_isinstance(test, lowering):
    """``isinstance(...)``: decided when lowering where its value is a container."""
    return isinstance(test, gast.Call) and \
        lowering.expressions.static_value(test.func) is isinstance
