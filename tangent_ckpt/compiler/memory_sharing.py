"""Which calls share memory with their arguments, and which write into them.

The tables the aliasing fence (``aliasing.py``, ``alias_values.py``), the view
lowering and the in-place analyses read, derived from the rows of the rule
registry (``adjoints/numpy_rules.py``: ``view=``, ``new_unless=``, ``writes=``,
``advanced_index=`` of ``defadjoint``, ``defconstant``, ``defprimitive`` and
``defmethod``), keyed by function object.  What a row does not say is never taken to be new:
:func:`returns_new` is False for a function without a row (a NumPy function
too), and the fence treats its result as a possible view.  Only Python's own
containers' methods (``dict.get``, ``list.append``) are listed here: they are
not primitives of the registry.
"""

import inspect

import gast
import numpy as np

from tangent_ckpt.adjoints import registry


def returns_new(fn):
    """True when a call of ``fn`` always returns a new object that shares no
    memory with its arguments (its row says ``view=False``; a ``new_unless=``
    row only where the call leaves that parameter at its default:
    :func:`new_by_default`).  False for a function without a row,
    but for a ufunc."""
    facts = registry.facts(fn)
    if facts is None:   # a ufunc allocates its result (the lowering refuses out=)
        return isinstance(fn, np.ufunc)
    return facts.view is False


_UNKNOWN = object()


def new_by_default(fn, npositional, keywords):
    """True when ``fn``'s row has a ``new_unless=`` and this call leaves that
    parameter at its default, so the result is new (``np.array(x)``, not
    ``np.array(x, copy=False)``; ``np.diff(a)``, not ``np.diff(a, 0)``;
    ``np.ndarray(shape)``, not ``np.ndarray(shape, buffer=b)``).  ``npositional``:
    the number of positional arguments, None when not known (``*args``);
    ``keywords``: {name: the constant passed, or :data:`UNKNOWN_VALUE`}."""
    facts = registry.facts(fn)
    if facts is None or facts.new_unless is None or npositional is None:
        return False
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    flag = params.get(facts.new_unless)
    if flag is None:
        return False
    if flag.kind in (flag.POSITIONAL_ONLY, flag.POSITIONAL_OR_KEYWORD) and \
            npositional > list(params).index(facts.new_unless):
        return False   # passed by position: whatever it is, it may not copy
    if facts.new_unless not in keywords:
        return True
    value = keywords[facts.new_unless]
    return value is not _UNKNOWN and type(value) is type(flag.default) and \
        value == flag.default


UNKNOWN_VALUE = _UNKNOWN


def call_new_by_default(fn, call):
    """:func:`new_by_default` for a call written in the user's code (a gast ``Call``)."""
    starred = any(isinstance(a, gast.Starred) for a in call.args) or \
        any(k.arg is None for k in call.keywords)
    return new_by_default(fn, None if starred else len(call.args), {
        k.arg: k.value.value if isinstance(k.value, gast.Constant) else _UNKNOWN
        for k in call.keywords if k.arg is not None})


def _functions(keep):
    return [f.fn for f in registry.all_facts() if keep(f)]


def _methods(keep):
    return {name for name, f in registry.all_method_facts().items() if keep(f)}


# functions whose result may share memory with an argument (views, or the argument
# itself), as their rows say; a function without a row may too (returns_new)
VIEW_FUNCTIONS = _functions(lambda f: f.view not in (False, None))
# functions whose result is new while one parameter is left at its default
# (np.array(x), not np.array(x, copy=False)): new_by_default says whether a call does
COPY_FLAG_FUNCTIONS = _functions(lambda f: f.new_unless is not None)
# functions that write into their first argument
WRITING_FUNCTIONS = _functions(lambda f: f.writes is not None)


def unbuffered_write(fn):
    """Whether ``fn`` is a ufunc's ``at`` (``np.add.at``: a new bound method at
    every lookup, so no table can hold it), which writes into its first argument."""
    return getattr(fn, "__name__", None) == "at" and \
        isinstance(getattr(fn, "__self__", None), np.ufunc)


def unbuffered_target(call, stmt):
    """The name an unbuffered write ``call`` (``np.add.at(a, i, v)``) writes
    into when it is the statement ``stmt`` itself and its array is a name or a
    subscript of one (``a``, ``a[:, 0]``: the lowering makes it a subscript
    write), else None."""
    target = call.args[0] if call.args else None
    if isinstance(target, gast.Subscript):
        target = target.value
    alone = isinstance(stmt, gast.Expr) and stmt.value is call
    return target.id if alone and isinstance(target, gast.Name) else None


# NumPy functions whose result, used as an index, is a mask or index arrays (advanced
# indexing: the subscript makes a copy), as their rows say (advanced_index=); np.where
# only with one argument
INDEX_FUNCTIONS = _functions(lambda f: f.advanced_index)
# builtins whose result is a new object holding no references to the arguments
FRESH_BUILTINS = {f.fn for f in registry.all_facts()
                  if f.view is False and getattr(f.fn, "__module__", None) == "builtins"}

# methods of Python's dicts and lists that hand out their elements, or write into them
_CONTAINER_VIEW_METHODS = {"get", "values", "items", "keys", "setdefault", "pop"}
_CONTAINER_WRITING_METHODS = {"append", "extend", "insert", "remove", "clear", "reverse",
                              "update", "popitem", "__isub__", "__imul__", "__itruediv__",
                              "add", "discard"}

# array methods whose result may share memory with the array (or dict/list methods
# that hand out its elements); FRESH_METHODS return new objects; any other method
# may return the array, its arguments or what they hold
VIEW_METHODS = _methods(lambda f: f.view not in (False, None) and f.writes is None) | \
    _CONTAINER_VIEW_METHODS
FRESH_METHODS = _methods(lambda f: f.view is False and f.writes is None)
# array methods that write into the array (the lowering refuses them: lower/calls.py)
ARRAY_WRITING_METHODS = _methods(lambda f: f.writes is not None)
# methods that write into the object they are called on
WRITING_METHODS = ARRAY_WRITING_METHODS | _CONTAINER_WRITING_METHODS
