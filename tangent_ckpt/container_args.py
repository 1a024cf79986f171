"""Arguments given as containers: ``wrt`` may name a list, tuple or dict of
arrays and floats (nested to any depth), and the gradient has the same
structure, as in autograd and JAX.

The gradient is compiled for the container's *structure* (kinds, lengths,
keys): each element is a parameter of its own in the generated code
(``params_0_1``), and a call lays the elements out one after the other
(:func:`leaves_of`) and rebuilds the gradients in the container's shape
(:func:`rebuild_from`).  Another structure compiles another gradient.

An *object* (a ``@dataclass`` instance, or any object of a user class with a
``__dict__``) is a container too: its leaves are its float-valued attributes
(float arrays and floats; lists, tuples, dicts and objects among them are
followed), in the order of the dataclass's fields, else of ``vars(obj)``.
Attributes holding ints, bools, strings or ``None`` are constants of the
structure (another value compiles another gradient); anything else is refused.
The gradient is a shallow copy of the object (``copy.copy``, no ``__init__``
or ``__post_init__`` run) whose float attributes are set to their gradients.
"""

import copy
import functools
import dataclasses
import types
from typing import Any, Dict, List, Tuple

import numpy as np

from tangent_ckpt.errors import WrtError
from tangent_ckpt.runtime.backends import is_array, is_foreign_array

_CONSTANT_TYPES = (bool, int, str, type(None))
#: an object's attribute naming a function (``self.act = np.tanh``): a constant
_FUNCTION_TYPES = (np.ufunc, types.FunctionType, types.BuiltinFunctionType)


def is_container(value: Any) -> bool:
    """A list, tuple or dict (what ``wrt`` may name besides arrays and floats)."""
    return isinstance(value, (list, tuple, dict))


def is_user_object(value: Any) -> bool:
    """An object of a user class (not a NumPy or builtin value, a function, a
    class or a module): ``wrt`` takes it as the container of its attributes.
    An array of another library (CuPy, Dask) is an array, not an object."""
    if is_foreign_array(value):
        return False
    if isinstance(value, (np.ndarray, np.generic, list, tuple, dict, set, frozenset,
                          float, complex, type, types.ModuleType, types.FunctionType,
                          types.BuiltinFunctionType, types.MethodType, functools.partial)
                   + _CONSTANT_TYPES):
        return False
    return type(value).__module__.split(".")[0] not in ("builtins", "numpy")


def foreign_array(value: Any) -> bool:
    """An array-like object of another library that is not an array of NumPy's
    dispatch protocols: a pandas Series or DataFrame, an xarray DataArray, a
    tensor (``__array__`` without ``__array_function__``).  Taken apart as an
    object its attributes (``RangeIndex._range``) make no sense to the user."""
    kind = type(value)
    return hasattr(kind, "__array__") and not hasattr(kind, "__array_function__") and \
        kind.__module__.split(".")[0] not in ("builtins", "numpy", "__main__") and \
        not isinstance(value, (np.ndarray, np.generic))


def is_structured(value: Any) -> bool:
    """A container or an object: the gradient comes back in its structure."""
    return is_container(value) or is_user_object(value)


def _is_float_leaf(value):
    return isinstance(value, (float, np.floating)) and not isinstance(value, bool) or \
        is_array(value) and value.dtype.kind == "f"


def attributes_of(obj: Any) -> Dict[str, Any]:
    """The attributes of a ``wrt`` object, in order: a dataclass's fields,
    else ``vars(obj)``.  An object with neither (``__slots__``) is refused."""
    if dataclasses.is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if not hasattr(obj, "__dict__"):
        raise WrtError(f"wrt names an object of class {type(obj).__name__}, which has "
                       "neither dataclass fields nor a __dict__ (__slots__): pass its "
                       "arrays, or make it a @dataclass")
    return dict(vars(obj))


def _attribute_structure(obj, name, value):
    if is_structured(value) or _is_float_leaf(value):
        return structure_of(value)
    if isinstance(value, _CONSTANT_TYPES) or isinstance(value, _FUNCTION_TYPES):
        return ("const", value)
    raise WrtError(f"wrt names an object of class {type(obj).__name__} whose attribute "
                   f".{name} is a {type(value).__name__}"
                   + (f" of dtype {value.dtype}" if is_array(value) else "")
                   + ": only float arrays, floats, containers of them and int/bool/str/None "
                     "constants can be followed; pass the arrays instead")


def structure_of(value: Any) -> Any:
    """A hashable description of a nested container: its kinds, lengths and
    keys; ``"leaf"`` for anything else.  Equal structures lay their leaves out
    the same way (:func:`leaves_of`)."""
    if isinstance(value, dict):
        return ("dict", tuple(value), tuple(structure_of(v) for v in value.values()))
    if is_user_object(value):
        attributes = attributes_of(value)
        return ("object", type(value), tuple(attributes),
                tuple(_attribute_structure(value, k, v) for k, v in attributes.items()))
    if isinstance(value, (list, tuple)):
        kind = type(value) if hasattr(value, "_fields") else \
            ("list" if isinstance(value, list) else "tuple")
        return (kind, tuple(structure_of(v) for v in value))
    return "leaf"


def leaves_of(value: Any) -> List[Any]:
    """The leaves of a nested container, in traversal order (dict values in
    insertion order)."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in leaves_of(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in leaves_of(v)]
    if is_user_object(value):
        return [leaf for v in attributes_of(value).values()
                if is_structured(v) or _is_float_leaf(v) for leaf in leaves_of(v)]
    return [value]


def rebuild_from(structure: Any, leaves: Any, like: Any = None) -> Any:
    """A container of ``structure`` holding the next leaves of the iterator
    ``leaves``; an object is a shallow copy of ``like`` (the argument) with its
    float attributes set to the leaves (the argument itself is not touched)."""
    if structure == "leaf":
        return next(leaves)
    if structure[0] == "object":
        out = copy.copy(like)
        for name, s in zip(structure[2], structure[3]):
            if s[0] != "const":  # object.__setattr__: a frozen dataclass too
                object.__setattr__(out, name, rebuild_from(s, leaves, getattr(like, name)))
        return out
    if structure[0] == "const":
        return structure[1]
    if structure[0] == "dict":
        return {k: rebuild_from(s, leaves, None if like is None else like[k])
                for k, s in zip(structure[1], structure[2])}
    items = [rebuild_from(s, leaves, None if like is None else like[i])
             for i, s in enumerate(structure[1])]
    if structure[0] == "list":
        return items
    if structure[0] == "tuple":
        return tuple(items)
    return structure[0](*items)  # a namedtuple keeps its type


def count_leaves(structure: Any) -> int:
    if structure == "leaf":
        return 1
    if structure[0] == "const":
        return 0
    return sum(count_leaves(s) for s in structure[-1])


def container_positions(positions, values) -> Dict[int, Any]:
    """{position: structure} for the ``wrt`` positions whose value is a container."""
    return {k: structure_of(values[k]) for k in positions if is_structured(values[k])}


def bound_objects(bound, positions) -> Dict[int, Any]:
    """{position: structure} of the objects bound before the user's arguments
    and not in ``wrt`` (the ``self`` of ``tc.grad(model.loss)``): their
    attributes are passed as parameters, so ``self.forward(x)`` is inlined.
    An object whose attributes cannot be followed stays a value read when the
    code runs (its methods are then refused when compiling)."""
    found = {}
    for k, value in enumerate(bound):
        if k not in positions and is_user_object(value):
            try:
                found[k] = structure_of(value)
            except WrtError:
                pass
    return found


def option_dicts(values, positions) -> Dict[int, Any]:
    """{position: structure} of the dicts of string keys passed and not in ``wrt``
    (cs231n's ``bn_param``, a ``config``): their keys are known when compiling, so
    ``bn_param.get('eps', 1e-5)`` and ``bn_param['mode']`` read an entry or the
    default, and a write ``bn_param['running_mean'] = ...`` rebinds the entry in
    the gradient's own copy (the caller's dict is not changed)."""
    found = {}
    for k, value in enumerate(values):
        if k not in positions and isinstance(value, dict) and value and \
                all(isinstance(key, str) for key in value):
            try:
                found[k] = structure_of(value)
            except WrtError:
                pass
    return found


_MOST_LEAVES = 256


def nested_sequences(values, positions) -> Dict[int, Any]:
    """{position: structure} of the lists and tuples passed and not in ``wrt``
    that hold arrays and numbers, or lists, tuples or dicts of them (a network's
    ``[(W, b), ...]`` or its ``Ws`` when only the input is differentiated).  Such
    an argument is a run-time value (a loop over it is a loop the gradient can
    checkpoint); where that is refused (``[(W * 1.0, b) for W, b in params]``
    builds a run-time list of tuples; ``for W, b in zip(Ws, bs):
    layers.append(Layer(W, b))`` a run-time list of objects) the gradient is
    compiled for its structure, like a ``wrt`` container's.  One of more than
    ``_MOST_LEAVES`` leaves is not offered, nor a list holding an object (``[CELL]``:
    compiled for its structure, its attributes would be read where the call
    gives them, not where a helper stores them)."""
    found = {}
    for k, value in enumerate(values):
        if k in positions or not isinstance(value, (list, tuple)):
            continue
        try:
            structure = structure_of(value)
        except WrtError:  # an object whose attributes cannot be followed (``.act =
            continue      # np.tanh``): it holds an object, so it is not offered anyway
        leaves = leaves_of(value)
        if 0 < len(leaves) <= _MOST_LEAVES and not holds_object(structure) and \
                all(_is_float_leaf(leaf) or isinstance(leaf, np.ndarray) or
                    isinstance(leaf, (int, np.integer)) and not isinstance(leaf, bool)
                    for leaf in leaves):
            found[k] = structure
    return found


def outside_objects(values, positions) -> Dict[int, Any]:
    """{position: structure} of the objects of the user's classes passed and not
    in ``wrt`` (a ``model`` whose ``model.loss(x, y)`` is called), and of the
    lists and tuples of them (``layers``): compiled for their structure only
    when the gradient is refused with them as run-time values (a method called on
    one), their attributes then passed as parameters (not differentiated)."""
    found = {}
    for k, value in enumerate(values):
        if k in positions or not (is_user_object(value) or isinstance(value, (list, tuple))):
            continue
        try:
            structure = structure_of(value)
        except WrtError:
            continue
        if holds_object(structure) and 0 < len(leaves_of(value)) <= _MOST_LEAVES:
            found[k] = structure
    return found


def refuse_shared_objects(values, containers, names, dependencies=None):
    """Refuse one object of the user's given twice among the arguments the
    gradient was compiled for the structure of (``containers``: position ->
    structure; ``values``: the arguments, ``names`` their parameters' names), or
    given and also reached by the compiled code another way (``dependencies``,
    ``parse.Dependencies``: a module-level ``CELL``, or a list holding it):
    called where the code stores an attribute on an object it is given, which
    the gradient follows as a variable per place it is given -- Python's one
    object would see the store under both names (``cells = [c, c]``, ``f(a,
    a)``, ``f(x, CELL)``)."""
    seen = {}
    if dependencies is not None:
        for obj in dependencies.values():
            for label, held in _objects_in("a module-level value", obj):
                seen.setdefault(id(held), (f"{label} the code reads", held))
    for k in sorted(containers):
        for label, obj in _objects_in(names[k], values[k]):
            if id(obj) in seen and seen[id(obj)][1] is obj:
                raise WrtError(f"{seen[id(obj)][0]} and {label} are one object, and the "
                               "function stores an attribute on an object it is given: the "
                               "gradient holds the attributes of each argument apart, so a "
                               "store under one name would not be seen under the other; "
                               "pass distinct objects (copy.copy), or keep the value in a "
                               "variable")
            seen[id(obj)] = (label, obj)


def _objects_in(label, value):
    """(label, object) of each object of the user's in ``value``, depth first."""
    if is_user_object(value):
        yield label, value
        for k, v in attributes_of(value).items():
            yield from _objects_in(f"{label}.{k}", v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _objects_in(f"{label}[{k!r}]", v)
    elif isinstance(value, (list, tuple)):
        for k, v in enumerate(value):
            yield from _objects_in(f"{label}[{k}]", v)


def holds_object(structure) -> bool:
    """Does a container of ``structure`` hold an object (at any depth)?"""
    if structure == "leaf" or structure[0] == "const":
        return False
    if structure[0] == "object":
        return True
    return any(holds_object(s) for s in structure[-1])


def flat_values(values, containers) -> List[Any]:
    """The arguments with each container replaced by its leaves."""
    flat = []
    for k, value in enumerate(values):
        if k in containers:
            flat.extend(leaves_of(value))
        else:
            flat.append(value)
    return flat


def complex_paths(values) -> Tuple[tuple, ...]:
    """Where ``values`` (the arguments, in order) hold complex numbers: ``(k,)``
    for the k-th when it is a complex array or number, or a list, tuple or dict
    holding one; ``(k, "c")`` for an attribute ``c`` of an object of a user class
    that is (``(k, "a", "c")`` nested).  The gradient is compiled for them: what
    they make is complex (compiler/analyze/complex_values.py)."""
    return tuple(path for k, value in enumerate(values)
                 for path in _complex_paths(value, (k,), frozenset()))


def _complex_paths(value, path, seen):
    if holds_complex(value):
        return [path]
    if type(value) is np.ndarray or not is_user_object(value) or id(value) in seen:
        return []
    seen = seen | {id(value)}
    try:
        attributes = attributes_of(value)
    except WrtError:  # __slots__
        attributes = {name: getattr(value, name) for cls in type(value).__mro__
                      for name in getattr(cls, "__slots__", ()) if hasattr(value, name)}
    return [found for name, item in attributes.items()
            for found in _complex_paths(item, path + (name,), seen)]


def holds_complex(value: Any) -> bool:
    """Is ``value`` a complex array, number or type (``dtype=complex``), or a list,
    tuple or dict holding one?"""
    kind = type(value)
    if kind is np.ndarray:
        return value.dtype.kind == "c"
    if kind is float or kind is int or kind is bool:
        return False
    if kind is complex or isinstance(value, np.complexfloating):
        return True
    if kind is type or kind is np.dtype or isinstance(value, np.dtype):  # dtype=dt
        try:
            return np.dtype(value).kind == "c"
        except (TypeError, ValueError):
            return False
    if kind is list or kind is tuple:
        return any(map(holds_complex, value))
    if kind is dict:
        return any(map(holds_complex, value.values()))
    return is_foreign_array(value) and value.dtype.kind == "c"  # CuPy, Dask


def leaf_labels(name, value) -> List[str]:
    """How messages name the leaves of a container argument: ``params[0][1]``."""
    if isinstance(value, dict):
        return [label for k, v in value.items() for label in leaf_labels(f"{name}[{k!r}]", v)]
    if isinstance(value, (list, tuple)):
        return [label for i, v in enumerate(value) for label in leaf_labels(f"{name}[{i}]", v)]
    if is_user_object(value):
        return [label for k, v in attributes_of(value).items()
                if is_structured(v) or _is_float_leaf(v)
                for label in leaf_labels(f"{name}.{k}", v)]
    return [name]


def regroup(grads, positions, values, containers, shaped):
    """The flat gradients (one per ``wrt`` leaf, in order) as one gradient per
    ``wrt`` position, a container one in its container's structure; ``shaped(g,
    x)`` gives each leaf's gradient its argument's shape."""
    count = sum(count_leaves(containers[k]) if k in containers else 1 for k in positions)
    flat = iter((grads,) if count == 1 else tuple(grads))
    out = []
    for k in positions:
        if k in containers:
            leaves = [shaped(next(flat), leaf) for leaf in leaves_of(values[k])]
            out.append(rebuild_from(containers[k], iter(leaves), values[k]))
        else:
            out.append(shaped(next(flat), values[k]))
    return out

