"""Aliasing fence: refuse writes through names that may share memory, where the
view lowering (``views.py``) does not follow them.

NumPy arrays are references.  After ``v = V[1:3]`` a write ``v += x`` changes
``V`` too; after ``b = a`` a write ``b[0] = 1`` changes ``a``.  The compiler
lowers user code with value semantics (every assignment makes a new value), so
such a write would be differentiated as if the two names were independent: a
silently wrong gradient.  The view lowering makes the writes it can follow
explicit first; this analysis refuses the rest: a write to a name whose memory
may be shared with another name that is read later raises a
:class:`TransformError` naming both names and the line.

The analysis works on the user's syntax tree, one function at a time (the
differentiated function and every helper the compiler inlines):

- a forward pass tracks, for each name, the memory *origins* it may be (``is``)
  and the origins it may hold references to (``holds``, for containers).  An
  origin is an allocation site (versioned, so that a site executed again in a
  loop is a different array from the one kept from the previous iteration), a
  parameter, or a global;
- a backward pass computes which names are live (may be read again) after each
  statement;
- at each write (``n += ...``, ``n[...] = ...``, ``n.attr = ...``, in-place
  methods, ``out=``), the written origins are compared with those of every other
  live name.

It is deliberately conservative: what it cannot prove separate is assumed
shared.  Writes to a name that shares memory only with names never read again
are allowed: value semantics compute the same numbers there.
"""

import ast
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.desugar.live_rows import live_root, plainly_rebinds
from tangent_ckpt.compiler.fence.fence_guards import GuardNotes
from tangent_ckpt.compiler.fence.alias_helpers import (HelperCalls, _defined_once, _parameters,
                                                      helper_summary, local_names)
from tangent_ckpt.compiler.fence.alias_swaps import SwapRenaming
from tangent_ckpt.compiler.fence.alias_values import (Origins, _base_name, _Info, _is_in, _join,
                                                 _older, repeated_items, site_node)
from tangent_ckpt.compiler.desugar.liveness import NameLiveness, bound_names, read_names
from tangent_ckpt.compiler.memory_sharing import (WRITING_FUNCTIONS, WRITING_METHODS,
                                                  returns_new, unbuffered_write)
from tangent_ckpt.compiler.desugar.method_writes import (
    constructed_classes, handed_parameters, method_of, writes_self_in_place,
)
from tangent_ckpt.compiler.fence.number_arguments import ARRAY, NUMBER, SEQUENCE, number_parameters
from tangent_ckpt.compiler.fence.object_facts import (
    Code, number_attributes, object_parameter, plain_attribute_store, plain_instance_attribute,
)
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted
from tangent_ckpt.compiler.desugar.view_shape import DenotedObject
from tangent_ckpt.compiler.frontend.reached_functions import user_function, user_object
from tangent_ckpt.compiler.node_facts import NodeFacts, ViewMarks
from tangent_ckpt.compiler.frontend.static_keys import static_key
from tangent_ckpt.errors import TangentCkptError, UnsupportedSyntaxError


class AliasFence(HelperCalls, SwapRenaming, Origins):
    """Forward pass over one function: origins of each name, checked at writes."""

    def __init__(self, parsed, fnode, followed=(), checking=True, analysing=frozenset(),
                 receiver=None, callables_new=False, parameters_live=False, numbers=None):
        self.parsed = parsed
        # a call of a parameter never rebound (``s = step(x)``, ``step`` given by the
        # caller) taken to return new objects: each call site of the function checks
        # what it gives (lower/guards.py check_callable_arguments); ``called``: those
        self.callables_new, self.called = callables_new, set()
        self.bound_values = None  # alias_values.py own_bindings
        stored = {n.id for n in gast.walk(fnode) if isinstance(n, gast.Name) and
                  isinstance(n.ctx, (gast.Store, gast.Del))}
        self.fixed_parameters = {a.id for a in fnode.args.posonlyargs + fnode.args.args +
                                 fnode.args.kwonlyargs} - stored
        self.followed = followed  # ids of views the view lowering follows: new arrays here
        self.marks = getattr(followed, "marks", None) or ViewMarks()  # views.py declared
        self.receivers = NodeFacts()  # calls on objects whose methods were checked here
        self.fnode = fnode
        self.checking = checking  # False: only what the function returns (returned_info)
        self.analysing = analysing | {id(fnode)}  # functions whose returns are being read
        self.returned, self.returns = _Info(), 0  # what its return statements may return
        self.stored = {}  # origin -> what stores into its object made it hold
        self.updated_places = set()  # origins of containers a place of which is updated in place
        self.locals = local_names(fnode)
        self.local_functions = _defined_once(fnode)
        # the parameters the call gives numbers, or lists or tuples of numbers that
        # the function only reads (number_arguments.py): they hold no memory
        self.given_numbers = number_parameters(fnode, numbers, self.parsed.resolve, self.locals)
        self.number_sequences = frozenset(("param", name) for name, kind in
                                          self.given_numbers.items() if kind == SEQUENCE)
        # the parameters the call gives NumPy arrays of numbers (numeric_array)
        self.array_parameters = frozenset(name for name, kind in self.given_numbers.items()
                                          if kind == ARRAY)
        # names a function defined inside may bind (nonlocal): not the bindings seen here
        self.rebound_inside = {name for n in gast.walk(fnode) if isinstance(n, gast.Nonlocal)
                               for name in n.names}
        self.returns_new = {}  # id of a local FunctionDef -> whether it returns new objects
        self.always_live = set()
        # a for loop's iterable while its body runs -> (the loop, the names whose current
        # rows it reads, whether it visits a container's items): Python's iterator reads
        # each row from the iterable's memory when it reaches it
        self.iterating = {}
        # a helper's parameters: its caller's arrays, read after it returns, so a write
        # into a local that may share one's memory (row = x[k]; row[0] = v) changes
        # what the caller reads (a write into the parameter itself is the inliner's)
        self.live_parameters = set(_parameters(fnode)) if parameters_live else set()
        for child in gast.walk(fnode):
            if child is not fnode and isinstance(child, (gast.FunctionDef, gast.Lambda)):
                self.always_live |= read_names(child)
        self.liveness = {}  # name -> ids of the statements after which it is live
        self.read_cache = {}
        self.loop_depth = 0
        self.loop_exits = []  # per open loop: the origins at its breaks and continues
        # origin (and site id) -> names ever bound to it: an over-estimate, for lookups
        self.holders = {}
        self.site_cache = {}
        self.builtin_sites = set()  # sites making lists, dicts, arrays (alias_values.py)
        self.container_sites = set()  # sites making lists, tuples, dicts, sets
        self.index_sites = set()  # sites making boolean masks or index arrays
        self.list_sites = set()  # sites making lists: list displays, list comprehensions
        self.blurred = set()  # sites whose kind is forgotten (AliasFence.relabelled)
        # names bound only to objects of user classes made here: their methods are known
        self.objects = constructed_classes(fnode, self.resolve, self.locals)
        # a method fenced for an object its class makes in the code (object_facts.py):
        # (class, the attributes it holds only as arrays or numbers), and the code's
        # own terms for them; None for a method read alone
        self.receiver, self.me, self.receiver_code = None, None, None
        me = object_parameter(fnode) if receiver is not None else None
        if me is not None:
            self.receiver, self.me = receiver, me
            self.receiver_code = Code(fnode, parsed.resolve, me)
            self.objects[me] = {receiver[0]}
        self.guards = GuardNotes(parsed, fnode)  # what only the call decides (fence_guards.py)
        # which names surely hold arrays, and of what ndim (view_facts.py): read from
        # the function's own bindings, so not in a function defined inside it, nor for
        # a name a comprehension binds too
        self.array_facts = getattr(followed, "facts", None) if fnode is parsed.node else None
        self.counters = getattr(followed, "counters", frozenset())
        self.bindings = getattr(followed, "bindings", {})
        # the lists the function holds under one name, and what may be their items
        self.held = getattr(followed, "held", {}) if fnode is parsed.node else {}
        self.numeric = {}  # name -> whether its arrays surely hold numbers (alias_values.py)
        self.comprehended = {n.id for c in gast.walk(fnode) if isinstance(c, gast.comprehension)
                             for n in gast.walk(c.target) if isinstance(n, gast.Name)}

    # --- the forward pass -------------------------------------------------------
    def run(self):
        env = {}
        args = self.fnode.args
        for a in args.posonlyargs + args.args + args.kwonlyargs + \
                [x for x in (args.vararg, args.kwarg) if x is not None]:
            kind = self.given_numbers.get(a.id)
            if kind == NUMBER:
                self.set(env, a.id, _Info())  # a number: no memory
            elif kind in (SEQUENCE, ARRAY):
                # a list of numbers, an array of numbers: its own memory, holding none
                self.set(env, a.id, _Info({("param", a.id)}))
            else:
                self.set(env, a.id, _Info({("param", a.id)}, {("param*", a.id)}))
        self.block(self.fnode.body, env)
        return self.receivers

    def block(self, stmts, env):
        """The origins after ``stmts``; None where no path runs past them (each
        ended in ``break``, ``continue``, ``return`` or ``raise``)."""
        for s in stmts:
            if env is None:
                return None  # unreachable: what it binds flows nowhere
            env = self.statement(s, env)
        return env

    def statement(self, s, env):
        """The origins after ``s``; ``env`` is updated in place where it can be.
        A ``break`` hands its origins to the loop's exit and a ``continue`` to the
        loop's next iteration, so an alias made just before leaving a loop
        (``result = x; break``) is not carried around it."""
        if isinstance(s, (gast.Break, gast.Continue)) and self.loop_exits:
            breaks, continues = self.loop_exits[-1]
            (breaks if isinstance(s, gast.Break) else continues).append(env)
            return None
        if isinstance(s, gast.Raise):
            self.check_calls(s, env)
            return None
        if s in self.marks.takes:
            return env  # the view lowering takes a followed view again
        if self.loop_depth:
            self.age(env, s)
        self.check_calls(s, env)
        if isinstance(s, gast.Return):
            if s.value is not None:
                value = self.info(s.value, env)  # (the first return keeps its items)
                self.returned = value if not self.returns else self.returned.join(value)
                self.returns += 1
            return None
        if s in self.marks.write_backs:  # a write into a parent's memory
            target = s.targets[0]
            base = _base_name(target) if not isinstance(target, gast.Name) else target.id
            self.check_write(base, env.get(base, self.free_info(base)).is_, env, s, target)
            return env
        if isinstance(s, gast.Assign):
            value = self.info(s.value, env)
            for t in s.targets:
                self.bind(t, s.value, value, env, s)
            return env
        if isinstance(s, gast.AnnAssign):
            if s.value is not None:
                self.bind(s.target, s.value, self.info(s.value, env), env, s)
            return env
        if isinstance(s, gast.AugAssign):
            self.aug_assign(s, env)
            return env
        if isinstance(s, gast.If):
            then_env = self.block(s.body, dict(env))
            else_env = self.block(s.orelse, dict(env))
            if then_env is None or else_env is None:
                return then_env if else_env is None else else_env
            if self.loop_depth:
                # a site run in one branch only: what the other branch still calls its
                # latest object is older than the one just made
                then_sites, else_sites = self.sites(s.body), self.sites(s.orelse)
                self.age_sites(else_env, then_sites - else_sites)
                self.age_sites(then_env, else_sites - then_sites)
            return _join(then_env, else_env)
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s, env)
        if isinstance(s, gast.With):
            return self.block(s.body, env)
        if isinstance(s, gast.Try):
            # a handler may start anywhere in the body: from what held before or after it
            before = dict(env)
            env = self.block(s.body, env)
            start = before if env is None else _join(before, env)
            for part in [h.body for h in s.handlers] + [s.orelse, s.finalbody]:
                env = _joined(env, self.block(part, dict(start)))
            return env
        return env

    def set(self, env, name, info):
        before = env.get(name)  # the same objects: a store into them (x.append(a), x.h = a)
        if before is not None and before.is_ == info.is_ and info.holds - before.holds:
            for origin in info.is_:
                self.stored.setdefault(origin, set()).update(info.holds - before.holds)
        env[name] = info
        for origin in info.is_ | info.holds:
            self.holders.setdefault(origin, set()).add(name)
            if origin[0] == "site":
                self.holders.setdefault(site_node(origin[1]), set()).add(name)

    def age(self, env, s):
        """A site executed again makes a new object: what names kept from its
        earlier runs becomes the site's "older" origin, distinct from the new one."""
        self.age_sites(env, {id(node) for node in _own_nodes(s)})

    def age_sites(self, env, sites):
        for site in sites:
            for name in self.holders.get(site, ()):
                info = env.get(name)
                if info is not None:
                    self.set(env, name, info.mapped(lambda o, site=site: _older(o, site)))

    def sites(self, stmts):
        """Ids of every node in ``stmts`` (the allocation sites they may run)."""
        key = id(stmts)
        cached = self.site_cache.get(key)
        if cached is None or cached[0] is not stmts:
            ids = {id(n) for st in stmts for n in gast.walk(st)}
            cached = self.site_cache[key] = (stmts, ids)
        return cached[1]

    def loop(self, s, env):
        self.loop_depth += 1
        head = dict(env)
        iterated = f"\0iterable{id(s)}"  # a for loop's iterable, evaluated once
        if isinstance(s, gast.For):
            it = s.iter
            ranged = isinstance(it, gast.Call) and self.resolve(it.func) is range
            self.set(head, iterated, _Info() if ranged else self.info(it, env))
        zipped = self.zipped_targets(s) if isinstance(s, gast.For) else None
        for k, (_, part) in enumerate(zipped or ()):  # each list zip visits, evaluated once
            self.set(head, f"{iterated}:{k}", self.info(part, env))
        body_sites = self.sites(s.body)
        numbered = self.numbered_targets(s) if isinstance(s, gast.For) else None
        if isinstance(s, gast.For) and not ranged:  # (decided once, where the loop starts)
            self.iterating[iterated] = (s, self.iterated_names(s),
                                        numbered is not None or
                                        self.visits_items(s.iter, head))
        for _ in range(50):  # origins are finite; this reaches a fixpoint in a few rounds
            inner = dict(head)
            if isinstance(s, gast.For):
                source = inner[iterated]
                # the rows of an array are views of it; a list's items (a dict's keys)
                # are what it holds, never the list itself
                item = _Info(source.holds, source.holds) if self.surely_container(source) \
                    else _Info(source.everything(), source.holds)
                counter = self.enumerate_counter(s)
                for name in bound_names(s.target):
                    self.set(inner, name, _Info() if name == counter or
                             name in (numbered or ()) else item)
                for k, (target, _) in enumerate(zipped or ()):
                    # zip(Ws, grads, cache): 'c' is an item of cache alone
                    part = inner[f"{iterated}:{k}"]
                    part_item = _Info(part.holds, part.holds) if self.surely_container(part) \
                        else _Info(part.everything(), part.holds)
                    for name in bound_names(target):
                        if name != counter and name not in (numbered or ()):
                            self.set(inner, name, part_item)
            breaks, continues = [], []
            self.loop_exits.append((breaks, continues))
            try:
                after = self.block(s.body, inner)
            finally:
                self.loop_exits.pop()
            for env_at in continues:
                after = _joined(after, env_at)
            # at the head, the body's latest objects are those of the last iteration:
            # what the head held from before is older
            older = dict(head)
            self.age_sites(older, body_sites)
            if after is None:  # every iteration leaves the loop
                new_head = older
            else:
                new_head = _join(older, self.relabelled(after, head, body_sites))
            if new_head == head:
                break
            head = new_head
        self.loop_depth -= 1
        self.iterating.pop(iterated, None)
        parts = [iterated] + [f"{iterated}:{k}" for k in range(len(zipped or ()))]
        for key in parts:
            head.pop(key, None)
        out = self.block(s.orelse, dict(head))  # the else runs when no break left the loop
        for env_at in breaks:
            for key in parts:
                env_at.pop(key, None)
            out = _joined(out, env_at)
        return out

    def zipped_targets(self, loop):
        """``[(target, list), ...]`` of a loop over ``zip(a, b, ...)`` (or
        ``enumerate(zip(...))``) unpacked into as many targets, each target bound
        to the items of its own list only; None for any other loop."""
        target, iterable = loop.target, loop.iter
        if isinstance(iterable, gast.Call) and self.resolve(iterable.func) is enumerate \
                and len(iterable.args) == 1 and not iterable.keywords and \
                isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == 2:
            target, iterable = target.elts[1], iterable.args[0]
        if not (isinstance(iterable, gast.Call) and self.resolve(iterable.func) is zip and
                not iterable.keywords and isinstance(target, (gast.Tuple, gast.List)) and
                len(target.elts) == len(iterable.args) and
                not any(isinstance(a, gast.Starred) for a in iterable.args) and
                not any(isinstance(t, gast.Starred) for t in target.elts)):
            return None
        return list(zip(target.elts, iterable.args))

    def bind(self, target, value_node, value, env, s):
        if isinstance(target, gast.Name):
            self.set(env, target.id, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value_node, (gast.Tuple, gast.List)) and \
                    len(value_node.elts) == len(target.elts) and \
                    not any(isinstance(e, gast.Starred) for e in target.elts + value_node.elts):
                parts = [self.info(e, env) for e in value_node.elts]
                for t, e, p in zip(target.elts, value_node.elts, parts):
                    self.bind(t, e, p, env, s)
                return
            if value.items is not None and not value.keyed and \
                    len(value.items) == len(target.elts) and \
                    not any(isinstance(e, gast.Starred) for e in target.elts):
                for t, (_, part) in zip(target.elts, value.items):  # a, b = pair(x)
                    self.bind(t, None, part, env, s)
                return
            element = _Info(value.everything(), value.holds)
            for t in target.elts:
                self.bind(t, None, element, env, s)
        elif isinstance(target, gast.Starred):
            self.bind(target.value, None, _Info(value.everything(), value.holds), env, s)
        elif isinstance(target, (gast.Subscript, gast.Attribute)):
            base = _base_name(target)
            if base is None:
                return
            nested = isinstance(target.value, (gast.Subscript, gast.Attribute))
            written = env.get(base, self.free_info(base))
            # d['a'][0] = v writes into what d['a'] may be (all of d when not known);
            # CELL.h = v rebinds an attribute of a user's object made outside the
            # code, which the lowering follows (lower/outside_objects.py)
            if not self.outside_attribute(target):
                self.check_write(base, self.info(target.value, env).everything() if nested
                                 else written.is_, env, s, target)
            if isinstance(target, gast.Subscript) and (
                    not nested and self.array_store(target.slice, env) or
                    self.into_numbers(target)):
                return  # ey[0, :] = v, U[1][k] = v copy v's values into the array's memory
            key = static_key(target.slice) if isinstance(target, gast.Subscript) and \
                not nested else None
            self.set(env, base, written.with_item(key, value))

    def number_attributes(self, name):
        """The attributes of ``name`` (an object made here, of one class) that
        surely hold numbers (object_facts.number_attributes)."""
        classes = self.objects.get(name, ())
        if len(classes) != 1 or name == self.me:
            return frozenset()
        return number_attributes(next(iter(classes)), self.fnode, name)

    def outside_attribute(self, target):
        """``CELL.h`` (or ``CELL.act.h``) where ``CELL`` is a module-level object of a
        user's class: storing into it rebinds the attribute, it writes no array."""
        if not isinstance(target, gast.Attribute) or _base_name(target) in self.locals:
            return False
        owner = resolve_dotted(target.value, self.parsed.resolve, self.locals)
        return owner is not None and user_object(owner) and \
            plain_attribute_store(type(owner), target.attr)

    def into_numbers(self, target):
        """Whether the subscript ``target`` (``U[k]``, ``U[1][k]``) is into a name
        surely bound to an array of numbers: a store copies the value's numbers,
        and holds no reference to it (a list would)."""
        root = target
        while isinstance(root, gast.Subscript):
            root = root.value
        return isinstance(root, gast.Name) and (
            self.surely_array(root) is not None and self.numbers(root.id, set()) or
            self.float_arithmetic(root.id, set()) or self.made_like_numbers(root.id) or
            self.numeric_array(root.id, set()))

    def made_like_numbers(self, name):
        """Whether every binding of ``name`` is a new array shaped like an array of
        numbers (``un = np.empty_like(u)`` of ``u = u0 * 1.0``; a ``*_like`` row,
        ``ndim="like"``, with no dtype or a numeric one): its elements are numbers
        too, so ``un[:] = u`` copies ``u``'s numbers."""
        values = self.bindings.get(name, [None])
        return bool(values) and all(self._like_numbers(v) for v in values)

    def _like_numbers(self, node):
        if isinstance(node, gast.AugAssign):
            return True  # x op= v keeps what x is (checked at x's other bindings)
        if not (isinstance(node, gast.Call) and node.args and
                isinstance(node.args[0], gast.Name)):
            return False
        fn = self.resolve(node.func)
        row = registry.facts(fn) if fn is not None else None
        if row is None or row.ndim != "like" or not returns_new(fn) or len(node.args) > 1:
            return False  # (a second positional argument may be a dtype)
        dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
        if dtype is not None and (self.array_facts is None or
                                  not self.array_facts.numeric_dtype(dtype)):
            return False
        like = node.args[0].id
        return self.float_arithmetic(like, set()) or \
            self.surely_array(node.args[0]) is not None and self.numbers(like, set()) or \
            self.numeric_array(like, set())

    def numeric_array(self, name, seen):
        """Whether ``name`` surely holds a NumPy array of numbers, from a parameter the
        call gives one (``number_arguments.ARRAY``): that parameter (what the call
        gives it, and each later binding such an array too), or a local every
        binding of which is such a name, its ``.copy()`` (or a subscript's of it,
        ``u0[1:].copy()``; ``np.copy``, or
        ``np.array`` of it alone), a ``*_like`` array of it with no dtype, or an
        in-place update (``u = u0.copy(); u_new = np.empty_like(u)``, then ``u,
        u_new = u_new, u``).  Its elements are numbers: a store into it copies."""
        if not self.array_parameters or self.array_facts is None or \
                name in self.comprehended or name not in self.locals or \
                name in self.rebound_inside:
            return False  # (array_facts: only the fence of the function compiled)
        if name in seen:
            return True  # by induction over the run, as numbers()
        seen.add(name)
        values = self.bindings.get(name, [None])
        if name in self.array_parameters:
            values = values[1:]  # (the first: what the call gives)
        elif not values:
            return False
        found = all(self._numeric_array_value(v, seen) for v in values)
        seen.discard(name)
        return found

    def _numeric_array_value(self, node, seen):
        if isinstance(node, gast.AugAssign):
            return True  # x op= v keeps what the array x is (its dtype too)
        if isinstance(node, gast.Name):
            return self.numeric_array(node.id, seen)
        if not isinstance(node, gast.Call) or node.keywords or len(node.args) > 1:
            return False
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "copy" and not node.args:
            root = func.value  # u0.copy(), u0[1:].copy(): a new array of its numbers
            while isinstance(root, gast.Subscript):
                root = root.value
            return isinstance(root, gast.Name) and self.numeric_array(root.id, seen)
        if len(node.args) != 1 or not isinstance(node.args[0], gast.Name):
            return False
        fn = self.resolve(func)
        row = registry.facts(fn) if fn is not None else None
        if not (fn is np.copy or fn is np.array or
                row is not None and row.ndim == "like" and returns_new(fn)):
            return False
        return self.numeric_array(node.args[0].id, seen)

    def float_arithmetic(self, name, seen):
        """Whether every binding of ``name`` is arithmetic with a float or complex
        constant (``U = X * 1.0``), or an in-place update of it: a number (which
        takes no subscript store) or an array of numbers -- never a list or tuple
        (``[a] * 1.0`` raises), whatever ``X`` is."""
        if name in seen:
            return True
        seen.add(name)
        values = self.bindings.get(name, [None])
        return bool(values) and all(self._float_arithmetic_value(v, seen) for v in values)

    def _float_arithmetic_value(self, node, seen):
        if isinstance(node, gast.AugAssign):
            return True  # x op= v keeps what x is (checked at x's other bindings)
        if isinstance(node, gast.Name):  # x = x_new of x_new = x * g: what x_new is
            return node.id in self.locals and self.float_arithmetic(node.id, seen)
        if isinstance(node, gast.UnaryOp):
            return self._float_arithmetic_value(node.operand, seen)
        if not isinstance(node, gast.BinOp) or isinstance(node.op, gast.MatMult):
            return False
        return any(isinstance(o, gast.Constant) and type(o.value) in (float, complex) or
                   isinstance(o, gast.Name) and o.id in self.locals and
                   self.float_arithmetic(o.id, seen) for o in (node.left, node.right))

    def aug_assign(self, s, env):
        target = s.target
        if isinstance(target, gast.Name):
            current = env.get(target.id, self.free_info(target.id))
            self.check_write(target.id, current.is_, env, s, target)
            # in place for arrays and lists, a new object for numbers and tuples: a
            # new object shares with nothing, so calling it the object it replaces
            # over-states sharing only (and keeps grid, scratch = scratch, grid exact
            # after scratch += v); only +, |, ^ may add references (list +=, dict or
            # set |=, set ^=); an array's elements become r[k] + v[k]: new numbers, or
            # in an array of objects, objects that may hold what v's items hold
            added, repeats = frozenset(), frozenset()
            if isinstance(s.op, (gast.Add, gast.BitOr, gast.BitXor)):
                value = self.info(s.value, env)
                added = value.holds if self.surely_array(target) else value.everything()
                if self.float_arithmetic(target.id, set()):
                    # y = x * 1.0: a number or an array of numbers, whose elements
                    # become numbers (never a list that would hold v's objects)
                    added = frozenset()
                repeats = value.repeated()
            self.set(env, target.id, current.with_held(added, repeats))
            return
        if self.outside_attribute(target):
            return  # CELL.t += 1: the lowering rebinds a number, refuses an array
        base = _base_name(target)
        if base is not None:
            current = env.get(base, self.free_info(base))
            # x[i] += v adds in place into x's memory, or into the element x[i] holds
            # (d['a'] += v: into d and what d['a'] may be, not d['b'])
            direct = isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
            item = current.item(static_key(target.slice)) if direct else None
            if direct and (isinstance(target.slice, gast.Slice) or
                           self.array_store(target.slice, env) or
                           self.float_arithmetic(base, set())):
                # u[1:-1] += v, ey[1:, :] -= v: into u's own memory (a list's slice
                # is a new list: the items it holds are not added into)
                written = current.is_
            elif item is not None:
                written = current.is_ | item.everything()
            else:
                written = current.everything()
            self.check_write(base, written, env, s, target)
            if direct:
                self.updated_places |= current.is_
                if self.surely_container(current):
                    self.check_repeated_item(base, current, item, env, s, target)
                elif self.checking:
                    self.guards.note_item_update(self, current, env, s)

    def check_calls(self, s, env):
        """In-place methods, writing functions and ``out=`` anywhere in ``s``."""
        for node in _own_nodes(s):
            if not isinstance(node, gast.Call):
                continue
            self.helper_effects(node, env)  # store(lst, a): lst may hold a now
            # a helper's writes into its arguments: written back, or never read again
            # through that name (then no other live name may share the memory)
            for parameter, name in list(self.marks.written_arguments.get(node, {}).items()) + \
                    list(self.marks.unobserved_arguments.get(node, {}).items()):
                info = env.get(name, self.free_info(name))
                self.check_write(name, info.is_, env, s, node)
                if self.updates_places(node, parameter):  # fill(lst, x) does lst[0] += x
                    self.updated_places |= info.is_
                    if self.surely_container(info):
                        self.check_repeated_item(name, info, None, env, s, node)
                    elif self.checking:
                        self.guards.note_item_update(self, info, env, s)
            for k in node.keywords:
                if k.arg == "out" and not (isinstance(k.value, gast.Call) and
                                           returns_new(self.resolve(k.value.func))):
                    # (out=np.zeros_like(a): into a new array no name holds)
                    for name in read_names(k.value):  # out=y: into y's memory, as y[...] = v
                        info = env.get(name, self.free_info(name))
                        self.check_write(name, info.is_, env, s, node)
            func = node.func
            self.object_arguments(node, env, s)  # train(net, lr): net.W -= ... in train
            methods = method_of(self.objects[func.value.id], func.attr) if isinstance(
                func, gast.Attribute) and isinstance(func.value, gast.Name) and \
                func.value.id in self.objects else None
            if methods is not None:  # kf.update(z): KalmanFilter.update, not dict.update
                self.receivers[node] = True  # (lower/callables.py reads it)
                numbers = self.number_attributes(func.value.id)  # self.t += 1 rebinds t
                if any(writes_self_in_place(method_of([c], func.attr)[0], numbers=numbers,
                                            cls=c)
                       for c in self.objects[func.value.id]):  # self.P += Q
                    receiver = self.info(func.value, env)
                    self.check_write(func.value.id, receiver.everything(), env, s, node)
            elif isinstance(func, gast.Attribute) and func.attr in WRITING_METHODS and \
                    self.resolve(func) is None:
                base = _base_name(func.value)
                if base is not None:
                    # a list's, dict's or array's method changes the object it is
                    # called on (the list an append grows, the array a fill writes),
                    # never the objects it holds: S.append(x) leaves S's rows and x
                    # alone.  A user's object may write anything it holds.
                    receiver = self.info(func.value, env)
                    current = env.get(base, self.free_info(base))
                    written = receiver.is_ if self.surely_builtin(receiver) else \
                        current.everything()
                    self.check_write(base, written, env, s, node)
                    # S.append(h): S holds h now, and its items by key are not known
                    args = list(node.args) + [k.value for k in node.keywords]
                    added = self._union(args, env)
                    repeats = frozenset()
                    if func.attr not in ("append", "insert"):
                        for arg in args:  # lst.extend(other): other's items, twice maybe
                            repeats |= self.info(arg, env).repeated()
                    grown = self.appended(func, node, current, added)
                    self.set(env, base, grown if grown is not None else
                             current.with_held(added.everything(), repeats))
            elif (_is_in(self.resolve(func), WRITING_FUNCTIONS) or
                  unbuffered_write(self.resolve(func))) and node.args:
                base = _base_name(node.args[0])
                if base is not None:  # np.copyto(y, v): into y's memory, as y[...] = v
                    info = env.get(base, self.free_info(base))
                    self.check_write(base, info.is_, env, s, node)

    def appended(self, func, call, current, added):
        """After ``xs.append(v)`` of a list display made here whose items are
        known by position (``xs = []``, what comprehension_loops writes for
        ``ac, bc = map(np.array, (a, b))`` and static_loops unrolls): the same
        items and ``v`` at the next place, so that ``ac, bc = xs`` binds each name
        to its own item.  None where that is not known: another method, another
        name (or container) that may hold the list too, whose items would not be
        seen to grow.  ``added``: what the appended value may be or hold."""
        if func.attr != "append" or len(call.args) != 1 or call.keywords or \
                not isinstance(func.value, gast.Name) or current.items is None or \
                current.keyed or len(current.is_) != 1:
            return None
        (origin,) = current.is_
        if origin[0] != "site" or origin[1] not in self.list_sites or \
                origin[1] in self.blurred or \
                self.holders.get(origin, set()) - {func.value.id} or \
                self.holders.get(site_node(origin[1]), set()) - {func.value.id}:
            return None
        items = current.items + ((len(current.items), added),)
        return _Info(current.is_, current.holds | added.everything(), items, False,
                     repeated_items(i for _, i in items))

    def object_arguments(self, node, env, s):
        """``train(net, lr)``, ``Base.__init__(self)``: a function of the user's
        handed an object made here (``net = Net(W)``) may write in place into the
        arrays the object holds (``net.W -= ...``), which other names may share
        (``Net(W)`` keeps ``W``): a write into the object, as for its methods."""
        fn = self.resolve(node.func)
        if not user_function(fn) or not self.objects:
            return
        handed = handed_parameters(fn, node)
        checked = set()
        for param, arg in handed:
            if not (isinstance(arg, gast.Name) and arg.id in self.objects):
                continue
            checked.add(param)  # the parameters whose objects were checked here
            self.receivers[node] = frozenset(checked)  # (lower/callables.py reads it)
            numbers = self.number_attributes(arg.id)
            if any(writes_self_in_place(fn, numbers=numbers, cls=c, me=param)
                   for c in self.objects[arg.id]):
                self.check_write(arg.id, self.info(arg, env).everything(), env, s, node)

    def check_write(self, name, written, env, s, node):
        if not written or not self.checking:
            return
        for origin in sorted(o for o in written if o[0] in ("global", "global*")):
            if _holds_no_array(self.parsed.resolve(origin[1])):
                continue  # a layer holding the module's tanh: no write can change it
            if self.fnode is not self.parsed.node and \
                    origin[1] in local_names(self.parsed.node):
                # a def of the function's own writing a variable of the function
                raise self.parsed.error(
                    UnsupportedSyntaxError,
                    f"a write into '{name}', which may be the variable '{origin[1]}' of the "
                    f"function that defines {self.fnode.name}(), from inside "
                    f"{self.fnode.name}() where it is called as a value or inside an "
                    f"expression (a comprehension, a if c else b)", node,
                    construct=f"write into the enclosing function's '{origin[1]}'",
                    hint=f"call {self.fnode.name}() as a statement of its own (r = "
                         f"{self.fnode.name}(...)), where its body is written into the "
                         f"function, or have it return the new array")
            default = self.default_of(origin[1])
            if default is not None:  # def acc(x, buf=np.zeros(3)): buf += x
                helper, param = default
                kind = type(self.parsed.resolve(origin[1])).__name__.replace("ndarray", "array")
                written = f"'{name}', which may change " if name != origin[1] else ""
                raise self.parsed.error(
                    UnsupportedSyntaxError,
                    f"a write into {written}the default of {helper}()'s parameter "
                    f"'{param}': one {kind}, made when the def ran and shared by every "
                    f"call, which outlives this call", node,
                    construct=f"write into the default of '{param}'",
                    hint=f"give {helper}() its own {kind} at each call ({param}=...), or copy "
                         f"it in {helper}() before writing ({param} = {param}.copy())")
            if name != origin[1] and isinstance(self.parsed.resolve(origin[1]), type):
                # b.mem += x, b.mem read from the class until b stores its own
                message = f"a write into '{name}' may change an array the class " \
                    f"{origin[1]} holds (the two may share memory), which outlives this call"
            elif name != origin[1]:
                message = f"a write into '{name}' may change the module-level object " \
                    f"'{origin[1]}' (the two may share memory), which outlives this call"
            elif isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):
                # Cell.calls += 1: a class's (or module object's) attribute rebound
                message = f"a write into the attribute '{name}.{node.attr}' of the " \
                    f"module-level object '{name}', which outlives this call"
            elif isinstance(self.parsed.resolve(name), np.ndarray):
                message = f"a write into the module-level array '{name}', which outlives " \
                    "this call"
            else:
                message = f"a write into an array the module-level object '{name}' holds, " \
                    "which outlives this call"
            raise self.parsed.error(
                UnsupportedSyntaxError, message,
                node, construct=f"write into the global '{origin[1]}'",
                hint=self.global_hint(name, origin[1], node))
        candidates = set()
        for origin in written:
            candidates |= self.holders.get(origin, set())
        for other in sorted(candidates - {name}):
            if other in self.iterating:
                # for v in reversed(y), y[1:], Y.T, Z (= Y[1:]): the rows of a view read
                # as the loop goes; a write into Y itself in `for r in Y` is followed
                # (the lowering reads Y's current rows)
                loop, read_by_name, visits_items = self.iterating[other]
                info = env.get(other)
                # (a list's or tuple's items are its objects, written by their own names)
                if name not in read_by_name and info is not None and not visits_items \
                        and written & info.everything():
                    place = ast.unparse(gast.gast_to_ast(loop.iter))
                    self.refuse_item_update(name, loop, node)
                    raise self.parsed.error(
                        UnsupportedSyntaxError,
                        f"a write into '{name}' inside the loop over {place} (line "
                        f"{loop.lineno}) may change the rows it has still to visit: Python "
                        "reads each row from that memory when the loop reaches it",
                        node, construct=f"write into the rows of {place} while looping",
                        hint="to visit the rows as they were before the loop, loop over "
                             "a copy of the array (np.copy(...)); to see the writes, loop "
                             "over the indices (for k in range(len(...))) and read each "
                             "row when it is needed")
                continue
            if other not in self.always_live and id(s) not in self.live_after(other) and \
                    not (other in self.live_parameters and name not in self.live_parameters):
                continue
            if getattr(self.followed, "same_group", None) and \
                    self.followed.same_group(name, other):
                continue  # the view lowering keeps the two consistent
            info = env.get(other)
            if info is None:
                continue
            if written & info.everything():
                for loop, _, _ in self.iterating.values():
                    if self.visited_list(loop) == other:
                        self.refuse_item_update(name, loop, node)
                raise self.parsed.error(
                    UnsupportedSyntaxError,
                    f"a write into '{name}' may also change '{other}': the two names may "
                    f"share memory (one may be a view or an alias of the other: a slice, "
                    f".T, reshape, an item of a list or tuple, or a plain b = a), and "
                    f"'{other}' is read afterwards" +
                    (f" (a parameter: the caller reads its array after the call)"
                     if other in self.live_parameters else ""),
                    node, construct=f"write through an alias of '{other}'",
                    hint=self.alias_hint(name, other, node))
        self.guards.note(self, written, env, s, node, name)

    def numbered_targets(self, loop):
        """``for i, j, r in self.samples`` in a method fenced for an object its
        class makes in the code, ``samples`` an attribute it holds only as a list
        of tuples with numbers at some places (object_facts.numbered_items): the
        loop visits the list's items (a write into an array changes none of its
        places), and the names it binds at those places (``i``, ``j``) hold no
        memory.  Those names (a frozenset, maybe empty), or None for another loop."""
        facts = self.receiver[2] if self.receiver is not None and \
            len(self.receiver) > 2 else {}
        it, target = loop.iter, loop.target
        if not (isinstance(it, gast.Attribute) and isinstance(it.value, gast.Name) and
                it.value.id == self.me and it.attr in facts and
                plain_instance_attribute(self.receiver[0], it.attr)):
            return None
        if not isinstance(target, (gast.Tuple, gast.List)) or \
                any(isinstance(e, gast.Starred) for e in target.elts):
            return frozenset()
        return frozenset(e.id for k, e in enumerate(target.elts)
                         if k in facts[it.attr] and isinstance(e, gast.Name))

    def enumerate_counter(self, loop):
        """The name ``for i, x in enumerate(...)`` binds to the count (a new int,
        sharing no memory: once it stood for the items, and a write into ``x`` was
        refused as one that "may also change 'i'"), or None."""
        target, iterable = loop.target, loop.iter
        if not (isinstance(iterable, gast.Call) and self.resolve(iterable.func) is enumerate
                and isinstance(target, (gast.Tuple, gast.List)) and len(target.elts) == 2
                and isinstance(target.elts[0], gast.Name)):
            return None
        name = target.elts[0].id
        return None if name in bound_names(target.elts[1]) else name

    def iterated_names(self, loop):
        """The names whose current array a loop reads its rows from as it goes
        (``Y`` in ``for r in Y``, ``enumerate(Y)``, ``zip(Y, M)``; ``y`` in
        ``reversed(y)`` or ``y[1:]`` where the body never rebinds it:
        ``desugar/live_rows.py``), as the lowering does."""
        iterable = loop.iter
        parts = [iterable]
        if isinstance(iterable, gast.Call) and self.resolve(iterable.func) in (
                zip, enumerate, reversed):
            parts = iterable.args
        found = set()
        for part in parts:
            if isinstance(part, gast.Name) and not plainly_rebinds(loop.body, part.id):
                found.add(part.id)
            elif live_root(part, loop.body) is not None:
                found.add(live_root(part, loop.body))
        return found

    def visited_list(self, loop):
        """The name a loop visits the items of (``ws`` in ``for w in ws``, ``for k, w
        in enumerate(ws)``), or None."""
        iterable = loop.iter
        if isinstance(iterable, gast.Call) and self.resolve(iterable.func) is enumerate \
                and len(iterable.args) == 1 and not iterable.keywords:
            iterable = iterable.args[0]
        return iterable.id if isinstance(iterable, gast.Name) else None

    def refuse_item_update(self, name, loop, node):
        """``for w in ws: w -= lr * g`` (``node``: the target ``w``): an in-place
        update of the item the loop visits, which may be a row of an array or an
        array a list or tuple holds (the caller's, for a parameter); the loop's
        items are followed as values of their own, so the update would not reach
        ``ws``.  Refused, naming the index form that updates the items exactly;
        nothing for another write."""
        place = self.visited_list(loop)
        item = loop.target
        if isinstance(item, gast.Tuple) and self.enumerate_counter(loop) is not None:
            item = item.elts[1]
        if place is None or not isinstance(node, gast.Name) or \
                not (isinstance(item, gast.Name) and item.id == name):
            return
        raise self.parsed.error(
            UnsupportedSyntaxError,
            f"an in-place update of '{name}', the item the loop over '{place}' (line "
            f"{loop.lineno}) visits: it changes the object '{place}' holds (an array a "
            f"list or tuple holds, the caller's for a parameter, or a row of an array), "
            f"and the compiler follows the items a loop visits as values of their own, "
            f"not as places of '{place}'",
            node, construct=f"in-place update of the items of {place} while looping",
            hint=f"to change the items in place, as Python does, update them by index: "
                 f"for k in range(len({place})): {place}[k] -= ... (or *=, +=); to leave "
                 f"'{place}' unchanged, rebind the item instead ({name} = {name} - ...) or "
                 f"build new ones ([{name} - ... for {name} in {place}])")

    def visits_items(self, iterable, env):
        """Does a loop over ``iterable`` visit the objects a list, tuple or dict
        holds (directly, or through zip, enumerate, reversed), rather than the rows
        of an array's memory?"""
        if isinstance(iterable, gast.Call) and self.resolve(iterable.func) in (
                zip, enumerate, reversed) and iterable.args:
            return all(self.visits_items(a, env) for a in iterable.args)
        return self.surely_container(self.info(iterable, env))

    def updates_places(self, call, parameter):
        """Whether the helper ``call`` calls may update a place of what it is given
        for ``parameter`` in place (``lst[0] += x``), as its body shows; a helper
        the fence cannot read may."""
        fn = self.resolve(call.func)
        summary = helper_summary(fn, type(self), self.analysing) if fn is not None else None
        return summary is None or parameter in summary.updated_places

    def check_repeated_item(self, name, current, item, env, s, target):
        """``lst[k] += v`` adds into the object at ``lst[k]`` in place (an array), so
        every place of ``lst`` holding the same object changes too, which the
        lowering, reading each place as a value of its own, would miss: refused
        where another place may hold it (``[a] * 3``, ``[a, a]``, ``a`` appended
        twice) and ``name`` is read afterwards.  ``item``: what the place written
        may be, None when not known (``lst[i]``; ``target`` a call of a helper
        that writes into the list it is given)."""
        objects = item.is_ if item is not None else current.holds
        # ("param*", x): what a parameter may hold, were it a list; what is at two
        # places is one of the objects themselves (x, a site), never only that
        shared = {o for o in objects & current.repeated() if not o[0].endswith("*")}
        if not shared or (name not in self.always_live and
                          id(s) not in self.live_after(name)):
            return
        place = ast.unparse(gast.gast_to_ast(target))  # the user's words, for the message
        what = f"an in-place update of '{place}'"
        if isinstance(target, gast.Call):  # a helper's write into its list parameter
            what = f"'{place}', which writes into the places of '{name}',"
            place = f"{name}[k]"
        raise self.parsed.error(
            UnsupportedSyntaxError,
            f"{what} may also change another item of '{name}': "
            f"'{name}' may hold the same array at two places ([a] * k, [a, a], "
            f"{{'p': a, 'q': a}}, one array appended twice), and '{name}' is read "
            f"afterwards",
            target, construct=f"in-place update of a repeated item of '{name}'",
            hint=(f"if each place should be its own array, make them so "
                  f"([np.zeros(n) for _ in range(k)], or a.copy() at each place); "
                  f"to update one place only, rebind it ({place} = {place} + v)"))

    def default_of(self, name):
        """(helper, parameter) where ``name`` is the name desugar gave a helper's
        default of constants (``inline_functions.py``), else None."""
        denoted = self.parsed.inlined_names.get(name, (None, None))[0]
        return denoted.default_of if isinstance(denoted, DenotedObject) else None

    def global_hint(self, name, other, node=None):
        """What to do about a write into ``name`` that may change the global
        ``other``: a local copy of an array; for an object of a user's class, a new
        array bound to its attribute (which the gradient follows as a variable); for
        an attribute of a class or module object rebound (a counter), a local."""
        if isinstance(node, gast.Attribute) and name == other and \
                not user_object(self.parsed.resolve(other)):
            return ("keep the value in a local variable (or in an attribute of an object "
                    "the function makes) and return it if the caller needs it")
        if isinstance(self.parsed.resolve(other), type) and name != other:
            return (f"compute the new array and assign it ({name} = {name} + ...), or "
                    f"give the object an array of its own in __init__ (self.x = "
                    f"np.zeros(...))")
        if user_object(self.parsed.resolve(other)):
            return (f"'{other}' is an object: compute the new array and assign it to "
                    f"the attribute ({other}.x = ..., or self.x = ... in its method) "
                    f"instead of writing into the array it holds, or make the object inside "
                    f"the function")
        return (f"if nothing reads '{other}' after the write, copy it into a local array "
                f"first ({name} = np.array({other})): the same numbers then, and followed")

    def alias_hint(self, name, other, node):
        """What to do about a write into ``name`` that may change ``other``: for an
        array, a copy where it is bound; for an object of a user's class (whose
        method writes into what it holds, or written through its attribute:
        ``self.n += 1``, ``self.acc[0] = v``), copies of the arrays it is made from."""
        through_attribute = isinstance(node, gast.Attribute) or \
            isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute)
        if name in self.objects or (name == self.me and self.me is not None) or \
                through_attribute:
            classes = self.objects.get(name, ())
            made = f"{next(iter(classes)).__name__}(...)" if len(classes) == 1 else \
                "Class(...)"
            return (f"'{name}' is an object that may hold '{other}' (or an array sharing "
                    f"its memory), e.g. given to {made}: if the write should not change "
                    f"'{other}', give the object a copy of it ({other}.copy()) where it is "
                    f"made; if it should, read the new values through the object's "
                    f"attribute instead of '{other}'")
        return (f"if the two never share memory, make '{name}' a new array where it is "
                f"bound (.copy(), np.array(...)): the same numbers then; if they do, a copy "
                f"would drop the write into '{other}': write into '{other}' itself")

    def live_after(self, name):
        if name not in self.liveness:
            self.liveness[name] = NameLiveness(self.fnode, name, self.names_read).after
        return self.liveness[name]

    def names_read(self, node):
        cached = self.read_cache.get(id(node))
        if cached is None or cached[0] is not node:
            cached = (node, read_names(node))
            self.read_cache[id(node)] = cached
        return cached[1]

_OWN_NODES = {}


def _own_nodes(s):
    """The nodes of statement ``s`` itself, not of the statements it contains."""
    cached = _OWN_NODES.get(id(s))
    if cached is not None and cached[0] is s:
        return cached[1]
    nodes = _collect_own_nodes(s)
    _OWN_NODES[id(s)] = (s, nodes)
    return nodes


def _collect_own_nodes(s):
    if isinstance(s, (gast.If, gast.While)):
        return list(gast.walk(s.test))
    if isinstance(s, gast.For):
        return list(gast.walk(s.iter))
    if isinstance(s, gast.With):
        return [n for item in s.items for n in gast.walk(item.context_expr)]
    if isinstance(s, (gast.FunctionDef, gast.ClassDef, gast.Try)):
        return []
    return list(gast.walk(s))


def _joined(a, b):
    """``_join`` where either side may be None (no path reaches it)."""
    if a is None or b is None:
        return b if a is None else a
    return _join(a, b)


def _holds_no_array(value):
    """A function of the user's with no defaults, closure or attributes, or NumPy
    itself (``self.act = np.tanh``: its functions and constants): no NumPy write
    can change it or anything it holds."""
    if value is np:
        return True
    return isinstance(value, types.FunctionType) and not value.__defaults__ and \
        not value.__kwdefaults__ and not value.__closure__ and not vars(value)


def check_writes(parsed, fnode=None, followed=(), receiver=None, callables_new=False,
                 helper=False, numbers=None):
    """Refuse every write in ``fnode`` (default: the parsed function) that may change
    another live name through shared memory (``followed``: what views.py follows;
    ``receiver``: for a method called on an object its class makes in the code,
    (class, the attributes it holds only as arrays or numbers), object_facts.py);
    returns the calls on objects whose methods it checked and its FenceFindings
    (compiler/fence/fence_guards.py).  ``callables_new``: a call of one of
    ``fnode``'s parameters returns new objects (the findings' ``assumed_new``
    names those called, for the lowering to check at each call).  ``helper``:
    ``fnode`` is inlined into a caller that reads its arguments after the call, so
    its parameters are live to its end (a write through ``row = x[k]`` that
    views.py cannot follow changes the caller's array).  ``numbers``: {parameter:
    ``number_arguments.NUMBER`` or ``SEQUENCE``}, what the call gives ``fnode``'s
    parameters where it gives numbers (number_arguments.py)."""
    fnode = fnode if fnode is not None else parsed.node
    fences = [AliasFence(parsed, child, followed,
                         receiver=receiver if child is fnode else None,
                         callables_new=callables_new and child is fnode,
                         parameters_live=helper and child is fnode,
                         numbers=numbers if child is fnode else None)
              for child in gast.walk(fnode)
              if isinstance(child, gast.FunctionDef)]  # fnode's own first
    receivers = NodeFacts()
    try:
        for fence in fences:
            receivers.update(fence.run())
    finally:
        _OWN_NODES.clear()
    findings = fences[0].guards.findings(fences[1:])
    return receivers, findings._replace(assumed_new=frozenset(fences[0].called))


def returns_new_objects(parsed, fdef):
    """Whether every return of the function ``fdef`` (in ``parsed``'s tree) is a new
    object holding nothing of its parameters, of the names it closes over or of
    the module's (``return np.linalg.solve(J, f)``): a caller may write into what
    it returns while reading anything else."""
    if any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(fdef)):
        return False
    fence = AliasFence(parsed, fdef, (), checking=False)
    try:
        fence.run()
    except TangentCkptError:
        return False
    finally:
        _OWN_NODES.clear()
    return all(o[0] == "site" for o in fence.returned.everything())
