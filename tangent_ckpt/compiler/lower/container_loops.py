"""Lower: ``for`` loops over containers of static structure, unrolled, and the
conditions of constants their copies decide.

Over a container (``for W, b in params:``, ``for name in ('enc', 'dec')``) or a
range of constants whose body indexes a container (``for l in
range(len(params)): params[l]``) the loop is unrolled: one copy of its body per
element, in which the loop target is bound to that element -- the elements may
have different shapes (the layers of a network), which one run-time loop could
not carry.  A loop target bound to a constant (a key, a counter) is that
constant in its copy, so that ``d[k]`` reads a known key and ``if k == 0:``
keeps only the path that runs (:meth:`ContainerLoops.static_truth`).

``desugar/static_loops.py`` unrolls a loop over a display in its header (of calls
too) or over a name bound once to a display (or to the appends of straight code,
also in the copies of a loop it unrolled) and only read, a comprehension's loop
over a constant range or such a row (its conditions decided in each copy; one over
a range with a condition known only at run time runs as a loop filling a list,
``run_time_containers.py``), a loop over a container of arrays the call gives
and the function only reads (a container nested in it too), and one over a local
bound only to displays of one structure whose items the function stores (with
``break`` and ``continue`` in their bodies); what reaches this module is the rest
(a list built by appends in a loop of run-time length, a container whose
structure the function changes, one holding objects, a local nested display, a
comprehension over such a row with a condition known only at run time, refused
at the condition); a name in a display of
its header that the loop binds again is read, by then, from a name desugar bound
before the loop (``b_item = b``), as is a container the loop iterates by a name
its body binds again (``ws_iter = ws``), and a container the lowering bound holds
its items' own variables, so each copy reads the element as Python made it.
A loop variable bound to an object (the compiler's binding, not the generated
code's) read after a loop unrolled in a branch or a loop of run-time length,
outside the statement list holding the loop, is refused
(:meth:`ContainerLoops.check_object_read`): where the block did not run, Python
raises UnboundLocalError; ``desugar/object_lists.py`` asserts a flag before
such reads of the lists it leaves here, where it can.
"""

import ast

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.lower.container_values import iteration_items
from tangent_ckpt.compiler.lower.scopes import ObjectValue, TupleValue, walk_no_defs


def targets(node):
    """The names ``node`` (a loop or comprehension target) binds."""
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


def _is_isinstance(test, lowering):
    """``isinstance(...)``: decided when lowering where its value is a container."""
    return isinstance(test, gast.Call) and \
        lowering.expressions.static_value(test.func) is isinstance


class ContainerLoops:
    """``for`` over containers and ranges of constants, unrolled; conditions of
    constants."""

    def __init__(self, lowering):
        self.lo = lowering
        self.unrolling = []  # the loops being unrolled, innermost last
        # (id(scope), name) -> (the loop, the statement list it is written into): a
        # loop variable bound to an object by a loop in a branch or a loop of
        # run-time length (:meth:`check_object_read`)
        self.loop_objects = {}

    def refuse(self, what, node, hint):
        return self.lo.containers.refuse(what, node, hint)

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
        if items is None:  # (desugar/static_loops.py held a display's rebound names)
            items = iteration_items(self.lo.expressions.value(s.iter, "item"))
        fnode = self.lo.current_scope.parsed.node
        only_here = {n for n in targets(s.target)
                     if _stores(fnode, n) == _loop_target_stores(fnode, n)}
        saved = self.lo.ctx.get("unrolled", 0)
        self.lo.ctx["unrolled"] = saved + 1  # `continue` ends this element's copy
        self.unrolling.append(s)
        try:
            for item in items:
                self.bind_target(s.target, item, s, only_here)
                self.lo.statements.block(s.body)
        finally:
            self.lo.ctx["unrolled"] = saved
            self.unrolling.pop()

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
                if self.lo.out is not scope.top_block and \
                        target.id not in scope.parsed.checked_loop_variables:
                    self.loop_objects[(id(scope), target.id)] = (node, self.lo.out)
                else:
                    self.loop_objects.pop((id(scope), target.id), None)
                return
            self.loop_objects.pop((id(scope), target.id), None)
            if isinstance(scope.functions.get(target.id), ObjectValue):
                del scope.functions[target.id]
        if isinstance(target, (gast.Tuple, gast.List)) and isinstance(item, TupleValue) and \
                len(target.elts) == len(item.items):
            for elt, sub in zip(target.elts, item.items):
                self.bind_target(elt, sub, node, constant_names)
            return
        self.lo.assignments.assign_operand(target, item, node)
    def check_object_read(self, node, scope):
        """Refuse ``node`` (a read of a name ``scope`` binds to an object) where it
        is the variable of a loop over a list of objects (one the call gives, or
        one desugar left that ``object_lists.py`` does not check, its
        ``checked_loop_variables``), unrolled in a branch or a loop of run-time
        length, read after that loop outside the statement list it is written
        into (``if c: for layer in layers: ...`` then ``layer.forward(x)``): the
        compiler binds the variable as it unrolls the loop, so the read would be
        the last item's where the block did not run -- Python raises
        UnboundLocalError there."""
        found = self.loop_objects.get((id(scope), node.id))
        if found is None or found[0] in self.unrolling or self.lo.out is found[1]:
            return
        raise self.refuse(f"'{node.id}', the variable of a loop over a list of objects, "
                          "read outside the block holding the loop, which may not have "
                          "run", node,
                          f"read what you need of '{node.id}' in that block, or index the "
                          "list after it")

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
