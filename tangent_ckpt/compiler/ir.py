"""The normalized program the analysis and reverse passes work on.

A-normal form: each ``Assign`` applies one primitive to operands that are names
or constants.  Control flow is ``If``, ``For`` over a range, and ``While``; early
``return``, ``break`` and ``continue`` have been turned into flags and branches.
Every statement keeps the user's line number.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


# --- operands ---------------------------------------------------------------
@dataclass(frozen=True)
class Name:
    id: str


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class Seq:
    """A literal tuple/list of operands passed as one argument (np.concatenate((a, b)))."""
    items: tuple
    kind: str = "tuple"


@dataclass(frozen=True)
class Index:
    """A subscript index: ``source`` renders it (``t``, ``1:-1``, ``..., None``),
    ``value_source`` renders it as a value (``np.s_[1:-1]``), ``names`` are the
    variables it reads."""
    source: str
    value_source: str
    names: tuple


# --- expressions (right-hand sides) ------------------------------------------
@dataclass
class Prim:
    """One differentiable primitive.  ``fn`` is the function object keying the
    adjoint rule; ``render`` is how the primal reads (``{0} @ {1}``,
    ``np.tanh({0})``); ``args``/``kwargs`` are operands."""
    fn: Any
    args: List[Any]
    kwargs: Dict[str, Any]
    render: str
    ref: str = ""  # how generated code names fn when it must call it


@dataclass
class Copy:
    value: Any  # Name or Const


@dataclass
class NonDiff:
    """An expression with no derivative (comparisons, shapes, user conditions),
    evaluated exactly as written.  ``names`` are the local variables it reads."""
    source: str
    names: tuple


# --- statements ---------------------------------------------------------------
@dataclass
class Assign:
    target: str
    expr: Any
    line: int


@dataclass
class SetItem:
    """``target[index] = value`` (functional: the array is copied, never mutated)."""
    target: str
    index: Index
    value: Any
    line: int


@dataclass
class If:
    test: str  # a name holding the saved condition
    body: list
    orelse: list
    line: int


@dataclass
class For:
    """``for target in range(*bounds)``; ``break_flag`` names the flag set by a
    ``break`` in the body (the body ends by testing it)."""
    target: str
    bounds: List[Any]
    body: list
    line: int
    header: str = ""  # the user's loop header, for comments
    break_flag: Optional[str] = None
    checkpoint: bool = False


@dataclass
class While:
    test: NonDiff
    body: list
    line: int
    header: str = ""
    break_flag: Optional[str] = None
    checkpoint: bool = False


@dataclass
class Break:
    """``if flag: break`` at the end of a loop body."""
    flag: str
    line: int


@dataclass
class Segment:
    """A block recomputed in the reverse sweep instead of kept: a
    ``tc.checkpoint(fn, ...)`` call (kind "checkpoint") or a
    ``with tc.checkpoint_scope(name):`` block (kind "scope").  ``min_bytes`` and
    ``enabled`` are operands (or None) decided at run time."""
    kind: str
    name: str
    body: list
    line: int
    label: str = ""  # the user's text, for comments
    min_bytes: Any = None
    enabled: Any = None


@dataclass
class Function:
    name: str
    params: List[str]
    defaults: Dict[str, Any]
    body: list
    result: str  # the name holding the return value
    line: int
    filename: str
    line_texts: Dict[int, str] = field(default_factory=dict)


def operand_names(op):
    """Local names an operand reads."""
    if isinstance(op, Name):
        return (op.id,)
    if isinstance(op, Seq):
        return tuple(n for item in op.items for n in operand_names(item))
    if isinstance(op, Index):
        return op.names
    return ()


def expr_reads(expr):
    if isinstance(expr, Prim):
        names = []
        for a in list(expr.args) + list(expr.kwargs.values()):
            names.extend(operand_names(a))
        return tuple(names)
    if isinstance(expr, Copy):
        return operand_names(expr.value)
    if isinstance(expr, NonDiff):
        return expr.names
    return ()


def walk(body):
    """Every statement of ``body``, nested ones included, in program order."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, If):
            yield from walk(stmt.body)
            yield from walk(stmt.orelse)
        elif isinstance(stmt, (For, While, Segment)):
            yield from walk(stmt.body)


def assigned_names(body):
    names = []
    for stmt in walk(body):
        if isinstance(stmt, (Assign, SetItem)):
            names.append(stmt.target)
        elif isinstance(stmt, For):
            names.append(stmt.target)
    return names


def read_names(body):
    names = []
    for stmt in walk(body):
        if isinstance(stmt, Assign):
            names.extend(expr_reads(stmt.expr))
        elif isinstance(stmt, SetItem):
            names.append(stmt.target)
            names.extend(stmt.index.names)
            names.extend(operand_names(stmt.value))
        elif isinstance(stmt, If):
            names.append(stmt.test)
        elif isinstance(stmt, For):
            for b in stmt.bounds:
                names.extend(operand_names(b))
        elif isinstance(stmt, While):
            names.extend(stmt.test.names)
        elif isinstance(stmt, Break):
            names.append(stmt.flag)
        elif isinstance(stmt, Segment):
            names.extend(operand_names(stmt.min_bytes))
            names.extend(operand_names(stmt.enabled))
    return names


def render_operand(op):
    """Python source of an operand: ``h``, ``0.5``, ``(a, b)``, ``np.s_[1:-1]``."""
    if isinstance(op, Name):
        return op.id
    if isinstance(op, Const):
        value = op.value
        if isinstance(value, float) and (value != value or value in (float("inf"),
                                                                     -float("inf"))):
            return "np.nan" if value != value else ("np.inf" if value > 0 else "-np.inf")
        return repr(value)
    if isinstance(op, Seq):
        inner = ", ".join(render_operand(x) for x in op.items)
        if op.kind == "list":
            return f"[{inner}]"
        return f"({inner},)" if len(op.items) == 1 else f"({inner})"
    if isinstance(op, Index):
        return op.value_source
    raise TypeError(op)
