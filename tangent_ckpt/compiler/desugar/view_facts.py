"""What the view lowering (``views.py``) needs to know about one function's names,
read from its syntax tree before lowering:

- :func:`view_link`: whether an expression is a view (or the same object) of a
  local name, and of which kind: ``V[1:3]`` (basic indexing), ``A.T``,
  ``A.reshape(2, 3)``, ``np.asarray(a)`` or a plain ``b = a``;
- :class:`ArrayFacts`: which names surely hold NumPy arrays, of which number of
  dimensions and whether C-contiguous, so that a view needs no run-time test
  (``row = S[1]`` is a view when ``S`` has two dimensions, a copy when one).
  What a NumPy call makes is read from its row in the rule registry (``ndim=``:
  ``np.zeros((n, m))`` is 2-d, ``np.arange(n)`` 1-d, ``np.copy(S)`` as ``S``).

Facts are a greatest fixpoint over every binding of each name: a name is an
array when every value it is ever bound to is one, assuming the same of the
names those values read (true by induction over the run).
"""

from dataclasses import dataclass
from typing import Optional

import builtins
import types

import gast
import numpy as np

from tangent_ckpt.adjoints import registry

_TOP = "unconstrained"  # a name none of whose bindings has been seen yet


@dataclass(frozen=True)
class Array:
    """A NumPy array: ``ndim`` when known, C-contiguous when ``contiguous``;
    where ``ndim`` is not known, ``least`` dimensions at least (``x + g`` of a 2-d
    ``x`` and a parameter ``g``: 2 or more, never a NumPy scalar)."""
    ndim: Optional[int] = None
    contiguous: bool = False
    least: int = 0

    def lowest(self):
        """The fewest dimensions the array may have."""
        return self.ndim if self.ndim is not None else self.least


@dataclass(frozen=True)
class ItemOf:
    """The binding of a loop variable to an item of the list ``name`` holds
    (``for w in ws``, ``enumerate(ws)``, ``zip(ws, gs)``), where ``ws`` is a
    list the function makes and holds under one name (``held_lists.py``): an
    array when every value that may become one of its items is one."""
    name: str


@dataclass
class Link:
    """``name = <value>`` makes ``name`` a view (or the same object) of ``parent``."""
    name: str
    parent: str
    kind: str  # "index", "T", "reshape", "alias", "asarray"
    value: gast.expr  # the user's expression; evaluated again to re-derive the view
    stmt: gast.stmt
    index: gast.expr = None  # "index": the subscript
    integers: int = 0  # "index": how many integer positions (the rest are slices, ...)
    basic_slices: bool = False  # "index": some position is a slice, ``...`` or None


def _dotted(node):
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, gast.Name):
        return None
    return [node.id] + parts[::-1]


def resolve_dotted(node, resolve, local):
    """The object a dotted name outside the function denotes (``np.linalg.norm``),
    or None (a local, or an attribute that is not there)."""
    path = _dotted(node)
    if not path or path[0] in local:
        return None
    obj = resolve(path[0])
    for part in path[1:]:
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - any failure means "not known"
            return None
    return obj


def read_names_denote(fnode, resolve, wanted):
    """Does a name ``fnode`` reads (a local too: a quick over-approximation) denote
    one of ``wanted``, or a module of the package ``wanted`` names (``tc`` for
    ``tc.checkpoint``), or does it read an attribute spelled as one of them?  One walk, each distinct name resolved once: passes that
    rewrite calls of a few functions skip a function that cannot reach them."""
    packages = {getattr(w, "__module__", None) or "" for w in wanted}
    packages = {p.split(".")[0] for p in packages if p}
    spelled = {getattr(w, "__name__", None) for w in wanted}
    names = set()
    for n in gast.walk(fnode):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            names.add(n.id)
        elif isinstance(n, gast.Attribute) and n.attr in spelled:
            return True  # mylib.checkpoint: a module's re-export, an object's attribute
    for name in names:
        obj = resolve(name)
        if any(obj is w for w in wanted):
            return True
        if isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] in packages:
            return True
    return False


def numpy_function(node, resolve, local):
    """The NumPy function a call's ``func`` denotes (``np.zeros``), or None."""
    obj = resolve_dotted(node, resolve, local)
    module = str(getattr(obj, "__module__", "") or "")
    return obj if module.split(".")[0] == "numpy" or isinstance(obj, np.ufunc) else None


def _index_parts(index):
    return list(index.elts) if isinstance(index, gast.Tuple) else [index]


def _integer(node):
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int


def _slice_bound(node):
    """A slice bound whose value the view lowering can evaluate again: an integer
    or a name (its stability is checked by the caller), ``-1``, ``n - 1``."""
    if node is None or _integer(node) or isinstance(node, gast.Name):
        return True
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)):
        return _slice_bound(node.left) and _slice_bound(node.right)
    return False


def basic_index(index, integer_names=()):
    """(integers, has a slice/``...``/None) when ``index`` is basic indexing
    written with constants and names, else None.  ``integer_names``: names
    surely bound to integers (``range`` loop counters)."""
    integers, other = 0, False
    for part in _index_parts(index):
        if _integer(part) or (isinstance(part, gast.Name) and part.id in integer_names):
            integers += 1
        elif isinstance(part, gast.Slice):
            if not all(_slice_bound(b) for b in (part.lower, part.upper, part.step)):
                return None
            other = True
        elif isinstance(part, gast.Constant) and (part.value is Ellipsis or part.value is None):
            other = True
        else:
            return None
    return integers, other


def view_link(name, value, stmt, resolve, local, integer_names=()):
    """The :class:`Link` when ``value`` is a view (or the same object) of a local
    name, else None."""
    if isinstance(value, gast.Name) and value.id in local:
        return Link(name, value.id, "alias", value, stmt)
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
            value.value.id in local:
        basic = basic_index(value.slice, integer_names)
        if basic is None:
            return None
        return Link(name, value.value.id, "index", value, stmt, index=value.slice,
                    integers=basic[0], basic_slices=basic[1])
    if isinstance(value, gast.Attribute) and value.attr == "T" and \
            isinstance(value.value, gast.Name) and value.value.id in local:
        return Link(name, value.value.id, "T", value, stmt)
    if not isinstance(value, gast.Call) or value.keywords:
        return None
    func, args = value.func, value.args
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) and \
            func.value.id in local:
        parent = func.value.id
        if func.attr == "transpose" and not args:
            return Link(name, parent, "T", value, stmt)
        if func.attr in ("reshape", "ravel"):
            return Link(name, parent, "reshape", value, stmt)
        return None
    fn = numpy_function(func, resolve, local)
    if fn is None or not args or not isinstance(args[0], gast.Name) or \
            args[0].id not in local:
        return None
    parent = args[0].id
    if fn is np.transpose and len(args) == 1:
        return Link(name, parent, "T", value, stmt)
    if fn in (np.reshape, np.ravel):
        return Link(name, parent, "reshape", value, stmt)
    if fn is np.asarray and len(args) == 1:
        return Link(name, parent, "asarray", value, stmt)
    return None


class ArrayFacts:
    """Which locals surely hold arrays (:class:`Array`), from every binding."""

    def __init__(self, bindings, resolve, local, assumed=(), items=None):
        """``bindings``: name -> list of value nodes (None: a value not known; an
        ``AugAssign`` statement: ``x += v``, in place when ``x`` is an array; an
        :class:`ItemOf`: an item of a list); ``assumed``: names taken to be arrays
        whatever they are bound to (the view lowering checks each at run time,
        ``array_roots.py``), or {name: the fewest dimensions it is taken to
        have}; ``items``: list name -> the values that may become its items
        (``held_lists.held_lists``)."""
        self.resolve, self.local = resolve, local
        self.least = dict(assumed) if isinstance(assumed, dict) else dict.fromkeys(assumed, 0)
        self.assumed = frozenset(self.least)
        self.items = items or {}
        self.facts = {name: _TOP for name in bindings}
        for _ in range(20):  # each round can only lose facts; a few rounds suffice
            changed = False
            for name, values in bindings.items():
                if name in self.assumed:
                    self.facts[name] = Array(least=self.least[name])
                    continue
                fact = _TOP
                for value in values:
                    fact = _meet(fact, self.of(value) if value is not None else None)
                if fact != self.facts[name]:
                    self.facts[name], changed = fact, True
            if not changed:
                break

    def array(self, name):
        fact = self.facts.get(name)
        return fact if isinstance(fact, Array) else None

    def of(self, node):
        """The fact of an expression: an :class:`Array`, ``_TOP`` or None."""
        if isinstance(node, ItemOf):
            values = self.items.get(node.name)
            if values is None:
                return None
            fact = _TOP  # (no item ever: the loop runs no step)
            for value in values:
                fact = _meet(fact, self.of(value) if value is not None else None)
            return fact
        if isinstance(node, gast.Name):
            return self.facts.get(node.id) if node.id in self.local else None
        if isinstance(node, gast.AugAssign):  # a binding: x += v
            target = self.of(node.target)
            if isinstance(target, Array) and not isinstance(node.op, gast.MatMult):
                return target  # in place: the same array (NumPy before 1.25 has no @=)
            node = gast.BinOp(left=node.target, op=node.op, right=node.value)
        if isinstance(node, (gast.BinOp, gast.UnaryOp)):
            operands = [node.left, node.right] if isinstance(node, gast.BinOp) else [node.operand]
            fact = _elementwise([self.of(o) for o in operands], operands)
            if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult) and \
                    isinstance(fact, Array) and fact.ndim is None:
                # a @ v contracts an axis: one dimension fewer than a's at least
                fact = Array(None, least=max(fact.least - 1, 0))
            return fact
        if isinstance(node, gast.Subscript):
            base = self.of(node.value)
            basic = basic_index(node.slice)
            if not isinstance(base, Array) or basic is None:
                return base if base is _TOP else None
            if base.ndim is None:
                return Array() if basic[1] else None
            nones = sum(1 for p in _index_parts(node.slice)
                        if isinstance(p, gast.Constant) and p.value is None)
            ndim = base.ndim - basic[0] + nones
            return Array(ndim) if basic[1] or ndim > 0 else None
        if isinstance(node, gast.Attribute) and node.attr == "T":
            base = self.of(node.value)
            return Array(base.ndim, least=base.least) if isinstance(base, Array) else base
        if isinstance(node, gast.Call):
            return self.call(node)
        return None

    def call(self, node):
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "copy" and not node.args and \
                not node.keywords:
            base = self.of(func.value)
            return Array(base.ndim, True, base.least) if isinstance(base, Array) else base
        if isinstance(func, gast.Attribute) and _returns_its_array(func.attr):
            base = self.of(func.value)
            if isinstance(base, Array):  # a.reshape(2, 3), a.T.ravel(): a view (or copy)
                return _reshaped(node) if func.attr == "reshape" else Array()
        fn = numpy_function(func, self.resolve, self.local)
        if fn is None:
            return None
        ordered = any(k.arg == "order" for k in node.keywords)
        name = getattr(fn, "__name__", "")
        ndim = _result_ndim(fn)   # from the function's row in the rule registry
        if ndim == "shape" and node.args:
            shape = node.args[0]
            if isinstance(shape, (gast.Tuple, gast.List)):
                return Array(len(shape.elts), not ordered)
            if _integer(shape) or self.surely_integer(shape):
                return Array(1, not ordered)
            return Array(None, not ordered)
        if fn is np.array and node.args and isinstance(node.args[0], (gast.List, gast.Tuple)) \
                and not any(k.arg in ("ndmin", "like") for k in node.keywords):
            made = self.display(node)   # np.array([theta, 0.0]): a new 1-d array
            if made is not None:
                return Array(made, made == 1 or not ordered)
        if isinstance(ndim, int):   # a new 1-d array is contiguous in either order
            return Array(ndim, ndim == 1 or not ordered)
        if ndim == "like" and node.args:
            base = self.of(node.args[0])
            if any(k.arg in ("shape", "ndmin") for k in node.keywords):
                return Array()   # np.zeros_like(a, shape=(3, 3)), np.array(a, ndmin=2)
            if isinstance(base, Array):
                return Array(base.ndim, least=base.least)
            return base if base is _TOP else Array()
        if isinstance(fn, np.ufunc) and name and not node.keywords:
            return _elementwise([self.of(a) for a in node.args], node.args)
        return None


    def surely_integer(self, node):
        """Whether ``node`` is an integer whatever the names it reads hold:
        Python's ``len(...)``, ``a.shape[0]`` of an array ``a``, and ``+``, ``-``,
        ``*``, ``//`` of those and integers (``np.zeros(len(u) + 2)`` is 1-d)."""
        if _integer(node):
            return True
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
                node.func.id == "len" and len(node.args) == 1 and not node.keywords:
            return node.func.id not in self.local and self.resolve("len") is builtins.len
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute) and \
                node.value.attr == "shape" and _integer(node.slice):
            return isinstance(self.of(node.value.value), Array)
        if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub,
                                                                 gast.Mult, gast.FloorDiv)):
            return self.surely_integer(node.left) and self.surely_integer(node.right)
        return False

    def display(self, node):
        """The ``ndim`` of ``np.array([a, b, ...])`` (a list or tuple display of
        numbers or arrays), or None.  NumPy (since 1.24, and always with a numeric
        ``dtype``) refuses a display whose items differ in shape, so an item that
        is a number makes every item a number (``np.array([theta, 0.0])`` is 1-d
        or raises), and items that are arrays of one known ``ndim`` make one more.
        With ``dtype=object`` the items are kept as they are: not known."""
        dtype = node.args[1] if len(node.args) > 1 else next(
            (k.value for k in node.keywords if k.arg == "dtype"), None)
        if dtype is None and not _RAGGED_DISPLAYS_RAISE or \
                dtype is not None and not self.numeric_dtype(dtype):
            return None
        items = node.args[0].elts
        if not items or any(isinstance(e, gast.Starred) for e in items):
            return None
        if any(number_constant(e) for e in items):
            return 1
        facts = [self.of(e) for e in items]
        ndims = {f.ndim if isinstance(f, Array) else None for f in facts}
        if len(ndims) == 1 and None not in ndims:
            return ndims.pop() + 1
        return None

    def numeric_dtype(self, node):
        """Whether ``node`` surely names a numeric dtype (``float``, ``np.float64``,
        ``'f8'``): never ``object``."""
        value = node.value if isinstance(node, gast.Constant) and \
            isinstance(node.value, str) else resolve_dotted(node, self.resolve, self.local)
        if value is None:
            return False
        try:
            return np.dtype(value).kind in "biufc"
        except Exception:  # noqa: BLE001 - anything np.dtype refuses: not known
            return False


# NumPy 1.24 turned a display of items of different shapes into an error (before, a
# warning and an array of objects holding the items)
_RAGGED_DISPLAYS_RAISE = np.lib.NumpyVersion(np.__version__) >= "1.24.0"


def number_constant(node):
    """A number written as a constant (``0.0``, ``-1``, ``True``)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and \
        isinstance(node.value, (bool, int, float, complex))


def _result_ndim(fn):
    """The ``ndim=`` of ``fn``'s row (an int, ``"shape"`` or ``"like"``), or None
    (no row, or a row that does not say: the result is not known to be an array)."""
    facts = registry.facts(fn)
    return None if facts is None else facts.ndim


def _returns_its_array(method):
    """An array method whose row says its result shares the array's memory (a view,
    as ``reshape``, ``ravel``, ``transpose``, ``squeeze``): on an array, an array."""
    facts = registry.method_facts(method)
    return facts is not None and facts.view not in (False, None)


def _reshaped(node):
    """``a.reshape(2, 3)`` / ``a.reshape((2, 3))``: C-contiguous (a view of a
    contiguous array, else a copy), of as many dimensions as the shape has."""
    ordered = any(k.arg == "order" for k in node.keywords)
    shape = node.args[0] if len(node.args) == 1 else None
    if isinstance(shape, (gast.Tuple, gast.List)):
        return Array(len(shape.elts), not ordered)
    if node.args and all(_integer(a) for a in node.args):
        return Array(len(node.args), not ordered)
    return Array(None, not ordered)


def _elementwise(facts, operands):
    """An elementwise result is an array when one operand is an array of at
    least one dimension (a 0-d array with a number makes a NumPy scalar), of at
    least as many dimensions as each array operand."""
    if any(f is _TOP for f in facts):
        return _TOP
    arrays = [f for f in facts if isinstance(f, Array)]
    least = max((a.lowest() for a in arrays), default=0)
    if not least:
        return None
    numbers = all(isinstance(f, Array) or (isinstance(o, gast.Constant) and
                                           isinstance(o.value, (int, float)))
                  for f, o in zip(facts, operands))
    known = all(a.ndim is not None for a in arrays)
    if numbers and known:
        return Array(max(a.ndim for a in arrays))
    return Array(None, least=least)


def _meet(a, b):
    if a is _TOP:
        return b
    if b is _TOP:
        return a
    if a is None or b is None:
        return None
    if a.ndim == b.ndim:
        return Array(a.ndim, a.contiguous and b.contiguous, min(a.least, b.least))
    return Array(None, a.contiguous and b.contiguous, min(a.lowest(), b.lowest()))
