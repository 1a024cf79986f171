"""Lower: a parsed user function -> the A-normal-form IR of :mod:`ir`.

The lowering of one function is a :class:`Lowering`: the state its parts share
(the statements being written, the current scope, the names and bindings) and
its parts, each a class of its own module that reaches the others through the
lowering:

- ``statements`` (:mod:`.statements`): blocks, ``if``, ``return``, expression
  statements, the ``with`` on a checkpoint marker ``desugar/checkpoint_calls.py``
  writes (an ``ir.Segment``, a checkpointed ``ir.For``);
- ``assignments`` (:mod:`.assignments`): assignments to names, tuples,
  subscripts and attributes;
- ``loops`` (:mod:`.loop_statements`): ``for`` and ``while``;
- ``expressions`` (:mod:`.expressions`): expressions to operands, names, constants;
- ``calls`` (:mod:`.calls`): primitives, methods;
- ``inlining`` (:mod:`.inlining`): the user's functions desugar left (a dict or object
  default, a closure called in a loop, methods of kept objects), inlined where called;
- ``callables`` (:mod:`.callables`): functions as values (a ``partial`` object
  made at module level, lambdas, bound methods, spreads of values, ``zip(*pairs)``:
  desugar writes every ``map`` it can follow as a comprehension, loop or
  generator expression, ``partial`` bound once (of a lambda or a method too) and
  spreads of displays as plain calls, ``map_calls.py``, ``partial_calls.py``,
  ``spread_arguments.py``; a ``map`` or ``functools.partial()`` left is refused);
- ``objects`` (:mod:`.objects`): objects of user classes desugar left (more than
  their attributes: in a list or dict that is changed or handed on, returned,
  handed on; a list only read or appended to statement after statement (or by a
  loop of a count known when compiling), a dict
  read by constant keys and a container holding an object the function names are
  ``desugar/object_lists.py``'s), one variable per
  attribute, named tuples and dataclasses among them (their fields bound as
  ``desugar/records.py`` says; the others desugar writes as names; ``super()``, a
  function stored on an attribute, a class default stored over in a branch or
  loop refused), and through
  :mod:`.outside_objects` the attributes the code assigns on objects made
  outside it that ``desugar/outside_attributes.py`` left (an object in ``wrt``,
  one reached by a dotted name or under two names, a function still calling a
  helper of the user's that the lowering inlines);
- ``containers`` (:mod:`.containers`): lists, tuples and dicts of static structure
  (one variable per element);
- ``run_time`` (:mod:`.run_time_containers`): lists built and dicts written at run
  time (``errs = errs + [e]`` arrives as ``errs.append(e)``,
  ``desugar/concatenated_lists.py``; an array appended and written in place is
  the fence's to refuse);
- ``container_loops`` (:mod:`.container_loops`): ``for`` loops over containers and
  ranges of constants that desugar left (unrolled; ``desugar/static_loops.py``
  unrolls those over a display in the header (of calls too) or a name bound once
  to one and only read, a comprehension's over a constant range (its conditions
  decided in each copy) or a range of a local int, and those over a list, tuple or
  dict of arrays the call gives and the function only reads (nested in it too),
  those over a local bound only to displays of one structure whose items it
  stores, ``break`` and ``continue`` in their bodies too, and a list built by
  appends in straight code or in the copies of a loop it unrolled; left here: a
  list built by appends in a loop of run-time length, a container whose structure
  the function changes, one holding objects, a local nested display, a
  comprehension with a run-time condition), and conditions of constants;
- ``container_statements`` (:mod:`.container_statements`): container parameters,
  ``append``/``extend`` (on a list of static structure only the new items are
  bound, an item the append computed in its own variable; a list made in a loop's
  trip and filled by an unrolled loop there stays one), writes into containers.

The variables of each (possibly inlined) function live in :mod:`.scopes`.
"""

from tangent_ckpt.compiler import ir
from tangent_ckpt.compiler.fence.fenced import Fenced
from tangent_ckpt.compiler.lower.assignments import AssignmentLowering
from tangent_ckpt.compiler.lower.callables import CallableValues
from tangent_ckpt.compiler.lower.calls import CallLowering
from tangent_ckpt.compiler.lower.container_loops import ContainerLoops
from tangent_ckpt.compiler.lower.container_statements import ContainerStatements
from tangent_ckpt.compiler.lower.containers import ContainerLowering
from tangent_ckpt.compiler.lower.expressions import ExpressionLowering
from tangent_ckpt.compiler.lower.inlining import Inlining
from tangent_ckpt.compiler.lower.loop_statements import LoopLowering
from tangent_ckpt.compiler.lower.objects import ObjectLowering
from tangent_ckpt.compiler.lower.outside_objects import LowerAgain, drop_unread_first_values
from tangent_ckpt.compiler.lower.run_time_containers import RunTimeContainers
from tangent_ckpt.compiler.lower.scopes import CompileTimeValue, ObjectValue
from tangent_ckpt.compiler.lower.statements import StatementLowering
from tangent_ckpt.compiler.naming import Namer, is_outside
from tangent_ckpt.compiler.node_facts import NodeFacts
from tangent_ckpt.errors import TransformError


class Lowering:
    """The lowering of one function: the state its parts share, and the parts."""

    def __init__(self, parsed, namer=None, containers=None, one_output=True, has_aux=False,
                 fenced=None, numbers_or_arrays=frozenset()):
        self.parsed = parsed
        # the parameters this compilation's call gives NumPy arrays or numbers (their
        # shapes known), which hold no items: no rt.distinct_items guard (guards.py)
        self.numbers_or_arrays = frozenset(numbers_or_arrays)
        # the functions the fence checked before lowering, and what views.py marked
        self.fenced = fenced if fenced is not None else Fenced()
        self.discarded_calls = NodeFacts()  # calls whose value a statement discards
        # reverse mode differentiates one output (a tuple or list returned is refused);
        # forward mode a tuple or list of them too.  has_aux: `return output, aux`
        self.one_output = one_output
        self.has_aux = has_aux
        # parameters given as lists, tuples or dicts: position -> structure
        # (tangent_ckpt.flatten.structure_of), one parameter per element
        self.containers_given = dict(containers or {})
        self.namer = namer or Namer()
        self.bindings = {}  # generated global name -> object
        self.binding_names = {}  # id(obj) -> generated name
        self.out = None  # the statement list being written
        self.root_block = None  # the differentiated function's own statements (the top)
        self.current_scope = None  # the scope of the function being lowered
        self.ctx = None  # that function's result name, enclosing loop, ...
        self.inline_stack = []  # helpers being inlined (recursion check)
        # source lines of helpers from the same file (desugar inlined some)
        self.inlined_lines = dict(parsed.inlined_lines)
        self.line = 0  # the user's line of the statement being lowered
        self.statements = StatementLowering(self)
        self.assignments = AssignmentLowering(self)
        self.loops = LoopLowering(self)
        self.expressions = ExpressionLowering(self)
        self.calls = CallLowering(self)
        self.inlining = Inlining(self)
        self.callables = CallableValues(self)
        self.objects = ObjectLowering(self)
        self.containers = ContainerLowering(self)
        self.run_time = RunTimeContainers(self)
        self.container_loops = ContainerLoops(self)
        self.container_statements = ContainerStatements(self)

    def error(self, cls, what, node, hint=None, construct=None, parsed=None):
        """An error of class ``cls`` naming the user's file and line."""
        parsed = parsed or (self.current_scope.parsed if self.current_scope else self.parsed)
        return parsed.located(cls, what, node, construct=construct or what, hint=hint)

    def emit(self, stmt):
        expr = getattr(stmt, "expr", None)
        held = [a for a in ([expr] + list(getattr(expr, "args", [])))
                if isinstance(a, CompileTimeValue)]
        if held and isinstance(held[0], ObjectValue):
            raise self.object_as_value(held[0], getattr(stmt, "line", None))
        if held:  # gs = [make(1.0), make(2.0)] of closures: no value the code can keep
            raise TransformError("a function known only when compiling (a function defined "
                                 "inside the code, a partial, a method) held as a value",
                                 filename=self.current_scope.parsed.filename,
                                 lineno=getattr(stmt, "line", None) or self.line or None,
                                 construct="function value",
                                 hint="call the function where it is named, or hold the "
                                      "values it returns")
        self.out.append(stmt)

    def object_as_value(self, obj, line=None):
        """The refusal of an object used as a value (``print(params)``,
        ``[layers[0]]``): its attributes are variables, the object itself is none."""
        return TransformError(f"the object {obj.label} ({obj.cls.__name__}) used as a value",
                              filename=self.current_scope.parsed.filename,
                              lineno=line or self.line or None, construct=obj.label,
                              hint="read its attributes or call its methods where it is "
                                   "named (layers[0].W, for layer in layers)")


def normalize(parsed, containers=None, one_output=True, has_aux=False, fenced=None,
              numbers_or_arrays=frozenset()):
    """Lower.  Takes a :class:`~tangent_ckpt.compiler.frontend.parse.ParsedFunction`
    (and the structure of the parameters given as containers, by position;
    whether one output is differentiated or a returned tuple of them, and
    whether the function returns ``(output, aux)``; what the aliasing fence found,
    compiler/fence/fence_guards.py); gives ``(ir.Function,
    bindings, namer)``: the function in A-normal form, the global names its code
    reads, and the namer that made its names.  ``fenced``
    (:func:`~tangent_ckpt.compiler.fence.fence_once.fence_once`): the user functions
    the fence checked, the only ones it inlines."""
    early = frozenset()  # attributes of objects made outside, variables from the top on
    while True:
        lowering = Lowering(parsed, containers=containers, one_output=one_output,
                            has_aux=has_aux, fenced=fenced, numbers_or_arrays=numbers_or_arrays)
        lowering.objects.outside.early = early
        try:
            function = lowering.statements.run(
                fenced.findings.guards + fenced.findings.repeated_items
                if fenced is not None else ())
        except LowerAgain as again:  # a loop reads CELL.t before it assigns it
            early = early | {again.key}
            continue
        drop_unread_first_values(function, lowering.objects.outside)
        _refuse_reads_nothing_binds(function, lowering.bindings, parsed)
        return function, lowering.bindings, lowering.namer


def _refuse_reads_nothing_binds(function, bindings, parsed):
    """Every name the lowered code reads is a parameter, a global it is given or a
    name some statement binds.  One that is none is a variable the user's code
    binds, at the run-time level, only to what the lowering keeps itself (an object,
    a function): ``layer.b`` read before ``for layer in layers:`` in a later trip of
    an outer loop, which Python reads as the last trip's object.  The code would
    raise NameError when it runs: refused here, at the line of the read."""
    bound = set(ir.assigned_names(function.body)) | set(function.params) | set(bindings)
    if all(n in bound or is_outside(n) for n in ir.read_names(function.body)):
        return  # (the common case: one walk; the statement is looked for only otherwise)
    for stmt in ir.walk(function.body):
        inner = getattr(stmt, "body", []) + getattr(stmt, "orelse", [])
        unbound = [n for n in set(ir.read_names([stmt])) - set(ir.read_names(inner))
                   if n not in bound and not is_outside(n)]  # ('<np>': a module, no name)
        if unbound:
            raise TransformError(
                f"'{unbound[0]}' read where it holds what an earlier trip of a loop "
                "bound it to (an object or a function, which the compiler follows "
                "only where it is bound)", filename=parsed.filename,
                lineno=getattr(stmt, "line", None) or None, construct=unbound[0],
                hint="read it after it is bound in the same trip, or keep what you need "
                     "of it in a variable of its own")
