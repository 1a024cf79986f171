"""Desugar: attributes the function assigns on an object made outside it, as names.

``h = CELL.forward(h)`` on a module-level (or closure) object whose method caches
what it computed (``self.h = h; self.out = np.tanh(self.W @ self.h)``), once
``inline_functions.py`` wrote the method's body with ``CELL`` for ``self``,
leaves stores and reads of ``CELL.h``.  Each attribute the code stores becomes a
name of the function (``CELL_h``): a read after the store sees the new value, a
loop's next step what the step before stored.  Where a read may come before any
store (a branch not taken, a loop that ran no step, the first step of a loop that
reads the attribute before it stores it), the name is bound at the top of the
function to the object's value when the gradient is called (``CELL_h =
CELL.h``), as Python reads it; the question is answered once, on the whole
function, by a forward walk over its statements (loops included).  An attribute
never stored is left as it is (a constant of the gradient).

The gradient never changes the object: like a write into an argument
(docs/inplace.md), the function's side effect on the caller's object is not
reproduced.  What could not be exact that way is refused, at the user's line:

- the object used as a value (``print(CELL)``, handed to a function, a method
  not inlined) after the code may have stored into it, or bound to a name: that
  code would see its attributes unchanged;
- ``CELL.h += v`` where the object's own array (or list) may be what it holds:
  NumPy adds in place into an array other names may hold;
- an attribute stored on a class with ``__setattr__``/``__getattr__`` hooks or
  through a data descriptor (a property's setter, ``__slots__``).

A counter only its own updates read (``CELL.t += 1`` outside loops, nothing
reading ``CELL.t`` after) is left out: it changed only the object.  A write into
the object's own array through the name (``CELL_h[0] = x`` where ``CELL_h =
CELL.h``) is the aliasing fence's to refuse, as a write into an array a
module-level object holds; a write into an array the code stored is an ordinary
write.

The object is left to the lowering (``lower/outside_objects.py``) where it is
reached another way than by its one plain name (``ALIAS``, ``MODEL.cell``), used
as a value before any store (``print(CELL)``), an attribute of it is stored in a
nested function or deleted, and wherever the function still names one of the
user's functions (a helper in a comprehension, ``map(f, xs)``, a ``def``, a
property's getter): the lowering inlines that code, which reads and stores the
object's attributes where this pass does not see them.  Bound to a name (``c =
CELL``) it is refused: ``c.h`` would read the object, not what the code stored.
"""

import inspect

import gast

from tangent_ckpt.compiler.desugar.local_bindings import SCOPES, local_names
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import fresh_name, names_taken, statement_lists
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED
from tangent_ckpt.compiler.frontend.reached_functions import (
    user_class, user_function, user_object,
)
from tangent_ckpt.errors import UnsupportedSyntaxError

_HOOKS = ("__setattr__", "__delattr__", "__getattr__", "__getattribute__")


def write_outside_attributes(parsed):
    """Rewrite ``parsed.node`` in place: each attribute stored on an object made
    outside the function as a name (see the module's docstring)."""
    fnode = parsed.node
    objects = _outside_objects(parsed, fnode)
    if objects and parsed.outside_given:
        base, (_, stored) = min(objects.items(), key=lambda item: item[0])
        attr, node = min(stored.items(), key=lambda item: item[0])
        what, hint = parsed.outside_store_refusal(f"{base}.{attr}")
        raise parsed.error(UnsupportedSyntaxError, what, node, construct=f"{base}.{attr}",
                           hint=hint)
    if not objects or _functions_left(parsed, fnode):
        return
    objects = _without_aliases(parsed, fnode, objects)
    taken = names_taken(fnode) | set(parsed.globals) | set(parsed.closure)
    walk = _FirstReads(parsed, objects, _keys(objects))
    walk.block(fnode.body, frozenset(), frozenset())
    if walk.value_used:  # print(CELL) before any store: the lowering's to follow
        objects = {b: held for b, held in objects.items() if b not in walk.value_used}
        walk = _FirstReads(parsed, objects, _keys(objects))
        walk.block(fnode.body, frozenset(), frozenset())
    if not objects:
        return
    _refuse_other_paths(parsed, fnode, objects, {attr for _, attr in walk.names})
    names = {}
    for base, attr in sorted(walk.names):
        obj, stored = objects[base]
        _refuse_hooks(parsed, obj, base, attr, stored[attr])
        label = base if parsed.globals.get(base, _UNRESOLVED) is obj else \
            type(obj).__name__.lower()
        new = fresh_name(f"{label}_{attr}", taken)
        parsed.spellings[new] = f"{base}.{attr}"
        names[(base, attr)] = new
        parsed.outside_written.setdefault(id(obj), (obj, {}))[1][attr] = new
    _Rename(names, walk.rebound).visit(fnode)
    unread = _drop_uncounted(fnode, {names[key] for key in walk.read_first})
    first = []
    for base, attr in sorted(walk.read_first):
        if hasattr(objects[base][0], attr) and names[(base, attr)] not in unread:
            binding = _binding(names[(base, attr)], base, attr, fnode)
            # True, or (spelling, line) of a `+=` that assumes a number
            parsed.read_when_called[binding.value] = walk.numbers.get((base, attr), True)
            first.append(binding)
    fnode.body[0:0] = first


def _keys(objects):
    return {(base, attr) for base, (_, stored) in objects.items() for attr in stored}


def _without_aliases(parsed, fnode, objects):
    """``objects`` but those the function also reaches another way (``ALIAS``,
    another name of the object, or ``MODEL.cell``): the lowering follows them by
    identity."""
    local = local_names(fnode)
    ids = {id(obj): base for base, (obj, _) in objects.items()}
    aliased = set()
    for node in gast.walk(fnode):
        if isinstance(node, (gast.Name, gast.Attribute)) and isinstance(node.ctx, gast.Load):
            obj = resolve_dotted(node, parsed.resolve, local)
            base = ids.get(id(obj))
            if base is not None and not (isinstance(node, gast.Name) and node.id == base):
                aliased.add(base)
    return {base: held for base, held in objects.items() if base not in aliased}


def _refuse_other_paths(parsed, fnode, objects, stored):
    """Refuse a read of an attribute the function stores (``.h``) on something that
    may be one of ``objects`` reached another way: an item (``CELLS[0].h``), a
    call's value, a parameter, a loop's variable or a name bound to an item or
    attribute (``c = CELLS[0]; c.h``).  The store is a name of the gradient now, so
    such a read would see the object's old value."""
    local = local_names(fnode)
    params = {a.id for a in fnode.args.posonlyargs + fnode.args.args + fnode.args.kwonlyargs}
    unknown = set(params)
    for node in gast.walk(fnode):
        if isinstance(node, (gast.For, gast.comprehension)):
            unknown |= {n.id for n in gast.walk(node.target) if isinstance(n, gast.Name)}
        elif isinstance(node, gast.Assign) and \
                isinstance(node.value, (gast.Subscript, gast.Attribute, gast.Name, gast.Call)):
            unknown |= {n.id for t in node.targets for n in gast.walk(t)
                        if isinstance(n, gast.Name)}
    for node in gast.walk(fnode):
        if not (isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load) and
                node.attr in stored):
            continue
        base = node.value
        if isinstance(base, gast.Name):
            reached = base.id not in objects and base.id in unknown
        elif isinstance(base, gast.Attribute):
            reached = resolve_dotted(base, parsed.resolve, local) in (None, _UNRESOLVED)
        else:
            reached = True
        if reached:
            written = next(f"{b}.{node.attr}" for b in sorted(objects))
            raise parsed.located(
                UnsupportedSyntaxError,
                f"'.{node.attr}' read on a value that may be an object whose '{node.attr}' the "
                f"function stores ({written}): the gradient follows that store under the "
                f"object's own name only", node, construct=f".{node.attr}",
                hint=f"read it as {written}, or store and read it through one name")


def _drop_uncounted(fnode, candidates):
    """The names of ``candidates`` only their own updates read (``CELL_t = CELL_t
    + 1`` outside loops, a counter nothing reads): those updates are left out, and
    the names need no first value (Python's ``CELL.t += 1`` changed only the
    object, which the gradient does not change)."""
    reads, updates = {}, {}
    inside_loops = set()
    for node in gast.walk(fnode):
        if isinstance(node, (gast.For, gast.While)):
            inside_loops |= {id(n) for n in gast.walk(node)}
    for block in statement_lists(fnode):
        for stmt in block:
            update = _self_update(stmt)
            if update in candidates and id(stmt) not in inside_loops:
                updates.setdefault(update, []).append(stmt)
    # only the update's own left operand is the counter's own read (CELL_b = CELL_b +
    # CELL_a reads CELL_a); an augmented update left as written reads its target
    counted = {id(stmt.value.left) for stmts in updates.values() for stmt in stmts}
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and \
                id(node) not in counted:
            reads[node.id] = True
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            reads[node.target.id] = True
    unread = {name for name in updates if name not in reads}
    for block in statement_lists(fnode):
        block[:] = [stmt for stmt in block if _self_update(stmt) not in unread] or \
            [gast.copy_location(gast.Pass(), block[0])] if block else block
    return unread


def _self_update(stmt):
    """``name`` of ``name = name + 1`` (a name or number added), else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.BinOp) and \
            isinstance(stmt.value.left, gast.Name) and \
            stmt.value.left.id == stmt.targets[0].id and \
            isinstance(stmt.value.right, (gast.Name, gast.Constant)):
        return stmt.targets[0].id
    return None


def _outside_objects(parsed, fnode):
    """{name: (object, {attribute: its first store node})}: the names of ``fnode``
    (none of its own) denoting a user's object, with the attributes the function
    stores on it; a name left to the lowering (an attribute stored in a nested
    function, deleted, or an attribute of one stored) is not among them."""
    local = local_names(fnode)
    found, left = {}, set()
    nested = set()
    for scope in gast.walk(fnode):
        if scope is not fnode and isinstance(scope, SCOPES):
            nested |= {id(n) for n in gast.walk(scope)}
    for node in gast.walk(fnode):
        if not isinstance(node, gast.Attribute) or isinstance(node.ctx, gast.Load):
            continue
        base = node.value
        if isinstance(base, gast.Attribute) and _root(base) not in local:
            left.add(_root(base))  # MODEL.cell.h = v: the lowering's
            continue
        if not isinstance(base, gast.Name) or base.id in local:
            continue
        obj = parsed.resolve(base.id)
        if obj is _UNRESOLVED or isinstance(obj, type) or not user_object(obj):
            continue
        if isinstance(node.ctx, gast.Del) or id(node) in nested or \
                node.attr.startswith("__"):
            left.add(base.id)
            continue
        found.setdefault(base.id, (obj, {}))[1].setdefault(node.attr, node)
    return {name: held for name, held in found.items() if name not in left}


def _functions_left(parsed, fnode):
    """Whether ``fnode`` still names a function of the user's (a ``def``, a
    ``lambda``, a helper called in a comprehension or handed to ``map``): the
    lowering inlines it, and its reads and stores of the object's attributes,
    which this pass does not see, are the lowering's to follow together with the
    function's own."""
    local = local_names(fnode)
    for node in gast.walk(fnode):
        if node is not fnode and isinstance(node, SCOPES):
            return True
        if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load):
            owner = resolve_dotted(node.value, parsed.resolve, local)
            raw = inspect.getattr_static(type(owner), node.attr, None) \
                if owner is not None and user_object(owner) else None
            if isinstance(raw, (property, staticmethod, classmethod)) or \
                    user_function(raw):
                return True  # CELL.scaled, a property's getter the lowering inlines
        if isinstance(node, (gast.Name, gast.Attribute)) and \
                isinstance(node.ctx, gast.Load):
            obj = resolve_dotted(node, parsed.resolve, local)
            fn = getattr(obj, "__func__", obj)
            if user_function(fn) or isinstance(obj, type) and user_class(obj):
                return True
    return False


def _root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _refuse_hooks(parsed, obj, base, attr, node):
    """Refuse a store the object's class controls (a hook, a data descriptor)."""
    cls = type(obj)
    raw = inspect.getattr_static(cls, attr, None)
    if any(inspect.getattr_static(cls, hook, None) is not getattr(object, hook, None)
           for hook in _HOOKS) or hasattr(type(raw), "__set__") or \
            hasattr(type(raw), "__delete__"):
        raise parsed.located(UnsupportedSyntaxError, "assignment to an attribute of an "
                             "object made outside the differentiated function whose "
                             f"class {cls.__name__} controls its attributes (a property "
                             "setter, __slots__, __setattr__)", node,
                             construct=f"{base}.{attr}",
                             hint="keep the value in a variable, or build the object "
                                  "inside the function")


class _FirstReads:
    """The forward walk: which stored attributes a read may see before any store
    (``read_first``: {(name, attribute)}), refusing the object used as a value
    after a store may have run, and an in-place update of the object's own array."""

    def __init__(self, parsed, objects, names):
        self.parsed, self.objects, self.names = parsed, objects, names
        self.value_used = set()  # objects used as a value where no store may have run
        self.read_first = set()
        self.rebound = set()  # ids of the `CELL.t += 1` to write `CELL_t = CELL_t + 1`
        # (base, attr) -> (spelling, line) of the first such update of an attribute
        # read first: the number it held when compiling must still be one when called
        self.numbers = {}
        self.every = frozenset(names)

    def block(self, stmts, surely, maybe):
        """(surely stored, maybe stored) after ``stmts``; ``surely`` is every key
        on a path that left the block (``return``, ``break``, ``continue``)."""
        for stmt in stmts:
            surely, maybe = self.statement(stmt, surely, maybe)
        return surely, maybe

    def statement(self, s, surely, maybe):
        if isinstance(s, gast.If):
            self.reads(s.test, surely, maybe)
            s1, m1 = self.block(s.body, surely, maybe)
            s2, m2 = self.block(s.orelse, surely, maybe)
            return s1 & s2, m1 | m2
        if isinstance(s, (gast.For, gast.While)):
            head = s.iter if isinstance(s, gast.For) else s.test
            self.reads(head, surely, maybe)
            if isinstance(s, gast.For):
                self.reads(s.target, surely, maybe)
            _, after_one = self.block(s.body, surely, maybe)  # the first step
            _, after = self.block(s.body, surely, after_one)  # a later step
            if isinstance(s, gast.While):
                self.reads(s.test, surely, after)
            s2, m2 = self.block(s.orelse, surely, after)
            return surely & s2 if s.orelse else surely, m2
        if isinstance(s, (gast.Return, gast.Break, gast.Continue)):
            if getattr(s, "value", None) is not None:
                self.reads(s.value, surely, maybe)
            return self.every, maybe
        if isinstance(s, (gast.With, gast.AsyncWith)):
            for item in s.items:
                self.reads(item, surely, maybe)
            return self.block(s.body, surely, maybe)
        if isinstance(s, gast.Try):
            self.reads(s, frozenset(), self.every)  # (the lowering refuses try)
            return surely, self.every
        if isinstance(s, SCOPES):
            self.reads(s, frozenset(), maybe)  # a nested def reads when called
            return surely, maybe
        if isinstance(s, gast.AugAssign):
            self.reads(s.value, surely, maybe)
            self.in_place(s, surely)
            self.reads(s.target, surely, maybe, stored=False)
            return surely | self.stores(s.target), maybe | self.stores(s.target)
        targets = s.targets if isinstance(s, gast.Assign) else \
            [s.target] if isinstance(s, gast.AnnAssign) else []
        value = s.value if isinstance(s, (gast.Assign, gast.AnnAssign)) else s
        if value is not None:
            self.reads(value, surely, maybe, bound=bool(targets))
        stored = frozenset()
        for t in targets:
            self.reads(t, surely, maybe)  # (an index, a subscripted attribute)
            stored |= self.stores(t)
        return surely | stored, maybe | stored

    def stores(self, target):
        return frozenset((n.value.id, n.attr) for n in gast.walk(target)
                         if self.key(n) is not None and not isinstance(n.ctx, gast.Load))

    def key(self, node):
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                (node.value.id, node.attr) in self.names:
            return node.value.id, node.attr
        return None

    def reads(self, node, surely, maybe, stored=True, bound=False):
        """The loads in ``node``: a stored attribute read where no store surely ran;
        the object itself used as a value where a store may have run, or bound to
        a name (``c = CELL``: ``c.h`` would read the object, not what the code
        stored), refused."""
        parents = {}
        for n in gast.walk(node):
            for child in gast.iter_child_nodes(n):
                parents[id(child)] = n
        for n in gast.walk(node):
            key = self.key(n)
            if key is not None and (isinstance(n.ctx, gast.Load) or not stored) and \
                    key not in surely:
                self.read_first.add(key)
            if isinstance(n, gast.Name) and n.id in self.objects and \
                    isinstance(n.ctx, gast.Load) and not self.data_read(n, parents):
                if bound or any(k[0] == n.id for k in maybe):
                    self.used_as_value(n)
                self.value_used.add(n.id)

    def data_read(self, name, parents):
        """``CELL.W``: an attribute of the object's own data (not a method, a
        property or a descriptor of its class, which would see the object)."""
        parent = parents.get(id(name))
        if not isinstance(parent, gast.Attribute) or parent.value is not name:
            return False
        obj = self.objects[name.id][0]
        raw = inspect.getattr_static(type(obj), parent.attr, None)
        return (name.id, parent.attr) in self.names or not hasattr(type(raw), "__get__")

    def in_place(self, s, surely):
        """``CELL.h += v`` where the object's own array may be what ``CELL.h``
        holds: refused (NumPy would change it under every name holding it)."""
        key = self.key(s.target)
        if key is None or key in surely:
            return
        held = getattr(self.objects[key[0]][0], key[1], None)
        if not hasattr(type(held), "__iadd__"):  # a number: += rebinds it
            self.rebound.add(id(s))
            # (checked again where the gradient reads it: the object may hold an array then)
            self.numbers.setdefault(key, (f"{key[0]}.{key[1]}", s.lineno))
            return
        written = f"{key[0]}.{key[1]}"
        raise self.parsed.located(
            UnsupportedSyntaxError, "in-place update of an array an object made "
            "outside the differentiated function holds", s,
            construct=f"{written} += ...",
            hint=f"rebind the attribute: {written} = {written} + ...")

    def used_as_value(self, node):
        obj = self.objects[node.id][0]
        raise self.parsed.located(
            UnsupportedSyntaxError, f"the object {node.id} ({type(obj).__name__}), whose "
            "attributes the differentiated code assigns, used as a value", node,
            construct=node.id,
            hint="the gradient does not change the object, so code given it would read "
                 "its attributes unchanged: read the attributes or call its methods where "
                 "it is named")


class _Rename(gast.NodeTransformer):
    """Each ``CELL.h`` of a stored attribute as its name."""

    def __init__(self, names, rebound):
        self.names, self.rebound = names, rebound

    def visit_AugAssign(self, node):
        """``CELL.t += 1`` where the object's number may be what it holds, as
        ``CELL_t = CELL_t + 1`` (``+=`` rebinds a number: the same)."""
        if id(node) not in self.rebound:
            return self.generic_visit(node)
        read = gast.copy_location(gast.Attribute(value=gast.Name(
            id=node.target.value.id, ctx=gast.Load(), annotation=None, type_comment=None),
            attr=node.target.attr, ctx=gast.Load()), node.target)
        value = gast.copy_location(gast.BinOp(left=read, op=node.op, right=node.value), node)
        new = gast.copy_location(gast.Assign(targets=[node.target], value=value,
                                             type_comment=None), node)
        return self.generic_visit(new)

    def visit_Attribute(self, node):
        if isinstance(node.value, gast.Name) and (node.value.id, node.attr) in self.names:
            new = gast.Name(id=self.names[(node.value.id, node.attr)], ctx=node.ctx,
                            annotation=None, type_comment=None)
            return gast.copy_location(new, node)
        return self.generic_visit(node)


def _binding(name, base, attr, fnode):
    """``CELL_h = CELL.h`` at the top of ``fnode``."""
    value = gast.Attribute(value=gast.Name(id=base, ctx=gast.Load(), annotation=None,
                                           type_comment=None), attr=attr, ctx=gast.Load())
    stmt = gast.Assign(targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None,
                                          type_comment=None)],
                       value=value, type_comment=None)
    for n in gast.walk(stmt):
        gast.copy_location(n, fnode)
    return stmt
