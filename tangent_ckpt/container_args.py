"""Arguments given as containers: ``wrt`` may name a list, tuple or dict of
arrays and floats (nested to any depth), and the gradient has the same
structure, as in autograd and JAX.

The gradient is compiled for the container's *structure* (kinds, lengths,
keys): each element is a parameter of its own in the generated code
(``params_0_1``), and a call lays the elements out one after the other
(:func:`leaves_of`) and rebuilds the gradients in the container's shape
(:func:`rebuild_from`).  Another structure compiles another gradient.
"""

from typing import Any, Dict, List

def is_container(value: Any) -> bool:
    """A list, tuple or dict (what ``wrt`` may name besides arrays and floats)."""
    return isinstance(value, (list, tuple, dict))


def structure_of(value: Any) -> Any:
    """A hashable description of a nested container: its kinds, lengths and
    keys; ``"leaf"`` for anything else.  Equal structures lay their leaves out
    the same way (:func:`leaves_of`)."""
    if isinstance(value, dict):
        return ("dict", tuple(value), tuple(structure_of(v) for v in value.values()))
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
    return [value]


def rebuild_from(structure: Any, leaves: Any) -> Any:
    """A container of ``structure`` holding the next leaves of the iterator ``leaves``."""
    if structure == "leaf":
        return next(leaves)
    if structure[0] == "dict":
        return {k: rebuild_from(s, leaves) for k, s in zip(structure[1], structure[2])}
    items = [rebuild_from(s, leaves) for s in structure[1]]
    if structure[0] == "list":
        return items
    if structure[0] == "tuple":
        return tuple(items)
    return structure[0](*items)  # a namedtuple keeps its type


def count_leaves(structure: Any) -> int:
    if structure == "leaf":
        return 1
    return sum(count_leaves(s) for s in structure[-1])


def container_positions(positions, values) -> Dict[int, Any]:
    """{position: structure} for the ``wrt`` positions whose value is a container."""
    return {k: structure_of(values[k]) for k in positions if is_container(values[k])}


def flat_values(values, containers) -> List[Any]:
    """The arguments with each container replaced by its leaves."""
    flat = []
    for k, value in enumerate(values):
        if k in containers:
            flat.extend(leaves_of(value))
        else:
            flat.append(value)
    return flat


def leaf_labels(name, value) -> List[str]:
    """How messages name the leaves of a container argument: ``params[0][1]``."""
    if isinstance(value, dict):
        return [label for k, v in value.items() for label in leaf_labels(f"{name}[{k!r}]", v)]
    if isinstance(value, (list, tuple)):
        return [label for i, v in enumerate(value) for label in leaf_labels(f"{name}[{i}]", v)]
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
            out.append(rebuild_from(containers[k], iter(leaves)))
        else:
            out.append(shaped(next(flat), values[k]))
    return out

