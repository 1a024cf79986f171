"""Lower: attributes the differentiated code assigns on an object made outside it,
where desugar did not write them as names.

``desugar/outside_attributes.py`` writes the common case as names before the
lowering sees it (a module-level or closure object named by one plain name, in
a function whose helpers desugar inlined).  What it leaves comes here: an object
named in ``wrt``, one reached by a dotted name (``MODEL.cell.h``) or under two
names, and a function that still calls one of the user's functions (in a
comprehension, through ``map``, a nested ``def``), whose body the lowering
inlines.  The rest of this docstring says how.

``h = CELL.forward(h)`` on a module-level object whose method caches what it
computed (``self.h = h; self.out = np.tanh(self.W @ self.h)``) is differentiated
as the code runs: each attribute the code assigns becomes a variable of the
gradient (``cell_h``), so that a read after the store sees the new value; an
attribute never assigned is read as before (a module-level object's arrays are
constants, an object in ``wrt`` has its parameters).  Where a read may come
before any store (a branch not taken, a loop that ran no step), the variable
starts as the attribute's value when the gradient is called (``CELL_h =
CELL.h``, at the top of the function), so that the read sees the object's
value, as Python does; a loop that reads the attribute before it assigns it
(``self.t += 1``) is lowered again with the variable bound at the top from the
start (:class:`LowerAgain`), so each step reads what the step before stored.

The gradient never changes the object: like a write into an argument
(docs/inplace.md), the side effect of the function on the caller's object is
not reproduced.  What could not be exact that way is refused:

- the object used as a value by code that runs when the gradient runs
  (``print(CELL)``, handing it to a function the compiler does not inline): that
  code would see the object's attributes unchanged;
- ``self.h += v`` where the value is an array or list (checked when it runs):
  NumPy adds in place into an array other names may hold; a number is rebound;
- item writes ``self.acc[j] = v`` into an array such an object holds;
- a read of an attribute the code assigns (``CELL.h = ...``) on a value known
  only when the code runs (``CELLS[0].h``, a parameter's ``cells[0].h``), before
  or after the store: the value may be the object, read with its old ``h``;
- a tuple, list or dict the code builds stored on an attribute (``CELL.state =
  (h, c)``): the attribute's variable holds one value;
- the object's attribute dict (``vars(CELL)``, ``CELL.__dict__``) where the code
  assigns its attributes, before or after the store: the dict is the object's
  own, which holds the attributes unchanged;
- an attribute written through a data descriptor (a property's setter,
  ``__slots__``) or on a class with ``__setattr__``/``__getattr__`` hooks.

A write into an array after a method stored it (``CELL.forward(h)`` with
``self.h = h``, then ``h += 1``) is the aliasing fence's: it reads what a bound
method stores into its object (``fence/alias_helpers.py``).
"""

import types

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.fence.object_facts import plain_attribute_store
from tangent_ckpt.compiler.frontend.parse import _UNRESOLVED
from tangent_ckpt.compiler.frontend.reached_functions import user_function, user_object
from tangent_ckpt.compiler.lower.containers import UserLine
from tangent_ckpt.compiler.lower.observers import emit_observation
from tangent_ckpt.compiler.lower.scopes import CompileTimeValue, ObjectValue, to_source
from tangent_ckpt.errors import UnsupportedSyntaxError

class LowerAgain(Exception):
    """A loop reads ``key``'s attribute before it assigns it: the step after the
    first must read what the step before stored, which the read, lowered as the
    object's value, does not.  The function is lowered again with the attribute
    a variable from the top on (``normalize.py``)."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


class OutsideAttributes:
    """The attributes the code assigns on objects it did not make
    (``lo.objects.outside``)."""

    def __init__(self, lowering):
        self.lo = lowering
        self.assigned = {}  # id(obj) -> (obj, {attr: ir.Name or a compile-time value})
        self.read_in_loops = {}  # (id(obj), attr) -> serials of the loops open at reads
        self.initial = {}  # (id(obj), attr) -> the variable's first binding (root block)
        self.initial_at = 0  # where the next first binding goes in the root block
        self.reading = False  # binding an object to read an attribute's first value
        self.early = frozenset()  # keys of attributes bound at the top (LowerAgain)
        self.run_time_reads = {}  # attr -> the first `value.attr` read on a run-time value
        self.dict_reads = {}  # id(obj) -> the first vars(obj) / obj.__dict__ read

    # --- which objects ----------------------------------------------------------------
    def owner(self, node):
        """The object ``node`` (the ``x`` of ``x.attr = v``) denotes when it is an
        object of a user's class made outside the differentiated code (a
        module-level object, an attribute of one, the ``self`` of a method called
        on one), or an object named in ``wrt``; else None."""
        obj = self.lo.expressions.static_value(node)
        if isinstance(obj, ObjectValue):
            return obj if obj.given else None
        if obj is _UNRESOLVED or isinstance(obj, CompileTimeValue) or not user_object(obj):
            return None
        return obj

    def value_of(self, node):
        """What ``obj.attr`` holds when the code assigned it on an object made
        outside (a variable, or a compile-time value); None otherwise."""
        if not isinstance(node, gast.Attribute) or not self.assigned:
            return None
        return self.attribute_of(self.lo.expressions.static_value(node.value), node.attr)

    def attribute_of(self, obj, attr):
        """What the code assigned to ``obj.attr`` (``obj`` a plain object), or None;
        an attribute a loop reads before it assigns it is a variable from the top
        of the function on (:class:`LowerAgain`)."""
        held = self.assigned.get(id(obj))
        if (held is None or held[0] is not obj or attr not in held[1]) and \
                (id(obj), attr) in self.early:
            name = self.lo.namer.fresh(f"{self.label(obj)}_{attr}")
            self.bind_first(obj, attr, name, self._read_when_called(obj, attr))
            self.assigned.setdefault(id(obj), (obj, {}))[1][attr] = ir.Name(name)
            held = self.assigned[id(obj)]
        return None if held is None or held[0] is not obj else held[1].get(attr)

    def given_attribute(self, owner, attr):
        """``params.t`` of an object in ``wrt``: a variable from the top of the
        function on where a loop reads it before it assigns it."""
        value = owner.attributes[attr]
        if isinstance(value, ir.Name) or isinstance(value, CompileTimeValue):
            return value
        if self.key(owner, attr) in self.early:
            name = self.lo.namer.fresh(f"{owner.label}_{attr}")
            self.bind_first(owner, attr, name, ir.Copy(value))
            owner.attributes[attr] = value = ir.Name(name)
        else:
            self.note_read(owner, attr)  # a constant of the gradient
        return value

    def refuse_as_value(self, obj):
        """Refuse ``obj`` used as a value by code run when the gradient runs, where
        the code assigns its attributes (that code would see them unchanged)."""
        held = self.assigned.get(id(obj))
        if held is not None and held[0] is obj and not self.reading:
            raise self.used_as_value(obj)

    def refuse_renamed(self, obj, attr, node):
        """Refuse ``obj.attr`` met by the lowering where desugar wrote the
        differentiated function's ``obj.attr`` as a name
        (``desugar/outside_attributes.py``, which leaves alone a function that
        still names one of the user's functions): the two would not be one value."""
        held = self.lo.parsed.outside_written.get(id(obj))
        if held is None or held[0] is not obj or attr not in held[1] or \
                node in self.lo.parsed.read_when_called:  # CELL_h = CELL.h itself
            return
        where = node if getattr(node, "lineno", None) else UserLine(self.lo.line)
        raise self.lo.error(UnsupportedSyntaxError, f"'{self.label(obj)}.{attr}', which "
                            "the differentiated function assigns, reached where desugar "
                            "did not write it as a name", where,
                            construct=f"{self.label(obj)}.{attr}",
                            hint="keep the value in a variable")

    # --- reads ------------------------------------------------------------------------
    def note_read(self, obj, attr):
        """``obj.attr`` read as the object's value (a constant of the gradient)."""
        if self.lo.loops.serials:
            key = self.key(obj, attr)
            self.read_in_loops.setdefault(key, set()).update(self.lo.loops.serials)

    def note_run_time_read(self, node):
        """``value.attr`` read on a value known only when the code runs (an item of a
        module-level list, a parameter, a name bound to either): refused where the
        code assigns ``attr`` on an object made outside, before or after this read,
        for the value may be that object and would be read with its old value."""
        self.run_time_reads.setdefault(node.attr, node)
        stored = self._stored_outside(node.attr)
        if stored is not None:
            raise self._other_path_refusal(node, stored)

    def note_attribute_dict(self, obj, node):
        """``vars(obj)`` or ``obj.__dict__`` of an object made outside: refused where
        the code assigns the object's attributes, before or after this read (the
        dict is the object's own, which the gradient never changes: it would hold
        the old values)."""
        held = self.assigned.get(id(obj))
        if held is not None and held[0] is obj:
            raise self._attribute_dict_refusal(obj, node)
        self.dict_reads.setdefault(id(obj), (obj, node))

    def _attribute_dict_refusal(self, obj, node):
        return self.lo.error(UnsupportedSyntaxError, f"the attributes of {self.label(obj)} "
                             f"({type(obj).__name__}) read as its dict, where the "
                             "differentiated code assigns them", node,
                             construct=to_source(node),
                             hint="the gradient does not change the object, so its dict "
                                  "holds its attributes unchanged: read each attribute by "
                                  f"name ({self.label(obj)}.name)")

    def _stored_outside(self, attr):
        """``CELL.attr`` where the code (or desugar, as a name) assigns ``attr`` on
        an object made outside; None where it assigns none."""
        for held in (self.assigned, self.lo.parsed.outside_written):
            for obj, attributes in held.values():
                if attr in attributes:
                    return f"{self.label(obj)}.{attr}"
        return None

    def _other_path_refusal(self, node, stored):
        return self.lo.error(UnsupportedSyntaxError, f"'.{node.attr}' read on a value that "
                             f"may be an object whose '{node.attr}' the function stores "
                             f"({stored}): the gradient follows that store under the "
                             "object's own name only", node, construct=f".{node.attr}",
                             hint=f"read it as {stored}, or store and read it through one "
                                  "name")

    # --- stores -----------------------------------------------------------------------
    def store(self, owner, target, value, stmt):
        """``target = value`` (``owner.attr``, ``value`` lowered) on an object made
        outside the code."""
        attr = target.attr
        if self.lo.parsed.outside_given and not isinstance(owner, ObjectValue):
            what, hint = self.lo.parsed.outside_store_refusal(to_source(target))
            raise self.lo.error(UnsupportedSyntaxError, what, stmt, hint=hint,
                                construct=to_source(target))
        if attr in self.run_time_reads:  # CELLS[0].h read before CELL.h = ...
            label = owner.label if isinstance(owner, ObjectValue) else self.label(owner)
            raise self._other_path_refusal(self.run_time_reads[attr], f"{label}.{attr}")
        if not isinstance(owner, ObjectValue):
            self.refuse_renamed(owner, attr, stmt)
            read = self.dict_reads.get(id(owner))
            if read is not None and read[0] is owner:  # vars(CELL) before CELL.h = ...
                raise self._attribute_dict_refusal(owner, read[1])
        self._refuse_hooks(owner, attr, target, stmt)
        self._lower_again_if_read_earlier_in_loop(owner, attr, target, stmt)
        if isinstance(owner, ObjectValue):  # in wrt: its attributes are variables already
            self.lo.parsed.stores_on_given = True
            if not isinstance(owner.attributes.get(attr), ir.Name) and \
                    not isinstance(value, CompileTimeValue) and attr in owner.attributes:
                name = self.lo.namer.fresh(f"{owner.label}_{attr}")
                self.bind_first(owner, attr, name, ir.Copy(owner.attributes[attr]))
                owner.attributes[attr] = ir.Name(name)
            self.lo.objects.store_attribute(owner, attr, value, stmt.lineno)
            return
        current = self.attribute_of(owner, attr)
        if not isinstance(current, ir.Name) and not isinstance(value, CompileTimeValue):
            name = self.lo.namer.fresh(f"{self.label(owner)}_{attr}")
            if hasattr(owner, attr):  # read where no store ran: the object's value
                self.bind_first(owner, attr, name, self._read_when_called(owner, attr))
            current = ir.Name(name)
        _, attributes = self.assigned.setdefault(id(owner), (owner, {}))
        if isinstance(value, CompileTimeValue):
            attributes[attr] = value
            return
        if not isinstance(value, (ir.Prim, ir.NonDiff, ir.Name, ir.Const, ObjectValue)):
            raise self._container_refusal(target, stmt)
        self.lo.assignments.emit_value(current.id, value, stmt.lineno)
        attributes[attr] = current

    def _container_refusal(self, target, stmt):
        """``CELL.state = (h, c)`` (a tuple, list or dict the code builds) where the
        lowering follows the object: its variable holds one value, not a container
        of the code's variables (desugar writes the store as a name where the
        function calls none of the user's functions)."""
        return self.lo.error(UnsupportedSyntaxError, "a tuple, list or dict stored on an "
                             "attribute of an object made outside the differentiated "
                             "function, which also calls one of the user's functions "
                             "(in a comprehension, map, a nested def)", stmt,
                             construct=f"{to_source(target)} = ...",
                             hint="keep the container in a variable, or store each item on "
                                  "an attribute of its own")

    def check_in_place(self, target, stmt):
        """``self.h += v`` on an object made outside: a number is rebound; an array
        or a list would change in place, under every name that holds it."""
        if not isinstance(target, gast.Attribute) or self.owner(target.value) is None:
            return False
        owner = self.owner(target.value)
        current = self.value_of(target) if not isinstance(owner, ObjectValue) else \
            owner.attributes.get(target.attr)
        if isinstance(current, ir.Name):
            check = sx.rt("refuse_outside_in_place", sx.name(current.id),
                          written=sx.const(to_source(target)), line=sx.const(stmt.lineno))
            emit_observation(self.lo, check, (current.id,), stmt.lineno)
            return True
        held = getattr(owner, target.attr, None) if not isinstance(owner, ObjectValue) \
            else None
        if hasattr(type(held), "__iadd__"):
            raise self._in_place_refusal(target, stmt)
        return True

    def refuse_subscript_store(self, target, stmt):
        """``self.acc[j] = v`` on an object made outside: refused (the object's array
        would change, which other names may hold)."""
        node = target.value
        if not isinstance(node, gast.Attribute) or self.owner(node.value) is None:
            return
        raise self.lo.error(UnsupportedSyntaxError, "assignment into an array an object made "
                            "outside the differentiated function holds", stmt,
                            construct=f"{to_source(target)} = ...",
                            hint=f"compute the new array and assign it to the attribute "
                                 f"({to_source(node)} = ...), or build the object inside "
                                 "the function")

    def _in_place_refusal(self, target, stmt):
        return self.lo.error(UnsupportedSyntaxError, "in-place update of an array an object "
                             "made outside the differentiated function holds", stmt,
                             construct=f"{to_source(target)} += ...",
                             hint=f"rebind the attribute: {to_source(target)} = "
                                  f"{to_source(target)} + ...")

    # --- helpers ----------------------------------------------------------------------
    def bind_first(self, owner, attr, name, value):
        """``name = value`` at the top of the differentiated function."""
        line = self.lo.parsed.node.lineno
        at = self.initial_at
        self.lo.root_block.insert(at, ir.Assign(name, value, line))
        self.initial_at = at + 1
        self.initial[self.key(owner, attr)] = name

    @staticmethod
    def key(owner, attr):
        """The same attribute in a lowering run again (an object in wrt is made
        anew each time: its parameter's name)."""
        return ("wrt", owner.label, attr) if isinstance(owner, ObjectValue) else \
            (id(owner), attr)

    def _read_when_called(self, obj, attr):
        self.reading = True  # this binding reads the attribute before any store
        try:
            operand = self.lo.expressions.bind(obj, self.label(obj))
        finally:
            self.reading = False
        return ir.Prim(getattr, [operand], {}, f"attr:{attr}", ref=f"{operand.id}.{attr}")

    def label(self, obj):
        for name, value in self.lo.parsed.globals.items():
            if value is obj and name.isidentifier():
                return name
        return type(obj).__name__.lower()

    def _refuse_hooks(self, owner, attr, target, stmt):
        cls = owner.cls if isinstance(owner, ObjectValue) else type(owner)
        if not plain_attribute_store(cls, attr):
            raise self.lo.error(UnsupportedSyntaxError, "assignment to an attribute of an "
                                f"object made outside the differentiated function whose "
                                f"class {cls.__name__} controls its attributes (a property "
                                "setter, __slots__, __setattr__)", stmt,
                                construct=to_source(target),
                                hint="keep the value in a variable, or build the object "
                                     "inside the function")

    def _lower_again_if_read_earlier_in_loop(self, owner, attr, target, stmt):
        key = self.key(owner, attr)
        if key in self.initial or isinstance(owner, ObjectValue) and \
                isinstance(owner.attributes.get(attr), ir.Name):
            return  # a variable already: every read after its binding reads it
        if id(owner) in self.assigned and isinstance(self.assigned[id(owner)][1].get(attr),
                                                     ir.Name):
            return
        read = self.read_in_loops.get(key, set())
        if read & set(self.lo.loops.serials) and key not in self.early:
            raise LowerAgain(key)
        if read & set(self.lo.loops.serials):  # pragma: no cover - a variable by then
            raise self.lo.error(UnsupportedSyntaxError, f"'{to_source(target)}' is read in "
                                "this loop before the loop's first assignment to it, on an "
                                "object made outside the differentiated function", stmt,
                                construct=to_source(target),
                                hint="assign the attribute once before the loop "
                                     "(obj.attr = obj.attr), or keep the value in a variable")

    def used_as_value(self, obj):
        """The refusal of ``obj``, whose attributes the code assigns, used as a value
        by code that runs when the gradient runs (it would see them unchanged)."""
        return self.lo.error(UnsupportedSyntaxError, f"the object {self.label(obj)} "
                             f"({type(obj).__name__}), whose attributes the differentiated "
                             "code assigns, used as a value", UserLine(self.lo.line),
                             construct=self.label(obj),
                             hint="the gradient does not change the object, so code given "
                                  "it would read its attributes unchanged: read the "
                                  "attributes or call its methods where it is named")



def outside_method(value):
    """Whether ``value`` is a user's method bound to an object of a user's class
    (``CELL.forward``): called as a statement, it is inlined like a method of an
    object made in the function."""
    return isinstance(value, types.MethodType) and user_function(value.__func__) and \
        user_object(value.__self__)


def drop_unread_first_values(function, outside):
    """Leave out the first bindings (``cell_h = CELL.h``) that no read can see:
    every path stores into the attribute before it reads it (p19's cell caches
    ``self.x`` before any read), so the gradient reads nothing it does not need."""
    initial = set(outside.initial.values())
    body = function.body
    for k in reversed(range(min(outside.initial_at, len(body)))):
        stmt = body[k]
        if isinstance(stmt, ir.Assign) and stmt.target in initial and \
                not _read_first(body[k + 1:], stmt.target)[0]:
            del body[k]


def _read_first(body, name):
    """(whether some path through ``body`` may read ``name`` before writing it,
    whether every path writes it)."""
    for stmt in body:
        if isinstance(stmt, ir.Assign):
            if name in ir.expr_reads(stmt.expr):
                return True, False
            if stmt.target == name:
                return False, True
        elif isinstance(stmt, ir.SetItem):
            if name == stmt.target or name in stmt.index.names or \
                    name in ir.operand_names(stmt.value):
                return True, False
        elif isinstance(stmt, ir.If):
            if stmt.test == name:
                return True, False
            then_read, then_written = _read_first(stmt.body, name)
            else_read, else_written = _read_first(stmt.orelse, name)
            if then_read or else_read:
                return True, False
            if then_written and else_written:
                return False, True
        elif isinstance(stmt, (ir.For, ir.While)):
            bounds = [n for b in stmt.bounds for n in ir.operand_names(b)] \
                if isinstance(stmt, ir.For) else list(stmt.test.names)
            if name in bounds or _read_first(stmt.body, name)[0]:
                return True, False  # (a loop may run no step: it surely writes nothing)
        elif isinstance(stmt, ir.Segment):
            read, written = _read_first(stmt.body, name)
            if read or name in ir.operand_names(stmt.min_bytes) or \
                    name in ir.operand_names(stmt.enabled):
                return True, False
            if written:
                return False, True
        elif isinstance(stmt, ir.Break):
            if stmt.flag == name:
                return True, False
        else:
            return True, False  # a statement not known here: it may read anything
    return False, False
