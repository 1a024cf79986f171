"""What an expression may be, for the aliasing fence (``aliasing.py``): the
memory *origins* a value may be (``is``) and those it may hold references to
(``holds``, for containers).  An origin is an allocation site (versioned in
loops), a parameter or a global.  Calls are judged from the tables of
``memory_sharing.py``, derived from the rows of the rule registry: a function
returns a new array where its row says ``view=False``; a view function and a
function without a row (NumPy's too) may return their arguments; the user's
functions return what their bodies return (``alias_helpers.py``)."""

import builtins
import inspect
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry
from tangent_ckpt.compiler.desugar.liveness import read_names
from tangent_ckpt.compiler.memory_sharing import (
    FRESH_METHODS, INDEX_FUNCTIONS, VIEW_FUNCTIONS, VIEW_METHODS, call_new_by_default,
    returns_new,
)
from tangent_ckpt.compiler.fence.object_facts import plain_instance_attribute, surely_numeric
from tangent_ckpt.compiler.frontend.static_keys import static_key
from tangent_ckpt.compiler.desugar.view_facts import (Array, ItemOf, basic_index, number_constant,
                                                     resolve_dotted)
from tangent_ckpt.runtime.random_state import DRAW_METHODS

_NOTHING = frozenset()
# the operators that build a container from containers: list/tuple concatenation and
# repetition, dict union, set operations
_CONTAINER_OPERATORS = (gast.Add, gast.Mult, gast.BitOr, gast.BitAnd, gast.BitXor, gast.Sub)


class _Info:
    """What a value may be (``is``) and what it may hold references to (``holds``);
    for a list, tuple or dict made in the function with constant keys, what each
    item may be (``items``, ``((key, _Info), ...)``, or None when not known;
    ``keyed``: a dict's, whose keys are not positions); ``repeats``: the held
    origins that may be the same object at two of its places (``[a] * 3``,
    ``[a, a]``, ``a`` appended twice), None when not known (then every held
    origin may be)."""

    __slots__ = ("is_", "holds", "items", "keyed", "repeats")

    def __init__(self, is_=_NOTHING, holds=_NOTHING, items=None, keyed=False, repeats=None):
        self.is_ = frozenset(is_)
        self.holds = frozenset(holds)
        self.items = items
        self.keyed = keyed
        self.repeats = None if repeats is None else frozenset(repeats) & self.holds

    def everything(self):
        return self.is_ | self.holds

    def repeated(self):
        """The held origins that may be one object at two places of this container."""
        return self.holds if self.repeats is None else self.repeats

    def join(self, other):
        items = None
        if self.items is not None and other.items is not None and \
                self.keyed == other.keyed and \
                [k for k, _ in self.items] == [k for k, _ in other.items]:
            items = tuple((k, a.join(b)) for (k, a), (_, b) in zip(self.items, other.items))
        return _Info(self.is_ | other.is_, self.holds | other.holds, items, self.keyed,
                     self.repeated() | other.repeated())

    def item(self, key):
        """What the item at constant ``key`` may be, or None when not known (a
        negative index counts from the end of a list or tuple)."""
        if self.items is None or key is None:
            return None
        if not self.keyed and isinstance(key, int) and key < 0:
            key += len(self.items)
        for k, info in self.items:
            if k == key and type(k) is type(key):
                return info
        return None

    def with_item(self, key, value):
        """After ``x[key] = value``: the item replaced (or a key added to a dict)."""
        if self.items is None or key is None:
            # the new item may be an object held at another place already
            return _Info(self.is_, self.holds | value.everything(),
                         repeats=self.repeated() | (value.everything() & self.holds))
        items = list(self.items)
        found = self.item(key)
        if found is None and not self.keyed:
            items = None  # an index out of range: it raises
        elif found is None:
            items.append((key, value))
        else:
            items = [(k, value if i is found else i) for k, i in items]
        if items is None:
            return _Info(self.is_, self.holds | value.everything())
        return _Info(self.is_, self.holds | value.everything(), tuple(items), self.keyed,
                     repeated_items(i for _, i in items))

    def with_held(self, added, repeats=_NOTHING):
        """After a store of objects ``added`` at new places (``x.append(a)``, ``x +=
        [a]``): one already held, or ``repeats``, may now be at two places."""
        return _Info(self.is_, self.holds | added,
                     repeats=self.repeated() | (added & self.holds) | repeats)

    def mapped(self, fn):
        """The same, each origin ``o`` replaced by ``fn(o)``."""
        return _Info({fn(o) for o in self.is_}, {fn(o) for o in self.holds},
                     None if self.items is None else
                     tuple((k, i.mapped(fn)) for k, i in self.items), self.keyed,
                     None if self.repeats is None else {fn(o) for o in self.repeats})

    def __eq__(self, other):
        return self.is_ == other.is_ and self.holds == other.holds and \
            self.items == other.items and self.keyed == other.keyed and \
            self.repeated() == other.repeated()

    def __hash__(self):  # pragma: no cover - not used as a key
        return hash((self.is_, self.holds))


def repeated_items(items):
    """The origins that may be one object at two of ``items``' places (each an
    :class:`_Info`)."""
    seen, repeats = set(), set()
    for info in items:
        repeats |= info.everything() & seen
        seen |= info.everything()
    return repeats


def _base_name(target):
    """The name a subscript/attribute target writes into (``a`` in ``a[0].x[1]``)."""
    while isinstance(target, (gast.Subscript, gast.Attribute)):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None


class Origins:
    """The origins of expressions in one function (mixed into the fence, which
    sets ``parsed``, ``locals``, ``local_functions`` (name -> a function defined
    once in it; ``returned_info`` reads what a call of one returns) and
    ``followed``: the views the view lowering follows, new arrays here; and the
    site sets filled here: ``builtin_sites`` (a list, tuple, dict, set or NumPy
    array, never an object of a user's class), ``container_sites`` (a list,
    tuple, dict or set), ``index_sites`` (a mask or index array),
    ``list_sites`` (a list display or comprehension), less the ``blurred``
    ones, whose kind the fence forgot)."""

    _unpacked = None  # unpacked_names(), found once per function
    # ("param", x) of the parameters given lists or tuples of numbers that the
    # function only reads (number_arguments.py): containers, never arrays
    number_sequences = frozenset()

    def _made_at(self, info, sites):
        """True when every object ``info`` may be was made at one of ``sites``."""
        return bool(info.is_) and all(o[0] == "site" and o[1] in sites and
                                      o[1] not in self.blurred for o in info.is_)

    def _listed(self, info, sites):
        """``_made_at``, or a parameter given a list or tuple of numbers."""
        return bool(info.is_) and all(
            o in self.number_sequences or
            o[0] == "site" and o[1] in sites and o[1] not in self.blurred for o in info.is_)

    def surely_container(self, info):
        """True when every object ``info`` may be is a list, tuple, dict or set made
        in the function (a display or a comprehension): never an array, so an item
        read from it is one of the objects it holds, not a view of it."""
        return self._listed(info, self.container_sites)

    def surely_builtin(self, info):
        """True when every object ``info`` may be was made at a site of
        ``builtin_sites``: its methods are those of lists, dicts and arrays."""
        return self._listed(info, self.builtin_sites)

    def free_info(self, name):
        if name in self.locals or _holds_no_memory(self.parsed.resolve(name)):
            return _Info()  # (float, np.float32: a dtype given to a call)
        return _Info({("global", name)}, {("global*", name)})

    def resolve(self, func):
        """The object a (dotted) name outside the function denotes, or None."""
        obj = resolve_dotted(func, self.parsed.resolve, self.locals)
        return obj if callable(obj) else None

    def info(self, node, env):
        if node is None or isinstance(node, gast.Constant):
            return _Info()
        if id(node) in self.followed:
            return _Info({("site", id(node), 0)})
        if isinstance(node, gast.Name):
            return env.get(node.id, self.free_info(node.id))
        if isinstance(node, gast.BinOp):
            if isinstance(node.op, (gast.BitAnd, gast.BitOr, gast.BitXor)) and \
                    self.index_array(node.left, env) and self.index_array(node.right, env):
                self.index_sites.add(id(node))  # mask & mask: a mask
            return self.concatenation(node, env)
        if isinstance(node, (gast.UnaryOp, gast.Compare)):
            if isinstance(node, gast.Compare) or isinstance(node.op, gast.Not) or \
                    isinstance(node.op, gast.Invert) and self.index_array(node.operand, env):
                self.index_sites.add(id(node))  # a bool or an array of bools
            return _Info({("site", id(node), 0)})  # a new number, bool or array
        if isinstance(node, gast.Attribute) and self.module_constant(node):
            return _Info()  # np.pi, math.e: a number, no memory of the program's
        if isinstance(node, (gast.Subscript, gast.Attribute)):
            base = self.info(node.value, env)
            if isinstance(node, gast.Attribute) and node.attr in ("shape", "ndim", "size",
                                                                   "dtype", "itemsize",
                                                                   "nbytes"):
                return _Info()
            if isinstance(node, gast.Attribute) and self.own_attribute(node):
                return _Info(base.holds, base.holds)  # self.x: what self holds, not self
            if isinstance(node, gast.Subscript) and self.surely_container(base):
                if isinstance(node.slice, gast.Slice):  # a new list of the same items
                    self.builtin_sites.add(id(node))
                    self.container_sites.add(id(node))
                    return _Info({("site", id(node), 0)}, base.holds, repeats=base.repeated())
                item = base.item(static_key(node.slice))
                if item is not None:
                    return item  # d['a'] of {'a': A, 'b': B} is A, never B
                return _Info(base.holds, base.holds)  # an item, never the list itself
            if isinstance(node, gast.Subscript) and self.array_element(node):
                return _Info(base.holds, base.holds)  # a number, never a view of the array
            if isinstance(node, gast.Subscript) and self.advanced_index(node.slice, env):
                self.builtin_sites.add(id(node))  # F[mask, :], x[[0, 2]]: a new array
                return _Info({("site", id(node), 0)})
            return _Info(base.everything(), base.holds)
        if isinstance(node, (gast.Tuple, gast.List, gast.Set, gast.Dict)):
            elements = node.elts if not isinstance(node, gast.Dict) else \
                [k for k in node.keys if k is not None] + node.values
            infos = {id(e): self.info(e, env) for e in elements}  # each read once
            holds = set()
            for e in elements:
                holds |= infos[id(e)].everything()
            self.builtin_sites.add(id(node))
            self.container_sites.add(id(node))
            if isinstance(node, gast.List):
                self.list_sites.add(id(node))
            values = node.values if isinstance(node, gast.Dict) else node.elts
            return _Info({("site", id(node), 0)}, holds, self.display_items(node, infos),
                         keyed=isinstance(node, gast.Dict),
                         repeats=None if any(isinstance(v, gast.Starred) for v in values)
                         else repeated_items(infos[id(v)] for v in values))
        if isinstance(node, (gast.IfExp, gast.BoolOp)):
            parts = [node.body, node.orelse] if isinstance(node, gast.IfExp) else node.values
            out = _Info()
            for p in parts:
                out = out.join(self.info(p, env))
            return out
        if isinstance(node, gast.Call):
            return self.call_info(node, env)
        if isinstance(node, gast.Starred):
            return self.info(node.value, env)
        if isinstance(node, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            return self.comprehension(node, env)
        if isinstance(node, gast.JoinedStr):
            return _Info({("site", id(node), 0)})  # an f-string: a new str, holding nothing
        # lambdas, ...: a new object that may hold anything it reads
        holds = set()
        for name in read_names(node):
            if name not in env and self._builtin(name):
                continue  # range, zip, len: no memory of the program's
            holds |= env.get(name, self.free_info(name)).everything()
        return _Info({("site", id(node), 0)}, holds)

    def comprehension(self, node, env):
        """A list, set or dict comprehension (or a generator) holds what its element
        may be, each target bound to an item of what it iterates (a row, a view, of
        an array).  Where the element is an object its own expression makes
        (``np.zeros(2)``, ``x * k``), each item is a new object: none is held twice;
        else (``[w for _ in range(3)]``) one object may be at every place."""
        inner = dict(env)  # the targets are the comprehension's own names
        for generator in node.generators:
            source = self.info(generator.iter, inner)
            for target in gast.walk(generator.target):
                if isinstance(target, gast.Name):
                    inner[target.id] = _Info(source.everything(), source.holds)
        parts = [node.key, node.value] if isinstance(node, gast.DictComp) else [node.elt]
        holds, repeats = set(), set()
        for part in parts:
            info = self.info(part, inner)
            holds |= info.everything()
            made_here = {id(n) for n in gast.walk(part)}
            if not all(o[0] == "site" and site_node(o[1]) in made_here for o in info.is_):
                repeats |= info.is_
        if not isinstance(node, gast.GeneratorExp):
            self.builtin_sites.add(id(node))
            self.container_sites.add(id(node))
        if isinstance(node, gast.ListComp):
            self.list_sites.add(id(node))
        return _Info({("site", id(node), 0)}, holds, repeats=repeats)

    def module_constant(self, node):
        """``np.pi``, ``math.e``: an attribute of a module (not of a local) that is a
        number or a string."""
        root = node
        while isinstance(root, gast.Attribute):
            root = root.value
        if not isinstance(root, gast.Name) or root.id in self.locals or \
                not isinstance(self.parsed.resolve(root.id), types.ModuleType):
            return False
        return _holds_no_memory(resolve_dotted(node, self.parsed.resolve, self.locals))

    def array_element(self, node):
        """``r[0]``, ``S[i, j]`` (``i`` a ``range`` counter) of a name surely bound to
        an array with as many dimensions as the subscript has integers (no slice,
        ``...`` or None): one element, a new NumPy number (in an array of objects,
        an object the array holds), never a view; ``S[i]`` of a 2-d ``S`` is a row,
        a view (``array_facts``, ``counters``, ``comprehended``: set by the fence)."""
        array = self.surely_array(node.value)
        if array is None or array.ndim is None or not self.numbers(node.value.id, set()):
            return False
        basic = basic_index(node.slice, self.counters)
        return basic is not None and not basic[1] and basic[0] >= array.ndim

    def numbers(self, name, seen):
        """Whether every binding of the array ``name`` makes an array of numbers
        (an element of a structured array is a view of its record, one of an array
        of objects the object it holds): made from a shape (``np.zeros(n)``) or a
        display (``np.array([a, 0.0])``) with no dtype or a numeric one, arithmetic
        on such arrays and numbers, or an in-place update of it."""
        if name in self.numeric:
            return self.numeric[name]
        if name in seen:
            return True  # by induction over the run, as the facts themselves
        seen.add(name)
        values = self.bindings.get(name, [None])
        found = bool(values) and all(self.number_values(v, seen) for v in values)
        if len(seen) == 1:
            self.numeric[name] = found
        seen.discard(name)
        return found

    def number_values(self, node, seen):
        facts = self.array_facts
        if isinstance(node, gast.AugAssign):
            return not isinstance(node.op, gast.MatMult) or self.number_values(
                gast.BinOp(left=node.target, op=node.op, right=node.value), seen)
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (bool, int, float, complex))
        if isinstance(node, gast.Name):
            return node.id not in self.comprehended and facts.array(node.id) is not None and \
                self.numbers(node.id, seen)
        if isinstance(node, gast.BinOp):
            return self.number_values(node.left, seen) and self.number_values(node.right, seen)
        if isinstance(node, gast.UnaryOp):
            return self.number_values(node.operand, seen)
        if not isinstance(node, gast.Call):
            return False
        fn = self.resolve(node.func)
        row = registry.facts(fn) if fn is not None else None
        display = fn is np.array and bool(node.args) and \
            isinstance(node.args[0], (gast.List, gast.Tuple))
        if not isinstance(facts.of(node), Array) or not display and \
                (row is None or not (row.ndim == "shape" or isinstance(row.ndim, int))):
            return False  # a new array from a shape (its row says so) or a display
        dtype = next((k.value for k in node.keywords if k.arg == "dtype"), None)
        position = _dtype_position(fn)
        if position is None and len(node.args) > 1:
            return False  # a positional dtype may be among them
        if dtype is None and position is not None and len(node.args) > position:
            dtype = node.args[position]
        if dtype is not None:
            return facts.numeric_dtype(dtype)
        if fn is np.array:  # np.array([a, 0.0]): items that are numbers, or raises
            return any(number_constant(e) for e in node.args[0].elts)
        return True

    def surely_array(self, node):
        """The :class:`~.view_facts.Array` fact when ``node`` is a name every
        binding of which makes it a NumPy array, else None."""
        if self.array_facts is None or not isinstance(node, gast.Name) or \
                node.id in self.comprehended:
            return None
        return self.array_facts.array(node.id)

    def advanced_index(self, index, env):
        """True when a part of the subscript ``index`` is surely a mask or an index
        array (a comparison, ``~``/``&``/``|``/``^`` of masks, ``not``, a list
        display, NumPy's index makers, a name bound only to one, or only to lists
        made here: ``pinned = [0, 3]``): NumPy's result is then a copy (lists and
        dicts take no such key -- a list is no integer, and unhashable -- and the
        lowering refuses it)."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        return any(self.index_array(p, env) for p in parts)

    def index_array(self, node, env):
        if isinstance(node, gast.List):
            return True
        if isinstance(node, gast.Name) and node.id in self.unpacked_names():
            return False  # i, j = rng.choice(3, 2): items of an index array, ints
        info = self.info(node, env)
        return self._made_at(info, self.index_sites) or self._made_at(info, self.list_sites)

    def unpacked_names(self):
        """Names bound by unpacking a value that is no display (``i, j =
        np.array([0, 2])``), or copied from one (``k = i``): an item of an index
        array is an integer (``x[i, :]`` a view), never taken for an index array."""
        if self._unpacked is None:
            unpacked, copies = set(), []
            for n in gast.walk(self.fnode):
                if isinstance(n, (gast.Assign, gast.For)):
                    targets = n.targets if isinstance(n, gast.Assign) else [n.target]
                    value = n.value if isinstance(n, gast.Assign) else n.iter
                    for t in targets:
                        if isinstance(t, (gast.Tuple, gast.List)) and \
                                not isinstance(value, (gast.Tuple, gast.List)):
                            unpacked |= {e.id for e in gast.walk(t) if isinstance(e, gast.Name)}
                        elif isinstance(t, gast.Name) and isinstance(value, gast.Name):
                            copies.append((t.id, value.id))
                        elif isinstance(n, gast.For) and isinstance(t, gast.Name):
                            unpacked.add(t.id)  # for i in np.array([0, 2]): an int
            grown = True
            while grown:
                grown = False
                for target, source in copies:
                    if source in unpacked and target not in unpacked:
                        unpacked.add(target)
                        grown = True
            self._unpacked = frozenset(unpacked)
        return self._unpacked

    def array_store(self, index, env):
        """True when ``x[index] = v`` copies ``v``'s values into an array (a list or
        dict would hold ``v``): a key of several parts (``ey[0, :]``), a mask or an
        index array, which no list or dict takes where the lowering accepts it."""
        return isinstance(index, gast.Tuple) or self.advanced_index(index, env)

    def _builtin(self, name):
        """Whether the free ``name`` is one of Python's builtins (``range``)."""
        if name in self.locals:
            return False
        obj = self.parsed.resolve(name)
        return obj is not None and getattr(builtins, name, None) is obj

    def display_items(self, node, infos):
        """The items of a list, tuple or dict display by constant key, or None
        (``infos``: each element's, by its id)."""
        if isinstance(node, gast.Dict):
            keys = [static_key(k) if k is not None else None for k in node.keys]
            if any(k is None for k in keys) or len(set(keys)) != len(keys):
                return None
            return tuple((k, infos[id(v)]) for k, v in zip(keys, node.values))
        if isinstance(node, (gast.List, gast.Tuple)) and \
                not any(isinstance(e, gast.Starred) for e in node.elts):
            return tuple((k, infos[id(e)]) for k, e in enumerate(node.elts))
        return None

    def concatenation(self, node, env):
        """``a + b`` or ``a * b``: a new object, which holds the items of ``a`` and
        ``b`` when it is list or tuple concatenation or repetition (``[x] + ys``,
        ``[x] * 3``), or a dict or set operation (``d | e``, ``s - t``).  Any other
        operator (``/``, ``**``, ``@``, ...), or an operand that is surely not a
        container (a float constant, a new NumPy array), makes a new number or
        array holding nothing.  A list or tuple repeated holds each of its items at
        several places; one concatenated, what both hold at once."""
        made = {("site", id(node), 0)}
        if not isinstance(node.op, _CONTAINER_OPERATORS) or \
                any(self.surely_not_a_sequence(o, env) for o in (node.left, node.right)):
            return _Info(made)
        left = self.info(node.left, env)
        if isinstance(node.op, gast.Sub):  # s - t: a set of some of s's items (t * k - u too)
            return _Info(made, left.holds)
        right = self.info(node.right, env)
        if isinstance(node.op, (gast.Add, gast.Mult)) and \
                (self.surely_container(left) or self.surely_container(right)):
            self.builtin_sites.add(id(node))
            self.container_sites.add(id(node))  # a list or tuple: [a] * 3, xs + [a]
        repeats = None  # * k: every item may be at k places
        if isinstance(node.op, gast.Add):
            repeats = left.repeated() | right.repeated() | (left.holds & right.holds)
        return _Info(made, left.holds | right.holds, repeats=repeats)

    def surely_not_a_sequence(self, node, env, seen=None):
        """True when ``node`` is a float or complex constant, a new NumPy array (a
        NumPy function's result that is not a view) or a name that surely holds an
        array (``view_facts.ArrayFacts``), whose ``+``/``*`` with a list is
        NumPy arithmetic or an error, never list concatenation (in a method fenced
        for an object made in the code, also what object_facts.py proves: an
        attribute it holds only as an array or number, a name bound only to one)."""
        if self.receiver_code is not None and \
                surely_numeric(node, self.receiver_code, self.receiver[1], set()):
            return True
        if isinstance(node, gast.Constant):
            return isinstance(node.value, (float, complex))
        if isinstance(node, gast.Name):
            return self.surely_array(node) is not None or \
                node.id not in self.comprehended and self.float_arithmetic(node.id, set()) or \
                self.items_not_sequences(node.id, seen)
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
                not isinstance(node.slice, gast.Slice):  # ws[j] of a list the function holds
            return self.held_items_not_sequences(node.value.id, seen)
        if isinstance(node, gast.UnaryOp):
            return self.surely_not_a_sequence(node.operand, env, seen)
        if isinstance(node, gast.BinOp):
            return not isinstance(node.op, _CONTAINER_OPERATORS) or \
                any(self.surely_not_a_sequence(o, env, seen) for o in (node.left, node.right))
        if isinstance(node, gast.Call):  # a new array, or an array at all (np.array(...))
            fn = self.resolve(node.func)
            row = registry.facts(fn) if fn is not None else None
            return fn is not None and registry.is_numpy_function(fn) and (
                returns_new(fn) or row is not None and row.returns in ("array", "array or scalar"))
        return False

    def items_not_sequences(self, name, seen=None):
        """Whether ``name`` is bound only as the variable of loops over lists the
        function holds (``for w in ws``: ``view_facts.ItemOf``) and every value
        that may be an item of those lists is surely no list or tuple: ``2 * w``
        is then NumPy arithmetic, never a list repeated."""
        values = self.bindings.get(name) if name not in self.comprehended else None
        return bool(values) and all(isinstance(v, ItemOf) for v in values) and \
            all(self.held_items_not_sequences(v.name, seen) for v in values)

    def held_items_not_sequences(self, name, seen=None):
        """Whether every value that may be an item of the list the function holds
        under ``name`` (``held_lists.py``) is surely no list or tuple."""
        if name not in self.held:
            return False
        seen = set() if seen is None else seen
        if name in seen:
            return True  # by induction over the run, as the facts themselves
        seen.add(name)
        return all(item is not None and self.surely_not_a_sequence(item, None, seen)
                   for item in self.held[name])

    def own_attribute(self, node):
        """``self.x`` in a method fenced for an object of a plain class made in the
        code, or ``obj.x`` of such an object bound in the function, ``x`` named by
        no class of it: an item the object holds in its ``__dict__``, never the
        object itself (which is no array)."""
        if not isinstance(node.value, gast.Name):
            return False
        if self.me is not None and node.value.id == self.me:
            return plain_instance_attribute(self.receiver[0], node.attr)
        # obj.x of an object of a plain class made in the function (bound only to
        # Cls(...)): desugar inlines its methods here, as ``obj.x``
        classes = self.objects.get(node.value.id, ())
        return len(classes) == 1 and plain_instance_attribute(next(iter(classes)), node.attr)

    def call_info(self, node, env):
        info = self._call_info(node, env)
        if info.is_ == {("site", id(node), 0)} and self.resolve(node.func) is not None:
            self.builtin_sites.add(id(node))  # a new NumPy array or builtin object
        return info

    def _call_info(self, node, env):
        fn = self.resolve(node.func)
        args = list(node.args) + [k.value for k in node.keywords]
        fresh = _Info({("site", id(node), 0)})
        if fn is not None:
            if fn is np.array and node.args and isinstance(node.args[0], (gast.List, gast.Tuple)):
                self.index_sites.add(id(node))  # np.array([0, 2]): at least 1-d, indexes
            if call_new_by_default(fn, node):
                return fresh   # np.array(x): a copy (not np.array(x, copy=False))
            if random_draw(fn):  # np.random.choice(n, size=k), RS.normal(): a new array
                if self.index_draw(fn, node):
                    self.index_sites.add(id(node))
                if fn.__name__ in ("choice", "permutation"):  # of an array of objects:
                    return _Info(fresh.is_, self._union(args, env).holds)  # the same objects
                return fresh
            if fn is np.einsum and _several_einsum_operands(node):
                return fresh
            if _is_in(fn, VIEW_FUNCTIONS):
                return self._union(args, env)
            if _is_in(fn, INDEX_FUNCTIONS) and (fn is not np.where or len(node.args) == 1):
                self.index_sites.add(id(node))  # np.isnan(x), np.nonzero(m): for indexing
            if returns_new(fn):   # its row says so; a function without a row may be a view
                return fresh
            built = self.built_container(fn, node, env)
            if built is not None:
                return built
            if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
                return self._union(args, env)  # max, min, list, zip, sorted, ...
            if registry.lookup(fn) is not None:
                # a black box with an adjoint rule (tc.register_adjoint), whose body is
                # never read: its result may be an argument's memory, which only the
                # run can tell (fence_guards.py)
                held = self._union(args, env).everything()
                self.guards.opaque[id(node)] = self.guards.opaque.get(id(node), set()) | held
                return fresh
            returned = self.helper_result(fn, node, env)
            if returned is not None:  # what the helper returns, in the caller's origins
                return returned
            made = self.constructed(fn, node, env)
            if made is not None:
                return made
        elif isinstance(node.func, gast.Attribute):
            method = node.func.attr
            methods = self.known_methods(node)
            if methods is not None:  # opt.update(p) on opt = Adam(...): Adam.update's body
                returned = [self.helper_result(m, node, env, node.func.value) for m in methods]
                if all(r is not None for r in returned):
                    out = _Info()
                    for r in returned:
                        out = out.join(r)
                    return out if len(returned) != 1 else returned[0]
            receiver = self.info(node.func.value, env)
            if method == "astype" and any(k.arg == "copy" for k in node.keywords):
                return _Info(receiver.everything(), receiver.holds)
            if method == "copy" and self.surely_container(receiver):
                self.builtin_sites.add(id(node))
                self.container_sites.add(id(node))
                # lst.copy(): the same items
                return _Info(fresh.is_, receiver.holds, repeats=receiver.repeated())
            if method == "copy" and any(o[0] == "site" and o[1] in self.container_sites
                                        for o in receiver.is_):
                return _Info(fresh.is_, receiver.holds)  # maybe a list's copy, maybe not
            drawn = self.generator_method(node.func)
            if drawn is not None:  # rng.choice(n, size=k) of rng = np.random.default_rng(0)
                if self.index_draw(drawn, node):
                    self.index_sites.add(id(node))
                if method in ("choice", "permutation"):
                    return _Info(fresh.is_, self._union(args, env).holds)
                return fresh
            if method in FRESH_METHODS:
                return fresh
            if method == "get" and 1 <= len(node.args) <= 2 and not node.keywords and \
                    methods is None:
                # d.get(key, default): an item of the dict (the one at key where it is
                # known) or the default, never the dict itself
                item = receiver.item(static_key(node.args[0]))
                got = item if item is not None else _Info(receiver.holds, receiver.holds)
                return got.join(self.info(node.args[1], env)) if len(node.args) == 2 \
                    else got
            if method in VIEW_METHODS:
                return _Info(receiver.everything(), receiver.holds)
            return self._union([node.func.value] + args, env)
        # a local function whose returns are new objects (docs/inplace.md): a new object
        fdef = self.local_functions.get(node.func.id) if isinstance(node.func, gast.Name) \
            else None
        if fdef is not None and self.returned_info(fdef, args, env) is not None:
            return fresh
        if self.callables_new and isinstance(node.func, gast.Name) and \
                node.func.id in self.fixed_parameters:
            self.called.add(node.func.id)  # step(x), step given by the caller: checked
            return fresh                   # there to return new objects (aliasing.py)
        # a user function, a local function or anything unknown: it may return its
        # arguments or what they hold
        return self._union(args, env)

    def index_draw(self, fn, node):
        """Whether the draw ``node`` (of ``fn``, :func:`random_draw`) surely makes an
        integer array of at least one dimension, which indexes by copying:
        ``permutation`` always; ``choice``, ``integers``, ``randint`` given a
        ``size`` that is an integer (a constant, a name bound only to integers,
        ``len(...)``) or a tuple display of one or more parts (no size, or a size
        of None, draws one number: ``X[i]`` of a 2-d ``X`` is then a view)."""
        if fn.__name__ == "permutation":
            return True
        if fn.__name__ not in ("choice", "integers", "randint"):
            return False
        size = next((k.value for k in node.keywords if k.arg == "size"), None)
        if size is None:
            try:
                params = [p for p in inspect.signature(fn).parameters if p != "self"]
                position = params.index("size")
            except (TypeError, ValueError):
                return False
            size = node.args[position] if len(node.args) > position else None
        if isinstance(size, gast.Tuple):
            return bool(size.elts) and not any(isinstance(e, gast.Starred) for e in size.elts)
        return size is not None and self.surely_integer(size)

    def generator_method(self, func):
        """The method of NumPy's generator classes ``func`` (``rng.choice``) calls
        when ``rng`` is a new generator (``np.random.default_rng(0)``,
        ``np.random.RandomState(4)``) or a name the function binds only to such, and
        the method draws, else None."""
        receiver = func.value
        if func.attr not in DRAW_METHODS:
            return None
        if isinstance(receiver, gast.Call):
            values = [receiver]  # np.random.RandomState(1).permutation(3)
        elif isinstance(receiver, gast.Name) and receiver.id not in self.comprehended:
            values = self.bindings.get(receiver.id)
        else:
            return None
        if not values:
            return None
        classes = set()
        for value in values:
            made = self.resolve(value.func) if isinstance(value, gast.Call) else None
            if made is np.random.default_rng or made is np.random.Generator:
                classes.add(np.random.Generator)
            elif made is np.random.RandomState:
                classes.add(np.random.RandomState)
            else:
                return None
        methods = {getattr(c, func.attr, None) for c in classes}
        return next(iter(methods)) if len(methods) == 1 and None not in methods else None

    def surely_integer(self, node, seen=frozenset()):
        """``3``, ``len(...)``, ``int(...)``, ``a.shape[0]``, integer arithmetic of
        those, a name the function binds only to integers (``view_shape.integer_names``:
        range counters, ``p = i + int(...)``) or, in its own body, only to such
        expressions (``N = particles.shape[0]``)."""
        if isinstance(node, gast.Constant):
            return type(node.value) is int
        if isinstance(node, gast.Name):
            if node.id in self.counters:
                return True
            if node.id in seen or node.id not in self.locals:
                return False
            values = self.own_bindings().get(node.id)
            return bool(values) and all(v is not None and
                                        self.surely_integer(v, seen | {node.id})
                                        for v in values)
        if isinstance(node, gast.BinOp) and isinstance(
                node.op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)):
            return self.surely_integer(node.left, seen) and self.surely_integer(node.right, seen)
        if isinstance(node, gast.Subscript):  # a.shape[0]: an array's length, never None
            return isinstance(node.value, gast.Attribute) and node.value.attr == "shape" and \
                isinstance(node.slice, gast.Constant) and type(node.slice.value) is int
        return isinstance(node, gast.Call) and self.resolve(node.func) in (len, int) and \
            len(node.args) == 1 and not node.keywords

    def own_bindings(self):
        """name -> the values its plain assignments in this function's own body bind
        it to (None for any other binding: a loop target, a tuple's item, ``+=``, a
        parameter), not counting functions defined inside it."""
        if self.bound_values is None:
            self.bound_values = {}
            args = self.fnode.args
            for a in args.posonlyargs + args.args + args.kwonlyargs + \
                    [x for x in (args.vararg, args.kwarg) if x is not None]:
                self.bound_values.setdefault(a.id, []).append(None)
            todo = list(self.fnode.body)
            while todo:
                n = todo.pop()
                if isinstance(n, (gast.FunctionDef, gast.ClassDef, gast.Lambda)):
                    continue
                if isinstance(n, gast.Assign) and len(n.targets) == 1 and \
                        isinstance(n.targets[0], gast.Name):
                    self.bound_values.setdefault(n.targets[0].id, []).append(n.value)
                    todo.append(n.value)
                    continue
                for child in gast.iter_child_nodes(n):
                    if isinstance(child, gast.Name) and isinstance(child.ctx, (gast.Store,
                                                                               gast.Del)):
                        self.bound_values.setdefault(child.id, []).append(None)
                    else:
                        todo.append(child)
        return self.bound_values

    def built_container(self, fn, node, env):
        """``dict(p=a, q=b)``, ``list(xs)``, ``tuple(xs)`` or ``dict(d)`` of a
        container made here, and ``sorted(xs)`` of anything: a new container, its
        places known as a display's (``dict(p=w, q=w)`` holds one array twice), or
        as the container's it copies; else None."""
        if fn is dict and not node.args and all(k.arg is not None for k in node.keywords):
            infos = [self.info(k.value, env) for k in node.keywords]
            holds = set()
            for info in infos:
                holds |= info.everything()
            made = _Info({("site", id(node), 0)}, holds,
                         tuple((k.arg, i) for k, i in zip(node.keywords, infos)), True,
                         repeated_items(infos))
        elif fn in (list, tuple) and len(node.args) == 1 and not node.keywords and \
                not isinstance(node.args[0], gast.Starred):
            source = self.info(node.args[0], env)
            if not self.surely_container(source):
                return None  # list(X) of an array: its rows, views of X
            made = _Info({("site", id(node), 0)}, source.holds, repeats=source.repeated())
        elif fn is dict and len(node.args) == 1 and \
                not isinstance(node.args[0], gast.Starred) and \
                all(k.arg is not None for k in node.keywords):
            # dict(d), dict(d, k=v): a new dict holding d's items (and the keywords')
            source = self.info(node.args[0], env)
            if self.surely_container(source):
                holds = set(source.holds)
            elif isinstance(resolve_dotted(node.args[0], self.parsed.resolve, self.locals), dict):
                holds = source.everything()  # a module-level dict: whatever it holds
            else:
                return None
            for k in node.keywords:
                holds |= self.info(k.value, env).everything()
            made = _Info({("site", id(node), 0)}, holds, repeats=source.repeated())
        elif fn is sorted and len(node.args) == 1 and \
                not isinstance(node.args[0], gast.Starred):
            # always a new list, of the items (or an array's rows, views of its memory)
            source = self.info(node.args[0], env)
            held = source.holds if self.surely_container(source) else source.everything()
            made = _Info({("site", id(node), 0)}, held, repeats=source.repeated())
        else:
            return None
        self.builtin_sites.add(id(node))
        self.container_sites.add(id(node))
        return made

    def _union(self, nodes, env):
        everything = set()
        holds = set()
        for n in nodes:
            i = self.info(n, env)
            everything |= i.everything()
            holds |= i.holds
        return _Info(everything, holds)



_SCALARS = (bool, int, float, complex, str, bytes)


def _holds_no_memory(value):
    """A number or string, a scalar type (``float``, ``np.float32``) or a dtype: a
    value that is no array and refers to none."""
    return isinstance(value, _SCALARS + (np.dtype,)) or \
        isinstance(value, type) and (issubclass(value, np.generic) or
                                     any(value is t for t in _SCALARS))


def random_draw(fn):
    """Whether ``fn`` is a draw of NumPy's random generators (``np.random.choice``,
    ``RS.normal`` of a ``RandomState`` or ``Generator``): its result is new numbers,
    holding nothing of its arguments."""
    owner = getattr(fn, "__self__", None)
    return isinstance(owner, (np.random.Generator, np.random.RandomState)) and \
        getattr(fn, "__name__", None) in DRAW_METHODS


def _dtype_position(fn):
    """Where ``fn`` takes ``dtype`` among its positional arguments (``np.full(shape,
    fill, dtype)``: 2), from its signature; None when it has none or does not say."""
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    return names.index("dtype") if "dtype" in names else None


def _older(origin, site):
    if origin[0] == "site" and site_node(origin[1]) == site:
        return ("site", origin[1], 1)
    return origin


def _join(a, b):
    out = dict(a)
    for name, info in b.items():
        out[name] = out[name].join(info) if name in out else info
    return out


def site_node(key):
    """The id of the syntax node a site origin's key names (a helper's site,
    ``(call id, helper site, version)``, is named by its call)."""
    return key[0] if isinstance(key, tuple) else key


def _several_einsum_operands(node):
    """``np.einsum('ij,jk->ik', a, b)``: with two operands or more the result is a
    new array; with one (``'ij->ji'``, ``'ii->i'``) it may be a view of it."""
    args = node.args
    return len(args) >= 3 and isinstance(args[0], gast.Constant) and \
        isinstance(args[0].value, str) and not any(isinstance(a, gast.Starred) for a in args)


def _is_in(obj, objects):
    return obj is not None and any(obj is o for o in objects)
