"""Containers of static structure as values (lower/containers.py lowers them):
what a tuple, list or dict known when lowering *is* -- ``TupleValue`` /
``DictValue`` of operands -- and what can be read off it without emitting code:
its structure (kind, length, keys, nested), its leaves and the names they are
given (``params_0_1``, ``d_w``), the items a ``for`` visits, constant keys, and
the leaves a ``wrt`` container argument becomes (``expand_positions``)."""

import ast
import re

import gast

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.lower.scopes import ObjectValue, TupleValue


class DictValue(TupleValue):
    """A dict of known keys (constants) whose values are operands or containers;
    ``items`` holds the values in insertion order, as ``TupleValue`` does."""

    def __init__(self, keys, items):
        super().__init__(items)
        self.keys = list(keys)


def is_container(value):
    return isinstance(value, TupleValue)


def structure(value):
    """A hashable description of a container's shape (kind, keys, nesting)."""
    if isinstance(value, DictValue):
        return ("dict", tuple(value.keys), tuple(structure(v) for v in value.items))
    if isinstance(value, TupleValue):
        return ("seq", tuple(structure(v) for v in value.items))
    return "leaf"


def leaves(value):
    """The operands of a (nested) container, in traversal order."""
    if isinstance(value, TupleValue):
        return [leaf for item in value.items for leaf in leaves(item)]
    return [value]


def leaf_paths(value, prefix, into_objects=True):
    """Names for the leaves of ``value``: ``prefix_0_1``, ``prefix_w``; an object's
    attributes are leaves too, unless ``into_objects`` is False (each object one
    leaf, as :func:`leaves` counts them)."""
    if isinstance(value, DictValue):
        return [p for key, item in zip(value.keys, value.items)
                for p in leaf_paths(item, f"{prefix}_{key_part(key)}", into_objects)]
    if isinstance(value, TupleValue):
        return [p for k, item in enumerate(value.items)
                for p in leaf_paths(item, f"{prefix}_{k}", into_objects)]
    if isinstance(value, ObjectValue) and into_objects:  # a wrt object: its constants
        return [p for k, item in value.attributes.items()  # are no leaves
                if not isinstance(item, ir.Const) for p in leaf_paths(item, f"{prefix}_{k}")]
    return [prefix]


def key_part(key):
    """A key as part of a variable's name (``d['my key']`` is ``d_my_key``)."""
    text = re.sub(r"\W", "_", str(key)).strip("_")
    return text or "key"


def rebuild(value, new_leaves):
    """A container of ``value``'s structure holding ``new_leaves`` (an iterator)."""
    if isinstance(value, DictValue):
        return DictValue(value.keys, [rebuild(v, new_leaves) for v in value.items])
    if isinstance(value, TupleValue):
        return TupleValue([rebuild(v, new_leaves) for v in value.items], value.is_list,
                          value.cls)
    return next(new_leaves)


def iteration_items(value):
    """What ``for x in value`` visits: a dict's keys, a sequence's items, a
    constant string's characters."""
    if isinstance(value, DictValue):
        return [ir.Const(k) for k in value.keys]
    return list(text_as_tuple(value).items)


def text_as_tuple(value):
    """A constant string (``zip("xyz", ws)``) as the tuple of its characters."""
    if isinstance(value, ir.Const) and isinstance(value.value, str):
        return TupleValue([ir.Const(c) for c in value.value])
    return value


def container_node(value):
    """A container of operands as the Python expression that builds it (for
    code kept as written: ``if len(params) > 1``)."""
    if isinstance(value, DictValue):
        return ast.Dict(keys=[ast.Constant(value=k) for k in value.keys],
                        values=[container_node(v) for v in value.items])
    if isinstance(value, TupleValue):
        kind = ast.List if value.is_list else ast.Tuple
        return kind(elts=[container_node(v) for v in value.items], ctx=ast.Load())
    return ir.operand_node(value)


def value_of_structure(structure, names):
    """A container value (``tangent_ckpt.flatten.structure_of``'s description)
    holding the next operands of ``names``."""
    if structure == "leaf":
        return next(names)
    if structure[0] == "const":  # an int/str/None attribute of a wrt object
        return ir.Const(structure[1])
    if structure[0] == "object":  # a wrt object: its attributes are the leaves
        obj = ObjectValue(structure[1], "object", given=True)
        obj.attributes = {k: value_of_structure(s, names)
                          for k, s in zip(structure[2], structure[3])}
        return obj
    if structure[0] == "dict":
        return DictValue(structure[1], [value_of_structure(s, names) for s in structure[2]])
    return TupleValue([value_of_structure(s, names) for s in structure[1]],
                      is_list=structure[0] == "list",
                      cls=structure[0] if isinstance(structure[0], type) else None)


def expand_positions(positions, containers, count):
    """Positions among ``count`` parameters -> positions among the parameters once
    each container parameter (``containers``: position -> structure) is one
    parameter per leaf."""
    starts, at = [], 0
    for k in range(count):
        starts.append(at)
        at += _leaf_count(containers[k]) if k in containers else 1
    expanded = []
    for k in positions:
        k = k % count if -count <= k < count else k
        if k in containers:
            expanded.extend(range(starts[k], starts[k] + _leaf_count(containers[k])))
        else:
            expanded.append(starts[k] if 0 <= k < count else k)
    return tuple(expanded)


def _leaf_count(structure):
    if structure == "leaf":
        return 1
    if structure[0] == "const":
        return 0
    return sum(_leaf_count(s) for s in structure[-1])
