"""One function as the view lowering (``views.py``) sees it.

:class:`FunctionShape` numbers the statements in program order, and lists
every binding, every write (and what kind), and where names *escape*: read
where a reference to them may be kept (a container, a loop over rows, a call
of a function that may return its argument).  It also splits
``u, v = U[1:-1], V[1:-1]`` into one assignment per name.
"""

import copy
import inspect
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.desugar.held_lists import held_lists
from tangent_ckpt.compiler.desugar.liveness import NameLiveness, bound_names, read_names
from tangent_ckpt.compiler.desugar.local_bindings import SCOPES  # noqa: F401 (its users')
from tangent_ckpt.compiler.desugar.method_calls import MethodCalls
from tangent_ckpt.compiler.memory_sharing import (
    FRESH_BUILTINS, FRESH_METHODS, VIEW_FUNCTIONS, WRITING_FUNCTIONS, WRITING_METHODS,
    call_new_by_default,
    returns_new, unbuffered_target, unbuffered_write,
)
from tangent_ckpt.compiler.node_facts import ViewMarks
from tangent_ckpt.compiler.frontend.reached_functions import user_class
from tangent_ckpt.compiler.desugar.view_facts import ItemOf, numpy_function, resolve_dotted

LOOPS = (gast.For, gast.While)
#: what opens a scope of its own (its names are not the enclosing function's)
_SCOPES = SCOPES
_SAFE_ATTRIBUTES = {"shape", "ndim", "size", "dtype", "T"}


def statement_blocks(stmt, into_defs=False):
    """The statement lists directly inside ``stmt``: its body, ``else`` and
    ``finally`` blocks and its handlers' bodies (edited in place, they edit
    ``stmt``); none of a ``def`` or ``class`` unless ``into_defs``."""
    if isinstance(stmt, SCOPES) and not into_defs:
        return []
    blocks = [getattr(stmt, field) for field in ("body", "orelse", "finalbody")
              if isinstance(getattr(stmt, field, None), list)]
    return blocks + [handler.body for handler in getattr(stmt, "handlers", ()) or ()]


def statement_lists(fnode):
    """Every statement list of ``fnode``'s own scope, outer lists first (edited in
    place, they edit ``fnode``)."""
    stack = [fnode.body]
    while stack:
        block = stack.pop()
        yield block
        for stmt in block:
            stack.extend(statement_blocks(stmt))


def block_holding(tree, stmt):
    """``(statement list, position)`` of ``stmt`` in ``tree`` (in a nested
    ``def`` or class too), or None: where a pass puts a statement before it or in
    its place."""
    for node in gast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                for k, s in enumerate(block):
                    if s is stmt:
                        return block, k
    return None


def names_taken(fnode):
    """Every name ``fnode`` binds or reads, its nested functions' and classes' too:
    what a name a desugar pass adds must not be (see :func:`fresh_name`)."""
    names = set()
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name):
            names.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(n.name)
    return names


def fresh_name(stem, taken):
    """``stem``, or ``stem_2``, ``stem_3``...: the first not in ``taken`` (then added)."""
    name, k = stem, 2
    while name in taken:
        name, k = f"{stem}_{k}", k + 1
    taken.add(name)
    return name


class DenotedObject:
    """The object a name desugar adds denotes (``ParsedFunction.inlined_names``
    maps the name to ``(DenotedObject(obj), name)``): a helper's default, a class.
    ``default_of``: (the helper's name, the parameter) for a helper's default of
    constants (an array, a tuple or list) -- one object made when the ``def`` ran and
    shared by every call, which a refusal of a write into it names so."""

    def __init__(self, obj, default_of=None):
        self.obj = obj
        self.default_of = default_of

    def resolve(self, name):
        return self.obj


class ReplacedNodes(gast.NodeTransformer):
    """A tree with each node of ``replaced`` ({id(node): new node}) replaced
    (``ReplacedNodes(replaced).visit(fnode)``), the others visited in turn."""

    def __init__(self, replaced):
        self.replaced = replaced

    def visit(self, node):
        new = self.replaced.get(id(node))
        return new if new is not None else super().visit(node)


def name_node(identifier):
    return gast.Name(id=identifier, ctx=gast.Load(), annotation=None, type_comment=None)


def store_node(identifier):
    return gast.Name(id=identifier, ctx=gast.Store(), annotation=None, type_comment=None)


def located(stmt, where):
    """``stmt``, every node of it placed at the user's statement ``where`` (a
    statement desugar adds reports the line of the one it comes from)."""
    for n in gast.walk(stmt):
        gast.copy_location(n, where)
        if hasattr(n, "end_lineno"):
            n.end_lineno = getattr(where, "end_lineno", None)
    return stmt


def copy_node(node, ctx=gast.Load):
    node = copy.deepcopy(node)
    for n in gast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    if hasattr(node, "ctx"):
        node.ctx = ctx()
    return node


class FunctionShape:
    """Statements in program order, bindings, writes and escaping names."""

    def __init__(self, parsed, helper, writers):
        self.parsed, self.helper, self.writers = parsed, helper, writers
        fnode = parsed.node
        args = fnode.args
        self.params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
        self.params |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
        self.local = set(self.params)
        for n in gast.walk(fnode):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
                self.local.add(n.id)
        self.numpy = next((k for k, v in parsed.globals.items()
                           if getattr(v, "__name__", None) == "numpy"
                           and isinstance(v, types.ModuleType)), None)
        _split_tuple_assignments(fnode.body)
        self.order, self.end, self.loops, self.place = {}, {}, {}, {}
        self.block_end = {}
        self.binders = {p: [(fnode, None)] for p in self.params}  # name -> [(stmt, value)]
        self.bindings = {p: [None] for p in self.params}  # for ArrayFacts
        self.writes = []  # (stmt, name, kind): kind "aug", "item", "call" or "other"
        self.escapes = {}  # name -> ids of the statements where it escapes
        self._statement_id = None
        self.call_writes = {}  # id(statement) -> (call, {parameter: argument name})
        self.marks = ViewMarks()  # what the rewrite declares for the fence and the lowering
        self.methods = MethodCalls(fnode, self.resolve, self.local)  # opt.update(p)
        self.held = held_lists(fnode, parsed.resolve)  # list -> what may be its items
        self._liveness, self._read_cache, self._kept = {}, {}, None
        self._count = 0
        self._block(fnode.body, ())

    # --- program order ------------------------------------------------------------
    def _block(self, stmts, loops):
        for k, s in enumerate(stmts):
            self._count += 1
            self.order[id(s)] = self._count
            self.loops[id(s)] = loops
            self.place[id(s)] = (stmts, s)
            self._statement(s, loops)
            self.end[id(s)] = self._count
        for s in stmts:
            self.block_end[id(s)] = self._count

    def _statement(self, s, loops):
        inner = loops + (s,) if isinstance(s, LOOPS) else loops
        for field in ("body", "orelse", "finalbody"):
            if isinstance(s, _SCOPES):
                break
            block = getattr(s, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                self._block(block, inner)
        for handler in getattr(s, "handlers", []):
            self._block(handler.body, inner)
        self._record(s)

    def region(self, stmt):
        """(first, last) numbers of the statements after ``stmt`` in its block."""
        return self.order[id(stmt)] + 1, self.block_end[id(stmt)]

    # --- what each statement binds, writes and lets escape --------------------------
    def _bind(self, name, stmt, value):
        self.binders.setdefault(name, []).append((stmt, value))
        self.bindings.setdefault(name, []).append(value)

    def _escape(self, name):
        self.escapes.setdefault(name, set()).add(self._statement_id)

    def escaping(self, names, bindings=(), arrays=()):
        """Those of ``names`` that escape somewhere other than in ``bindings`` or
        into an element of one of ``arrays`` (which copies)."""
        allowed = set(map(id, bindings)) | {("stored in", a) for a in arrays}
        return {n for n in names if self.escapes.get(n, set()) - allowed}

    def _record(self, s):
        self._statement_id = id(s)
        if isinstance(s, _SCOPES):
            for n in gast.walk(s):
                if isinstance(n, gast.Name):
                    self._escape(n.id)
            if isinstance(s, gast.FunctionDef):
                self._bind(s.name, s, None)
            return
        if isinstance(s, (gast.Assign, gast.AnnAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            if s.value is None:
                return
            for t in targets:
                self._target(t, s, s.value if isinstance(t, gast.Name) else None)
            pairs = [(targets[0], s.value)] if len(targets) == 1 else []
            if pairs and isinstance(s.value, gast.Tuple) and isinstance(targets[0], gast.Tuple) \
                    and len(s.value.elts) == len(targets[0].elts):
                pairs = list(zip(targets[0].elts, s.value.elts))  # U[0], U[-1] = U[-2], U[1]
                if not any(isinstance(e, gast.Starred) for e in s.value.elts):
                    for t, v in pairs:  # x_prev, x = x, x_new: each bound to its item
                        if isinstance(t, gast.Name):   # (for view_facts; no view link)
                            self.bindings[t.id][-1] = v
            if not pairs:
                self._expr(s.value, escape=True)
            for t, v in pairs:
                if isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                    # stored into an element: copied by an array, kept by a list or dict
                    self._statement_id = ("stored in", t.value.id)
                self._expr(v, escape=True)
                self._statement_id = id(s)
            self._calls(s.value, s)
        elif isinstance(s, gast.AugAssign):
            t = s.target
            if isinstance(t, gast.Name):
                self.writes.append((s, t.id, "aug"))
                self.bindings.setdefault(t.id, []).append(s)  # (view_facts.py reads it)
            elif isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
                self.writes.append((s, t.value.id, "item"))
                self._expr(t.slice, escape=False)
            else:
                self._other_write(t, s)
            self._expr(s.value, escape=False)
            self._calls(s.value, s)
        elif isinstance(s, gast.For):
            self._target(s.target, s, None)
            for target, held in self._items_bound(s):  # for w in ws: an item of ws
                self.bindings[target][-1] = ItemOf(held)
            self._expr(s.iter, escape=True)
            self._calls(s.iter, s)
        elif isinstance(s, (gast.If, gast.While)):
            self._expr(s.test, escape=False)
            self._calls(s.test, s)
        elif isinstance(s, gast.Return) and s.value is not None:
            self._expr(s.value, escape=False)
            self._calls(s.value, s)
        elif isinstance(s, gast.Expr):
            self._expr(s.value, escape=False)
            self._calls(s.value, s)
        else:  # with, try, del, ...: anything they name may be kept or changed
            own = [getattr(s, f) for f in ("items", "targets", "test", "exc", "msg")
                   if getattr(s, f, None) is not None]
            for part in own:
                for n in gast.walk(part) if not isinstance(part, list) else \
                        [m for p in part for m in gast.walk(p)]:
                    if isinstance(n, gast.Name):
                        self._escape(n.id)
                        if isinstance(n.ctx, (gast.Store, gast.Del)):
                            self._bind(n.id, s, None)

    def _items_bound(self, s):
        """(loop variable, list) of the ``for`` loop ``s`` whose variables are
        items of lists the function holds: ``for w in ws``, ``enumerate(ws)``,
        ``zip(ws, gs)``, ``enumerate(zip(ws, gs))``."""
        target, it = s.target, s.iter
        if self._builtin_call(it, enumerate) and len(it.args) == 1 and \
                isinstance(target, gast.Tuple) and len(target.elts) == 2:
            target, it = target.elts[1], it.args[0]
        if self._builtin_call(it, zip) and isinstance(target, gast.Tuple) and \
                len(target.elts) == len(it.args):
            pairs = list(zip(target.elts, it.args))
        else:
            pairs = [(target, it)]
        return [(t.id, q.id) for t, q in pairs
                if isinstance(t, gast.Name) and isinstance(q, gast.Name) and q.id in self.held]

    def _builtin_call(self, node, fn):
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id not in self.local and self.parsed.resolve(node.func.id) is fn and \
            not node.keywords and not any(isinstance(a, gast.Starred) for a in node.args)

    def _target(self, t, s, value):
        if isinstance(t, gast.Name):
            self._bind(t.id, s, value)
        elif isinstance(t, (gast.Tuple, gast.List)):
            for e in t.elts:
                self._target(e, s, None)
        elif isinstance(t, gast.Starred):
            self._target(t.value, s, None)
        elif isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name):
            self.writes.append((s, t.value.id, "item"))
            self._expr(t.slice, escape=False)
        else:
            self._other_write(t, s)

    def _other_write(self, target, s):
        base = target
        while isinstance(base, (gast.Subscript, gast.Attribute)):
            base = base.value
        if isinstance(base, gast.Name):
            self.writes.append((s, base.id, "other"))
        for n in gast.walk(target):
            if isinstance(n, gast.Name):
                self._escape(n.id)

    def _expr(self, node, escape):
        """Note the names ``node`` reads where a reference to them may be kept."""
        if isinstance(node, gast.Name):
            if escape:
                self._escape(node.id)
        elif isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.BoolOp)):
            for child in gast.iter_child_nodes(node):
                self._expr(child, escape=isinstance(node, gast.BoolOp) and escape)
        elif isinstance(node, gast.Subscript):
            self._expr(node.value, escape)
            self._expr(node.slice, escape=False)
        elif isinstance(node, gast.Attribute):
            self._expr(node.value, escape and node.attr not in _SAFE_ATTRIBUTES - {"T"})
        elif isinstance(node, gast.Call):
            self._call_reads(node, escape)
        elif isinstance(node, (gast.Slice, gast.Constant)):
            for child in gast.iter_child_nodes(node):
                self._expr(child, escape=False)
        elif isinstance(node, (gast.List, gast.Tuple, gast.Set, gast.Dict)):
            # a display keeps its items: [np.tanh(a)] keeps a new array, [a] keeps a
            parts = node.elts if not isinstance(node, gast.Dict) else \
                [k for k in node.keys if k is not None] + list(node.values)
            for part in parts:
                self._expr(part.value if isinstance(part, gast.Starred) else part,
                           escape=True)
        else:  # comprehensions, lambdas, conditional values, ...
            for n in gast.walk(node):
                if isinstance(n, gast.Name):
                    self._escape(n.id)

    def _call_reads(self, node, escape):
        func, args = node.func, list(node.args) + [k.value for k in node.keywords]
        fn = numpy_function(func, self.parsed.resolve, self.local)
        resolved = self.resolve(func)
        if isinstance(func, gast.Attribute) and fn is None and resolved is None:
            method_safe = func.attr in FRESH_METHODS
            self._expr(func.value, escape=escape or not method_safe)
            for a in args:
                self._expr(a, escape=not method_safe)
            return
        view = fn is not None and any(fn is v for v in VIEW_FUNCTIONS)
        safe = (fn is not None and (returns_new(fn) or call_new_by_default(fn, node))) or \
            any(resolved is b for b in FRESH_BUILTINS) or unbuffered_write(resolved)  # None
        helper = isinstance(resolved, types.FunctionType) and fn is None and not escape
        for a in args:  # a helper inlined as a statement reads its plain-name arguments
            # np.ravel(a) is kept only where its value is (np.sum(np.ravel(a)): nowhere);
            # np.array(a) (a copy) never, unless given a dtype (object: it keeps a's items)
            copied = safe and not (view and any(k.arg in ("dtype", None) for k in node.keywords))
            self._expr(a, escape=(False if copied else escape if view else not safe) and
                       not (helper and isinstance(a, gast.Name)))

    def _calls(self, node, s):
        """Writes made by calls inside ``node``: ``out=``, in-place methods,
        writing functions, and user helpers that write into their arguments."""
        for n in gast.walk(node):
            if not isinstance(n, gast.Call):
                continue
            for k in n.keywords:
                if k.arg == "out":
                    kind = "item" if self._into_out(s, n, k.value) else "other"
                    for name in read_names(k.value):
                        self.writes.append((s, name, kind))
            func = n.func
            if isinstance(func, gast.Attribute) and func.attr in WRITING_METHODS:
                for name in read_names(func.value):
                    self.writes.append((s, name, "other"))
            fn = self.resolve(func)
            if fn is not None and any(fn is w for w in WRITING_FUNCTIONS) and n.args:
                for name in read_names(n.args[0]):
                    self.writes.append((s, name, "other"))
            if unbuffered_write(fn) and n.args:
                # np.add.at(a, i, v) alone, into a or a[:, 0]: the lowering writes
                # a = rt.add_at(a, i, v), followed like any subscript write
                base = unbuffered_target(n, s)
                for name in [base] if base is not None else read_names(n.args[0]):
                    self.writes.append((s, name, "item" if base is not None else "other"))
            method = self.methods.method(func) if fn is None else None
            init = _constructor(fn)  # Model(p): its __init__ may write into p
            written = self.writers(fn) if isinstance(fn, types.FunctionType) else \
                _without_self(init, self.writers(init)) if init is not None else \
                _without_self(method, self.writers(method)) if method is not None else {}
            if not written:
                continue
            self.marks.writer_calls[n] = True  # the lowering inlines it even as a statement
            bound = _bind_arguments(fn, n) if init is None and method is None else \
                _bind_arguments(init or method, n, 1)  # opt.update(p): self is opt
            # step(H, U), r = step(H, U) or H, U = step(H, U): the call is the statement
            # (it writes, then its value is bound: the inliner's write-back comes first)
            whole = ((isinstance(s, gast.Expr) or (isinstance(s, gast.Assign) and
                                                   _plain_names(s.targets[0]))) and
                     s.value is n) or self._alone_with_locals(s, n)
            passed = [a.id for a in bound.values() if isinstance(a, gast.Name)]
            for param, kind in written.items():
                arg = bound.get(param)
                if isinstance(arg, gast.Name) and passed.count(arg.id) > 1:
                    whole = False  # f(U, U): two parameters, one array (the inliner refuses)
                if kind == "rebound-call":  # what the array holds after is not followed
                    self._unfollowed_write(s, n, param, arg, whole)
                    continue
                if isinstance(arg, gast.Name) and arg.id in self.local:
                    self.writes.append((s, arg.id, kind if whole else "other"))
                    if whole:
                        self.call_writes.setdefault(id(s), (n, {}))[1][param] = arg.id

    def _into_out(self, s, call, out):
        """``np.clip(v, 0, 1, out=v)`` (a ufunc or ``np.clip``, which take any
        strides and buffer an input that overlaps ``out``) as a whole statement,
        ``out`` a name: the lowering writes it as ``v[...] = np.clip(v, 0, 1)``
        (after NumPy's check of the result's dtype), a write into ``v``'s items
        like any other."""
        fn = self.resolve(call.func)
        return isinstance(s, gast.Expr) and s.value is call and isinstance(out, gast.Name) \
            and (isinstance(fn, np.ufunc) or fn is np.clip) and \
            registry.lookup(fn) is not None and \
            not any(k.arg in ("where", None) for k in call.keywords)

    def _unfollowed_write(self, s, call, param, arg, whole):
        """A helper writes into ``param`` and rebinds it: the caller's array changes
        in a way the inliner does not follow.  Nothing needs to follow it where the
        call is the statement (or alone with locals in it) and the caller's name is
        not read after it: ``return loss(x, ...)``, ``x = step(x)``.  (An argument
        that is no name is a new array, or a view or an item the lowering checks
        at the call: ``rt.not_a_view``.)"""
        if not isinstance(arg, gast.Name):
            return
        name, marks = arg.id, self.marks
        marks.rebound_arguments[call] = {**marks.rebound_arguments.get(call, {}), param: name}
        self.writes.append((s, name, "other"))  # no group of it is followed
        if whole and name in self.local and self.dead_after(name, s):
            marks.unobserved_arguments[call] = {**marks.unobserved_arguments.get(call, {}),
                                                param: name}

    def dead_after(self, name, s):
        """Whether the object ``name`` holds when statement ``s`` runs is never read
        through ``name`` afterwards: ``s`` binds ``name`` anew, or nothing reads
        it after ``s`` (later rounds of a loop included); never for a name a
        nested function or lambda reads, or one declared global or nonlocal."""
        if name in self.kept_names():
            return False
        targets = s.targets if isinstance(s, gast.Assign) else []
        if any(name in bound_names(t) for t in targets):
            return True
        if name not in self._liveness:
            self._liveness[name] = NameLiveness(self.parsed.node, name, self._names_read).after
        return id(s) not in self._liveness[name]

    def kept_names(self):
        if self._kept is None:
            self._kept = set()
            for node in gast.walk(self.parsed.node):
                if node is not self.parsed.node and isinstance(node, _SCOPES):
                    self._kept |= {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
                elif isinstance(node, (gast.Global, gast.Nonlocal)):
                    self._kept |= set(node.names)
        return self._kept

    def _names_read(self, node):
        cached = self._read_cache.get(id(node))
        if cached is None or cached[0] is not node:
            cached = self._read_cache[id(node)] = (node, read_names(node))
        return cached[1]

    def _alone_with_locals(self, s, call):
        """``return np.sum(step(U) ** 2)``: the call is inside an expression, but no
        local name is read in ``s`` outside the call (only module-level names such
        as ``np``), and each plain-name argument is passed once: nothing in the
        statement can see an array before the call writes it, so the call is
        followed as if it were a statement of its own."""
        if not isinstance(s, (gast.Expr, gast.Assign, gast.Return)):
            return False
        if isinstance(s, gast.Assign) and not all(_plain_names(t) for t in s.targets):
            return False
        if not _always_evaluated(s.value, call):
            return False  # in a comprehension, a lambda, a branch or a short circuit
        inside = {id(n) for n in gast.walk(call)}
        outside = {n.id for n in gast.walk(s) if isinstance(n, gast.Name) and
                   isinstance(n.ctx, gast.Load) and id(n) not in inside}
        passed = [a.id for a in list(call.args) + [k.value for k in call.keywords]
                  if isinstance(a, gast.Name)]
        return not outside & self.local and len(passed) == len(set(passed))

    def integer_names(self):
        """Names surely bound to Python integers: counters of ``for name in
        range(...)``, and names every binding of which is an integer made of those,
        integer constants, ``int(...)`` and ``len(...)`` with ``+ - * // %``
        (``p = i + int(np.argmax(col))``), never updated in place."""
        updated = {name for _, name, kind in self.writes if kind == "aug"}
        names = set()
        for name, binders in self.binders.items():
            if all(isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name) and
                   isinstance(stmt.iter, gast.Call) and self.resolve(stmt.iter.func) is range
                   for stmt, _ in binders):
                names.add(name)
        grown = True
        while grown:
            grown = False
            for name, binders in self.binders.items():
                if name in names or name in updated:
                    continue
                if all(isinstance(stmt, gast.Assign) and value is not None and
                       self._integer(value, names) for stmt, value in binders):
                    names.add(name)
                    grown = True
        return names

    def _integer(self, node, names):
        if isinstance(node, gast.Constant):
            return type(node.value) is int
        if isinstance(node, gast.Name):
            return node.id in names
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            return self._integer(node.operand, names)
        if isinstance(node, gast.BinOp) and isinstance(
                node.op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)):
            return self._integer(node.left, names) and self._integer(node.right, names)
        if isinstance(node, gast.Call) and not node.keywords and len(node.args) == 1:
            return self.resolve(node.func) in (int, len)
        return False

    def resolve(self, func):
        return resolve_dotted(func, self.parsed.resolve, self.local)



_EVALUATED_ONCE = (gast.BinOp, gast.UnaryOp, gast.Call, gast.Attribute, gast.Subscript,
                   gast.Tuple, gast.List, gast.keyword, gast.Starred)


def _always_evaluated(node, call):
    """Whether ``call`` inside ``node`` runs exactly once whenever ``node`` is
    evaluated: every node on the way is arithmetic, a call, an attribute, a
    subscript or a display (no comprehension, lambda, conditional value, ``and``
    / ``or`` or chained comparison)."""
    if node is call:
        return True
    if not isinstance(node, _EVALUATED_ONCE):
        return False
    return any(_always_evaluated(child, call) for child in gast.iter_child_nodes(node))


def _plain_names(target):
    """``r`` or ``(H, U, V)``: a name or a tuple or list of names."""
    if isinstance(target, (gast.Tuple, gast.List)):
        return all(isinstance(e, gast.Name) for e in target.elts)
    return isinstance(target, gast.Name)


def _constructor(cls):
    """The ``__init__`` written in Python of a user's class, or None."""
    if not user_class(cls):
        return None
    init = inspect.getattr_static(cls, "__init__", None)
    return init if isinstance(init, types.FunctionType) else None


def _without_self(init, written):
    code = init.__code__
    return {p: kind for p, kind in written.items() if p != code.co_varnames[0]} \
        if code.co_argcount else {}


def _bind_arguments(fn, call, skip=0):
    """Parameter name -> argument node; ``skip``: leading parameters the call
    does not pass (``self`` of a constructor)."""
    code = fn.__code__
    names = code.co_varnames[skip:code.co_argcount + code.co_kwonlyargcount]
    bound = dict(zip(names, call.args))
    for k in call.keywords:
        if k.arg is not None:
            bound[k.arg] = k.value
    return bound


def _split_tuple_assignments(stmts):
    """``u, v = U[1:-1], V[1:-1]`` -> one assignment per name (when no name
    bound is read on the right, the two forms are the same program)."""
    k = 0
    while k < len(stmts):
        s = stmts[k]
        for field in ("body", "orelse", "finalbody"):
            block = getattr(s, field, None)
            if isinstance(block, list) and not isinstance(s, _SCOPES):
                _split_tuple_assignments(block)
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Tuple) and isinstance(s.value, gast.Tuple) and \
                len(s.targets[0].elts) == len(s.value.elts) and \
                all(isinstance(t, gast.Name) for t in s.targets[0].elts) and \
                not any(isinstance(e, gast.Starred) for e in s.value.elts):
            bound = {t.id for t in s.targets[0].elts}
            if not bound & read_names(s.value) and len(bound) == len(s.targets[0].elts):
                parts = [gast.copy_location(gast.Assign(targets=[t], value=v, type_comment=None), s)
                         for t, v in zip(s.targets[0].elts, s.value.elts)]
                stmts[k:k + 1] = parts
                k += len(parts)
                continue
        k += 1


def method_statement(stmt, method):
    """``(receiver, argument)`` of a statement ``receiver.method(argument)`` (one
    positional argument, no keywords), else None."""
    call = stmt.value if isinstance(stmt, gast.Expr) else None
    if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and \
            call.func.attr == method and len(call.args) == 1 and not call.keywords and \
            not isinstance(call.args[0], gast.Starred):
        return call.func.value, call.args[0]
    return None

