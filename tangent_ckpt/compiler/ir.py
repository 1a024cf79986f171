"""The normalized program the analysis and reverse passes work on.

A-normal form: each ``Assign`` applies one primitive to operands that are names
or constants.  Control flow is ``If``, ``For`` over a range, and ``While``; early
``return``, ``break`` and ``continue`` have been turned into flags and branches.
Every statement keeps the user's line number.
"""

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from tangent_ckpt.compiler import syntax as sx


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


@dataclass(frozen=True, eq=False)
class Index:
    """A subscript index: ``node`` is its syntax tree with operands atomized
    (``t``, ``1:-1``, ``..., None``), ``names`` the variables it reads; ``plain``
    when it is a value as written (a name or a constant), else it is passed as
    ``np.s_[...]``."""
    node: ast.expr
    names: tuple
    plain: bool = False

    def value(self):
        """The index as a value: ``t``, ``np.s_[1:-1]``."""
        node = sx.copy_tree(self.node)
        return node if self.plain else sx.subscript("np.s_", node)


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
    evaluated exactly as written (``node``, a syntax tree with local names renamed
    and globals bound).  ``names`` are the local variables it reads."""
    node: ast.expr
    names: tuple
    draws: bool = False  # lower: it calls NumPy's legacy global random functions


# --- statements ---------------------------------------------------------------
@dataclass
class Assign:
    target: str
    expr: Any
    line: int
    # analyze (shapes.py): operands of an elementwise primitive known to have the
    # result's shape (their adjoints need no rt.unbroadcast)
    same_shape: tuple = ()
    # lower (observers.py): a statement that only observes (print, logging, assert):
    # it runs in the forward sweep, is never saved, and recordings leave it out
    observes: bool = False
    # lower (containers.py): an observation ``rt.require_numpy_operand(name, op)``:
    # (name, op); analyze (numpy_operands.py) drops it where it is proved to pass
    numpy_operand: tuple = ()


@dataclass
class SetItem:
    """``target[index] = value`` (functional: the array is copied, never mutated)."""
    target: str
    index: Index
    value: Any
    line: int
    # analyze (shapes.py, known_shapes.py): the index is basic (no element twice) and
    # the value has the shape of target[index]: its adjoint is a copy of that region
    value_fits: bool = False


@dataclass
class If:
    test: str  # a name holding the saved condition
    body: list
    orelse: list
    line: int


@dataclass
class LoopRecord:
    """What the transform records about one taped loop while it generates its
    code (a checkpointed loop's facts are an :class:`CheckpointedLoop`)."""
    counter: Optional[str] = None  # transform: the trip count of a while/break loop
    counter_save: Any = None  # transform: (slot, is tape) keeping the counter's old value
    target_save: Any = None  # transform: the save (an ir.Assign) of a for loop's variable
    restores: list = field(default_factory=list)  # transform: values from before the loop,
    # put back after its reverse (names the body's TapeRecord keeps, save_points.py)
    range_node: Any = None  # transform: the iterable the primal loop runs over (a tree)


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
    checkpoint: bool = False  # lower: tc.checkpointed_loop marks it
    options: Any = None  # lower: tc.checkpointed_loop's own CheckpointOptions
    steps_name: Optional[str] = None  # transform: a taped run iterates ``for t in steps``
    # analyze (known_shapes.py): names to which, for the call's arguments, every
    # assignment of the body gives the one shape they have at its top
    steady_shapes: frozenset = frozenset()
    record: LoopRecord = field(default_factory=LoopRecord)


@dataclass
class While:
    test: NonDiff
    body: list
    line: int
    header: str = ""
    break_flag: Optional[str] = None
    checkpoint: bool = False
    options: Any = None
    steady_shapes: frozenset = frozenset()  # as For's
    record: LoopRecord = field(default_factory=LoopRecord)


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
    # analyze (known_shapes.py): parameters this call passes as NumPy arrays (ndim >= 1)
    # that the body never rebinds
    array_params: frozenset = frozenset()
    # lower: the returned tuple or list of outputs (forward mode differentiates each),
    # as the expression that rebuilds it from the names holding its items; None when
    # the function returns one value (``result``)
    outputs: Optional[ast.expr] = None
    # lower, with has_aux: the auxiliary value of ``return output, aux``, returned as
    # computed (not differentiated), as the expression that rebuilds it; else None
    aux: Optional[ast.expr] = None
    # analyze (scalar_output.py): the output is a scalar on every path, so the output
    # adjoint needs no spreading over its shape (rt.output_adjoint)
    scalar_output: bool = False
    # analyze (from the call's arguments): parameters this call passes as float or
    # complex arrays or numbers (inexact_arrays.py)
    inexact_params: frozenset = frozenset()
    # analyze (from the call's arguments): parameters this call passes complex arrays or
    # numbers, or containers holding one, and attributes of object parameters that
    # are, as ``m.c`` (complex_values.py)
    complex_params: frozenset = frozenset()
    # analyze (activity.varied_on_entry): id(statement) -> (the statement, the names
    # that may hold a differentiated value when it runs); a statement not in it (or
    # another object at that id): every active name may
    varied_on_entry: Dict[int, tuple] = field(default_factory=dict)
    # lower (parse.ParsedFunction.stores_on_given): the code stores an attribute on an
    # object the call gives, followed as a variable of the gradient
    stores_on_given: bool = False


def output_names(function):
    """The names holding what ``function`` returns to be differentiated."""
    if function.outputs is None:
        return {function.result}
    return _tree_names(function.outputs)


def returned_names(function):
    """Every name ``function``'s return reads: its outputs and its aux value."""
    names = output_names(function)
    if function.aux is not None:
        names |= _tree_names(function.aux)
    return names


def _tree_names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


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


def operand_node(op):
    """The expression of an operand: ``h``, ``0.5``, ``(a, b)``, ``np.s_[1:-1]``."""
    if isinstance(op, Name):
        return sx.name(op.id)
    if isinstance(op, Const):
        return sx.const(op.value)
    if isinstance(op, Seq):
        items = [operand_node(x) for x in op.items]
        if op.kind == "list":
            return ast.List(elts=items, ctx=ast.Load())
        return ast.Tuple(elts=items, ctx=ast.Load())
    if isinstance(op, Index):
        return op.value()
    raise TypeError(op)


SYMBOLS = {"binop:+": "+", "binop:-": "-", "binop:*": "*", "binop:/": "/",
           "binop:**": "**", "binop:@": "@", "binop:%": "%"}


def prim_node(prim, args=None, kwargs=None):
    """The primal right-hand side of a primitive application; ``args`` and
    ``kwargs`` (nodes), when given, stand in place of its operands (forward mode
    applies a linear primitive to tangents)."""
    if args is None:
        args = [operand_node(a) for a in prim.args]
    if kwargs is None:
        kwargs = {k: operand_node(v) for k, v in prim.kwargs.items()}
    if prim.render == "call":
        return sx.call(prim.ref, *args, **kwargs)
    if prim.render in SYMBOLS:
        return sx.binop(args[0], SYMBOLS[prim.render], args[1])
    if prim.render == "unary:-":
        return sx.neg(args[0])
    if prim.render == "getitem":
        return sx.subscript(args[0], sx.copy_tree(prim.args[1].node))
    if prim.render.startswith("attr:"):  # x.T, params.W
        return sx.attr(args[0], prim.render[len("attr:"):])
    raise ValueError(f"unknown primitive rendering {prim.render!r}")


def expr_node(expr):
    if isinstance(expr, Prim):
        return prim_node(expr)
    if isinstance(expr, Copy):
        return operand_node(expr.value)
    if isinstance(expr, NonDiff):
        return sx.copy_tree(expr.node)
    raise TypeError(expr)


# --- plan -> transform: how a loop is checkpointed ----------------------------
@dataclass
class LoopPlan:
    """How one loop is to be checkpointed, decided before the transform from the
    options and the loop's facts (``package/loop_plans.py``): plain data, so that
    the transform never sees the options."""
    carried: list  # the variables each step hands the next (``package/loop_state.py``)
    invariants: list  # read and never assigned; the transform keeps the local ones
    # bound when the loop starts
    target_read_after: bool  # code after the loop reads its loop variable
    journal: list  # carried arrays the steps may write in place (``written_rows.py``),
    # when the loop runs at the gradient function's top level
    taped_segment: bool  # a memory budget: also a function that tapes a run of steps
