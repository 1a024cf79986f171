"""The normalizer's view of user code: the variables of one (possibly inlined)
function, tuples held as one variable per element, nested ``def``s, and facts
about the syntax tree (which names a function binds, whether a block returns)."""

import ast
import copy
from collections import Counter

import gast
import numpy as np


class TupleValue:
    """A tuple whose elements are known operands (scalar replacement of tuples).
    ``is_list``: written as a list (``[a, b]``), which a value returned as
    computed (``has_aux``) must come back as; ``cls``: the namedtuple class of
    an argument given as one (``isinstance`` is decided on it)."""

    def __init__(self, items, is_list=False, cls=None):
        self.items = list(items)
        self.is_list = is_list
        self.cls = cls


class CompileTimeValue:
    """A value the lowering holds itself, never an array at run time: a
    function, a partial application, an object of a user class, the keywords
    of a ``**kwargs`` parameter.  Calls and attribute reads on it are resolved
    while lowering."""


class LocalFunction(CompileTimeValue):
    """A ``def`` or ``lambda`` of the user's code, with the scope it closes over.
    ``node`` (its syntax tree) is its identity: recursion is a call of a
    function already being inlined."""

    def __init__(self, node, scope):
        self.node = node
        self.scope = scope


class PartialValue(CompileTimeValue):
    """``functools.partial(fn, *args, **keywords)``: ``fn`` (a function or a
    CompileTimeValue) with operands bound before the caller's."""

    def __init__(self, fn, args, keywords):
        self.fn = fn
        self.args = list(args)
        self.keywords = dict(keywords)


class ObjectValue(CompileTimeValue):
    """An object of a user class made inside the differentiated code: its class,
    and per attribute the variable holding it (``model.W`` is ``model_W``)."""

    def __init__(self, cls, label, given=False):
        self.cls = cls
        self.label = label
        self.attributes = {}  # attribute -> ir.Name, or a CompileTimeValue
        self.given = given  # an argument named in wrt: its attributes are read only
        self.home = None  # the block of the lowering's output it was made in


class MethodValue(CompileTimeValue):
    """``obj.method`` not yet called: the function and the ``self`` it takes."""

    def __init__(self, fn, owner, is_property=False):
        self.fn = fn
        self.owner = owner
        self.is_property = is_property  # a @property's getter: read, not called


class Lowered(gast.expr):
    """An argument that is already lowered (an item of a spread ``*args``, a
    value bound by ``functools.partial``), placed where a call expects a node."""

    _fields = ()

    def __init__(self, value, like=None):
        super().__init__()
        self.value = value
        if like is not None:
            gast.copy_location(self, like)

    def __deepcopy__(self, memo):  # a copied tree reads the same lowered value
        return Lowered(self.value, self)


class Scope:
    """The variables of one (possibly inlined) user function."""

    def __init__(self, parsed, local_names, parent=None, identity=False, alias_candidates=(),
                 defs_once=()):
        self.parsed = parsed
        self.locals = set(local_names)
        # locals that may name a function (`act = np.tanh`): see function_alias_candidates
        self.alias_candidates = set(alias_candidates)
        self.defs_once = set(defs_once)  # see defs_bound_once
        self.parent = parent
        self.identity = identity  # top level: user names are kept as they are
        self.rename = {}
        self.functions = {}
        self.tuples = {}
        # containers the other path of an enclosing ``if`` made of names that are
        # none on this path: their element variables, for this path to bind too
        self.other_path_tuples = {}
        # name -> the container bind_tuple bound it to: element variables of its own,
        # which an append keeps (no other name's container holds them)
        self.bound_tuples = {}
        self.shared_arrays = set()  # parameters still bound to the caller's array
        self.top_block = None  # the statement list of the function body itself


def local_names(fnode):
    names = {a.id for a in fnode.args.args + fnode.args.kwonlyargs + fnode.args.posonlyargs}
    for node in gast.walk(fnode):
        if node is fnode:
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            names.add(node.id)
        elif isinstance(node, gast.FunctionDef):
            names.add(node.name)
    # names inside nested defs belong to them, but over-approximating is harmless
    return names


def defs_bound_once(fnode):
    """The names of the ``def`` statements in ``fnode`` that nothing else binds
    (one ``def``, no assignment, no parameter): a call of such a name means that
    function wherever the ``def`` ran.  A name two ``def`` statements bind (one in
    each branch of an ``if``) means the one whose statement ran last, which the
    lowering, binding each as it reads it, cannot tell: refused."""
    counts = _binding_counts(fnode)
    return {node.name for node in gast.walk(fnode)
            if isinstance(node, gast.FunctionDef) and node is not fnode and
            counts[node.name] == 1}


def _binding_counts(fnode):
    counts = Counter(a.id for a in fnode.args.args + fnode.args.kwonlyargs +
                     fnode.args.posonlyargs)
    for node in gast.walk(fnode):
        if node is fnode:
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            counts[node.id] += 1
        elif isinstance(node, gast.FunctionDef):
            counts[node.name] += 1
    return counts


def function_alias_candidates(fnode):
    """The locals of ``fnode`` that may name a function or an object (``sum =
    np.sum``, ``step = helper``, ``loss = make_loss(3.0)``, ``sq = lambda z: z * z``,
    ``model = Model(W)``, ``layer = layers[0]``): bound exactly once in the whole function, by a plain
    ``name = value`` statement at the top level of its body (so bound before
    any use on every path).  Whether the value is a function is decided when
    the statement is lowered."""
    counts = _binding_counts(fnode)
    found = set()
    for stmt in fnode.body:
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and \
                counts[stmt.targets[0].id] == 1 and (
                    _dotted_name(stmt.value) or
                    isinstance(stmt.value, (gast.Call, gast.Lambda, gast.Subscript))):
            found.add(stmt.targets[0].id)
    return found


def is_function(obj):
    """A function, builtin, ufunc, method or other callable that is not a class
    nor an array: what a local alias may name."""
    return callable(obj) and not isinstance(obj, (type, np.ndarray))


def _dotted_name(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


def all_names(fnode):
    names = set()
    for node in gast.walk(fnode):
        if isinstance(node, gast.Name):
            names.add(node.id)
        elif isinstance(node, gast.FunctionDef):
            names.add(node.name)
            names.update(a.id for a in node.args.args)
    return names


def to_source(node):
    """Python source of a gast expression node (an argument already lowered, a
    :class:`Lowered`, reads as the variable holding it, or ``...``)."""
    if any(isinstance(n, Lowered) for n in gast.walk(node)):
        node = _Spelled().visit(copy.deepcopy(node))
    return ast.unparse(gast.gast_to_ast(node)).strip()


class _Spelled(gast.NodeTransformer):
    def visit_Lowered(self, node):  # noqa: N802
        name = getattr(node.value, "id", None)
        return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None) \
            if isinstance(name, str) else gast.Constant(value=Ellipsis, kind=None)


def load_context(target):
    node = clone(target)
    for n in gast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return node


def clone(node):
    return copy.deepcopy(node)


def rebinds(stmts, name):
    """Does any statement in ``stmts`` bind ``name`` (assignment, loop target, ...)?"""
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               for s in stmts for n in gast.walk(s))


def walk_no_defs(node, in_loop=False):
    yield node, in_loop
    for child in gast.iter_child_nodes(node):
        if isinstance(child, (gast.FunctionDef, gast.Lambda)):
            continue
        yield from walk_no_defs(child, in_loop or isinstance(node, (gast.For, gast.While)))


def may_exit(stmt):
    """Does ``stmt`` (an If) contain a return, or a break/continue of the enclosing loop?"""
    for n, in_loop in walk_no_defs(stmt):
        if isinstance(n, gast.Return):
            return True
        if isinstance(n, (gast.Break, gast.Continue)) and not in_loop:
            return True
    return False


def always_exits(stmts):
    """Does every path through ``stmts`` end in a return?"""
    for s in stmts:
        if isinstance(s, gast.Return):
            return True
        if isinstance(s, gast.If) and s.orelse and always_exits(s.body) and \
                always_exits(s.orelse):
            return True
    return False
