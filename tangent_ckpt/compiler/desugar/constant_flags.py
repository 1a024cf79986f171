"""Desugar: an ``if`` testing a local bound to a constant (a flag), as the branch
that runs.

    log = False                       log = False
    if log:                           for ii in range(n):
        log = {"err": []}       ->        ...
    for ii in range(n):
        ...
        if log:
            log["err"].append(err)

Inlining writes a helper's parameter as a name bound to what the call gives, so
a flag the call leaves at its default (POT's ``sinkhorn_knopp(..., log=False)``)
or gives as a literal (``mode="train"``) is such a name.  The branch that does
not run may hold what the rest of the compiler refuses (a dict of lists grown
by ``.append``), although Python never runs it.

The test is decided only where the value of each name it reads is surely the
constant: the name is bound by ``name = <constant>`` earlier on every path to
the test, and not bound again in between -- by any statement (a loop binding it
anywhere in its body is taken to bind it at its head and after it, a ``with``,
``try`` or ``match`` anywhere in it after it) -- and it is a name of the function alone (not a parameter,
``global``/``nonlocal``, nor mentioned by a nested function, lambda or class,
which could rebind it).  A test is decided when it is such a name, a constant,
``not`` of a decided test, a comparison of decided values (``is``/``is not``
only beside ``None``, ``True``, ``False`` or ``...``, whose identity is their
value), or ``and``/``or`` decided from the left as Python evaluates it, up to
the operand that ends it.  Such a test calls nothing and binds nothing, so
dropping it and the branch that does not run changes nothing Python would do.
Where operands not decided come before the one that ends an ``and`` / ``or``
(``if it % 2 == 0 and log:``), they stay, as Python evaluates them, in a test of
their own (``if it % 2 == 0: pass``), and the branch that runs follows it.
``while`` tests are left as written; a conditional expression ``a if c else b``
in a simple statement is the operand that runs where ``c`` is decided so.

An option a helper normalises before it tests it is followed too: an
assignment ``kind = kind.strip().lower()`` (or ``act = act or "tanh"``, ``key =
kind + "_" + part``) of a name whose value is known gives a string that is bound
as that constant (``kind = 'minmod'``), so the tests after it -- ``kind in
("minmod", "mc")`` among them -- are decided.  Folded are constants, known
names, tuple and list displays of them, ``+`` of strings, ``+``, ``-``, ``*``,
``//`` and ``%`` of ints (``n - 1 > 0``), the methods of a
string that give a string from constants (:data:`STRING_METHODS`), ``not``,
``and`` / ``or`` (the operand Python's value is) and comparisons; none calls the
user's code or has an effect.
"""

import operator

import gast

from tangent_ckpt.compiler.desugar.local_bindings import SCOPES, names_seen_outside

UNKNOWN = _UNKNOWN = object()  # a value not known here
_A_FUNCTION = object()  # a name bound to a lambda: some function (true, not None)

_COMPARE = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
            gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
            gast.Is: operator.is_, gast.IsNot: operator.is_not,
            gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b}

#: the arithmetic of two ints folded (``n - 1``, ``len_p // 2``; ``+`` too)
_INTEGER_ARITHMETIC = {gast.Sub: operator.sub, gast.Mult: operator.mul,
                       gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod}

#: the methods of ``str`` that give a string from a string and constants, and
#: nothing else (no lookup of the run's state): an option's name normalised,
#: ``name = name.lower()``
STRING_METHODS = frozenset({
    "lower", "upper", "casefold", "strip", "lstrip", "rstrip", "title", "capitalize",
    "replace", "removeprefix", "removesuffix", "swapcase",
})


def fold_constant_flags(parsed):
    """Rewrite, in ``parsed.node``, each ``if`` whose test is decided (see the
    module's docstring) as the statements of the branch that runs.  Returns
    whether an assignment or a subscript's key became a string constant (``key =
    name.lower()``, ``LIMS[key]``: the lookup may then be resolved)."""
    fnode = parsed.node
    folder = _Folder(names_seen_outside(fnode))
    folder.block(fnode.body, {})
    return folder.bound_strings


def decided_truth(test):
    """The truth of ``test`` where it reads constants alone, decided as an ``if``
    of this pass decides it (``"vanleer" == "minmod"``), else None."""
    return _Folder(set()).truth(test, {})


def folded_value(node, known):
    """The constant ``node`` gives, read with ``known`` ({name: constant}) --
    constants, those names, displays of them, ``+`` of strings, ``+ - * // %``
    of ints, a string's
    ``STRING_METHODS``, ``not``, ``and``/``or`` (Python's value: the operand that
    decides), comparisons -- or ``UNKNOWN``.  Nothing it folds calls the user's
    code or has an effect."""
    return _Folder(set()).value(node, known)


def bound_names(node):
    """The names a statement (or expression) binds in the function's scope, or
    deletes (a nested scope's own names too: more is only more careful)."""
    names = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            names.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (gast.Import, gast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        if not isinstance(n, gast.Lambda):
            stack.extend(gast.iter_child_nodes(n))
    return names


class _Folder:
    def __init__(self, excluded):
        self.excluded = excluded
        self.bound_strings = False  # an assignment rewritten as a string constant

    def block(self, stmts, known):
        """Fold the ``if`` statements of ``stmts`` (edited in place) given
        ``known`` ({name: constant} before them); returns what is known after."""
        k, folded = 0, False
        while k < len(stmts):
            s = stmts[k]
            if isinstance(s, (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr,
                              gast.Return)):
                self.choose(s, known)
            if isinstance(s, gast.If):
                truth = self.truth(s.test, known)
                if truth is not None:
                    stmts[k:k + 1] = s.body if truth else s.orelse
                    folded = True
                    continue  # the branch's statements, folded in their turn
                truth, first = self.settled(s.test, known)
                if truth is not None:  # if it % 2 == 0 and log: -> if it % 2 == 0: pass
                    tested = gast.copy_location(gast.If(test=first, body=[gast.Pass()],
                                                        orelse=[]), s)
                    stmts[k:k + 1] = [tested] + (s.body if truth else s.orelse)
                    k += 1
                    continue
                body, orelse = dict(known), dict(known)
                body = self.block(s.body, body)
                orelse = self.block(s.orelse, orelse)
                known = {n: v for n, v in body.items() if n in orelse and orelse[n] is v}
            elif isinstance(s, (gast.For, gast.AsyncFor, gast.While)):
                inside = {n: v for n, v in known.items() if n not in bound_names(s)}
                self.block(s.body, dict(inside))
                self.block(s.orelse, dict(inside))
                known = inside
            elif isinstance(s, (gast.With, gast.AsyncWith)):
                # (a context manager may end its body early, swallowing an error)
                known = {n: v for n, v in known.items() if n not in bound_names(s)}
                self.block(s.body, dict(known))
            elif isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                    isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Constant):
                known = {n: v for n, v in known.items() if n != s.targets[0].id}
                if s.targets[0].id not in self.excluded:
                    known[s.targets[0].id] = s.value.value
            elif isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                    isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Lambda):
                # act = lambda z: ...: a function, never None, always true
                known = {n: v for n, v in known.items() if n != s.targets[0].id}
                if s.targets[0].id not in self.excluded:
                    known[s.targets[0].id] = _A_FUNCTION
            elif isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                    isinstance(s.targets[0], gast.Name) and \
                    s.targets[0].id not in self.excluded and \
                    isinstance(self.value(s.value, known), str):
                # name = name.lower() of a name known: the string it gives, bound
                # (an inlined helper's option normalised before it is tested)
                value = self.value(s.value, known)
                s.value = gast.copy_location(gast.Constant(value=value, kind=None), s.value)
                self.bound_strings = True
                known = {n: v for n, v in known.items() if n != s.targets[0].id}
                known[s.targets[0].id] = value
            elif isinstance(s, gast.Match):  # (its patterns bind names by strings)
                known = {}
            else:  # any other statement: what it binds is no longer known
                bound = bound_names(s)
                known = {n: v for n, v in known.items() if n not in bound}
            k += 1
        if folded and not stmts:
            stmts.append(gast.Pass())
        return known

    def choose(self, stmt, known):
        """Each ``a if c else b`` in the simple statement ``stmt`` whose ``c`` is
        decided (an inlined ``__init__``'s ``act if act is not None else
        relu``), as the operand that runs, and each subscript at a name known to
        hold a string (``TABLE[name]``) at that string; not in a statement
        holding a ``:=`` (it may bind a name the test reads first) nor in a
        nested scope."""
        nodes = list(gast.walk(stmt))
        if any(isinstance(n, gast.NamedExpr) for n in nodes) or not any(
                isinstance(n, gast.IfExp) or known and isinstance(n, gast.Subscript)
                for n in nodes):
            return  # (nothing to choose: most statements)
        folder = self

        class Choices(gast.NodeTransformer):
            def visit_Lambda(self, node):
                return node  # (its names are its own)

            visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda

            def visit_IfExp(self, node):
                truth = folder.truth(node.test, known)
                if truth is None:
                    return self.generic_visit(node)
                return self.visit(node.body if truth else node.orelse)

            def visit_Subscript(self, node):
                self.generic_visit(node)
                key = node.slice
                if isinstance(key, gast.Name) and isinstance(key.ctx, gast.Load) and \
                        isinstance(known.get(key.id), str):  # TABLE[name], name = 'gamma'
                    node.slice = gast.copy_location(
                        gast.Constant(value=known[key.id], kind=None), key)
                    folder.bound_strings = True
                return node
        Choices().visit(stmt)

    def truth(self, test, known):
        """True/False where ``test``'s truth is decided, else None."""
        if isinstance(test, gast.BoolOp):
            ends = isinstance(test.op, gast.Or)  # the operand truth that ends the test
            for operand in test.values:
                truth = self.truth(operand, known)
                if truth is None:
                    return None
                if truth == ends:
                    return ends
            return not ends
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
            truth = self.truth(test.operand, known)
            return None if truth is None else not truth
        value = self.value(test, known)
        if value is _UNKNOWN:
            return None
        try:
            return bool(value)
        except Exception:  # (no constant's truth raises; kept as written if one did)
            return None

    def settled(self, test, known):
        """For ``a and b and log`` (``log`` false; ``or``: true), where operands not
        decided come before the one that ends the test: (its truth, the test of
        those operands), whose evaluation and truth Python still takes, with its
        short circuit, before it reaches the operand that decides (the others are
        names and constants); else (None, None)."""
        if not isinstance(test, gast.BoolOp) or \
                any(isinstance(n, gast.NamedExpr) for n in gast.walk(test)):
            return None, None
        ends = isinstance(test.op, gast.Or)
        pending = []
        for operand in test.values:
            truth = self.truth(operand, known)
            if truth is None:
                pending.append(operand)
            elif truth == ends:
                if not pending:
                    return None, None  # (decided by truth(): not here)
                first = pending[0] if len(pending) == 1 else gast.copy_location(
                    gast.BoolOp(op=test.op, values=pending), test)
                return ends, first
        return None, None

    def value(self, node, known):
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            return known.get(node.id, _UNKNOWN)
        if isinstance(node, (gast.Tuple, gast.List)) and isinstance(node.ctx, gast.Load):
            items = tuple(self.value(item, known) for item in node.elts)
            return _UNKNOWN if any(v is _UNKNOWN for v in items) else items
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add):
            left, right = self.value(node.left, known), self.value(node.right, known)
            if type(left) is int and type(right) is int:
                return left + right
            return left + right if isinstance(left, str) and isinstance(right, str) \
                else _UNKNOWN
        if isinstance(node, gast.BinOp) and type(node.op) in _INTEGER_ARITHMETIC:
            left, right = self.value(node.left, known), self.value(node.right, known)
            if type(left) is not int or type(right) is not int or \
                    isinstance(node.op, (gast.FloorDiv, gast.Mod)) and right == 0:
                return _UNKNOWN  # (1 // 0 raises in Python: left as written)
            return _INTEGER_ARITHMETIC[type(node.op)](left, right)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in STRING_METHODS and not node.keywords:
            receiver = self.value(node.func.value, known)
            args = [self.value(a, known) for a in node.args]
            if not isinstance(receiver, str) or any(a is _UNKNOWN for a in args):
                return _UNKNOWN
            try:
                result = getattr(receiver, node.func.attr)(*args)
            except (TypeError, ValueError):
                return _UNKNOWN
            return result if isinstance(result, str) else _UNKNOWN
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            truth = self.truth(node.operand, known)
            return _UNKNOWN if truth is None else not truth
        if isinstance(node, gast.BoolOp):  # act or "tanh": Python's value
            for operand in node.values[:-1]:
                value = self.value(operand, known)
                if value is _UNKNOWN:
                    return _UNKNOWN
                if bool(value) == isinstance(node.op, gast.Or):
                    return value
            return self.value(node.values[-1], known)
        if isinstance(node, gast.Compare):
            left = self.value(node.left, known)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.value(right_node, known)
                compare = _COMPARE.get(type(op))
                if left is _UNKNOWN or right is _UNKNOWN or compare is None:
                    return _UNKNOWN
                if isinstance(op, (gast.Is, gast.IsNot)) and not any(
                        v is None or v is True or v is False or v is Ellipsis
                        for v in (left, right)):
                    return _UNKNOWN
                try:
                    result = compare(left, right)
                except Exception:  # ('a' < 1 raises in Python: left as written)
                    return _UNKNOWN
                if not result:
                    return False
                left = right
            return True
        return _UNKNOWN
