"""Lower: comprehensions and generator expressions.

Over a container of static structure or a range of constants (``[np.dot(w, x)
for w in ws]``, ``{k: v * 2 for k, v in d.items()}``) a comprehension is
unrolled into a list, tuple or dict of static structure, one item per element,
its targets bound as :mod:`.container_loops` binds an unrolled loop's.  A
comprehension's variables live in a scope of their own, as in Python 3 (they
never overwrite the function's variables of the same name).

Over ``range(n)`` or the rows of an array the length is only known at run time:
``sum(f(x) for x in xs)`` becomes a loop accumulating into a variable, and a
list comprehension a loop that fills the rows of an array (what ``np.stack``
of the list would give).
"""

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.lower.container_loops import targets
from tangent_ckpt.compiler.lower.container_values import DictValue, iteration_items
from tangent_ckpt.compiler.lower.scopes import Scope, TupleValue, to_source


class ComprehensionLowering:
    """List, dict and generator comprehensions."""

    def __init__(self, lowering):
        self.lo = lowering

    def refuse(self, what, node, hint):
        return self.lo.containers.refuse(what, node, hint)

    # --- comprehensions -------------------------------------------------------------
    def value(self, node, hint):
        if not self.static(node):
            return self.run_time(node, hint)
        scope = Scope(self.lo.current_scope.parsed,
                      set().union(*(targets(g.target) for g in node.generators)),
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
        return self.lo.container_loops.static_range(node) is not None

    def _items(self, it, hint):
        items = self.lo.container_loops.static_range(it)
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
            self.lo.container_loops.bind_target(g.target, item, node, targets(g.target))
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

    def _condition(self, test):
        truth = self.lo.container_loops.static_truth(test)
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
        names = set().union(*(targets(g.target) for g in node.generators))
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
                      set().union({items}, *(targets(g.target) for g in node.generators)),
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

