"""Emit: the one place generated code becomes text, and the text a function.

Statements are stdlib ``ast`` trees printed with :func:`ast.unparse` (standard
library, one line per statement, never wrapped; only a long decorator of literal
keyword values is laid out over several lines); blocks, comments and the
``# line N: ...`` notes that tie generated code to the user's lines are laid
out here.  The source is compiled once and run in ``{np, rt, bindings}``.
"""

import ast
import itertools
import linecache
import pprint
from dataclasses import dataclass, field
from typing import Any

from tangent_ckpt.compiler.emit import run_time_errors
from tangent_ckpt.compiler.code import Blank, Block, Comment, Line, trees
from tangent_ckpt.compiler.naming import MODULES, is_outside, outside_aliases, outside_object
from tangent_ckpt.compiler.syntax import HelperCall, walk
from tangent_ckpt.errors import TransformError

_counter = itertools.count(1)


@dataclass
class CompiledGradient:
    """The result of compiling: source text, the function, and what it needs."""
    source: str
    function: Any
    namespace: dict
    name: str
    params: list
    wrt_names: list
    result: str
    seed_name: str
    loops: list = field(default_factory=list)  # (line, how the loop is reversed): the notebook header
    dependencies: Any = None  # the free names it was compiled against (parse.Dependencies)
    # writes the views pass carried to names sharing memory (views.SharedWrite): what an
    # array library without views (Dask) computes differently
    shared_writes: tuple = ()
    # where each generated statement comes from: the generated source's file name
    # (linecache holds its text) and {generated line: UserLine}, kept as data when
    # the source is printed, so that an error raised while the gradient runs is
    # placed at the user's line (run_time_errors.py) without reading the text back
    filename: str = ""
    user_file: str = ""
    line_table: dict = field(default_factory=dict)
    # the code stores an attribute on an object the call gives (ir.Function): the
    # caller refuses one object given twice (container_args.refuse_shared_objects)
    stores_on_given: bool = False


@dataclass(frozen=True)
class UserLine:
    """The user's line a generated statement computes (``adjoint``: its adjoint)."""
    line: int
    adjoint: bool = False


def emit(code, function, bindings, wrt_names):
    """Emit.  Takes the packaged :class:`GradientCode` of ``function`` and the
    global bindings its code reads; gives a :class:`CompiledGradient`: the source,
    printed once, and the function it defines."""
    taken, outside = _names_used(code, bindings)
    aliases = outside_aliases(outside | set(MODULES), taken)
    lines, table = [], {}
    for definition in code.definitions:
        if lines:
            lines += ["", ""]
        text, origins = render_lines(definition, line_texts=function.line_texts,
                                     aliases=aliases)
        table.update({len(lines) + k + 1: origin for k, origin in enumerate(origins)
                      if origin is not None})
        lines += text
    source = "\n".join(lines) + "\n"
    namespace = {alias: outside_object(ref)[1] for ref, alias in aliases.items()}
    namespace.update(bindings)
    filename = f"<tangent_ckpt {code.name} #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        compiled = compile(source, filename, "exec")
    except SyntaxError as exc:  # pragma: no cover - a compiler bug, reported with the text
        raise TransformError(f"internal error: generated code does not compile: {exc}\n{source}")
    exec(compiled, namespace)
    compiled = CompiledGradient(source, namespace[code.name], namespace, code.name, code.params,
                                wrt_names, function.result, code.seed, filename=filename,
                                user_file=function.filename, line_table=table)
    run_time_errors.register(compiled)
    return compiled


def _names_used(code, bindings):
    """(every name the generated code uses for its variables, parameters,
    functions and the globals it reads; the ids of the modules and builtins it
    reads from outside)."""
    taken, outside = set(bindings), set()
    for definition in code.definitions:
        for tree in trees(definition):
            for node in walk(tree):
                if isinstance(node, ast.Name):
                    (outside if is_outside(node.id) else taken).add(node.id)
                elif isinstance(node, ast.arg):
                    taken.add(node.arg)
                elif isinstance(node, ast.FunctionDef):
                    taken.add(node.name)
    return taken, outside


def _plain(node, aliases):
    """A copy of ``node`` that ``ast.unparse`` prints: HelperCall -> ast.Call
    (it dispatches on the class name), the ids of modules and builtins -> the
    names emit chose for them."""
    if isinstance(node, list):
        return [_plain(n, aliases) for n in node]
    if not isinstance(node, ast.AST):
        return node
    if isinstance(node, ast.Name) and is_outside(node.id):
        return ast.Name(id=aliases.get(node.id) or outside_object(node.id)[0], ctx=node.ctx)
    cls = ast.Call if isinstance(node, HelperCall) else type(node)
    copy = cls(**{f: _plain(getattr(node, f, None), aliases) for f in cls._fields})
    if cls._attributes:  # positions: ast.unparse reads a statement's lineno
        copy.lineno = copy.end_lineno = 1
        copy.col_offset = copy.end_col_offset = 0
    return copy


# ast.unparse is the public printer; it prints plain nodes only, so the public path
# copies each tree first (_plain).  Where CPython has the private class behind it
# (ast._Unparser), a subclass prints the tree as it is -- a third of emit's time on
# long functions (benchmarks/compile_time.py) -- but only as an accelerator: the
# first trees are printed both ways, and any difference or error turns it off for
# the process, so a Python that changes or drops the private class prints the same.
_Unparser = getattr(ast, "_Unparser", None)


class _Printer(_Unparser or object):
    """``ast.unparse`` that prints a HelperCall as the call it is and the ids of
    modules and builtins by their aliases, reading the tree as it is."""

    def __init__(self, aliases=None, **options):
        # ast's own unparser makes a fresh one, without aliases, for each
        # expression inside an f-string (``_avoid_backslashes=True``)
        super().__init__(**options)
        self._aliases = aliases

    def visit_Name(self, node):  # noqa: N802
        ident = node.id
        if is_outside(ident):
            if self._aliases is None:  # inside an f-string: _printed prints a plain copy
                raise AttributeError("no aliases inside an f-string")
            ident = self._aliases.get(ident) or outside_object(ident)[0]
        self.write(ident)

    def visit_HelperCall(self, node):  # noqa: N802
        self.visit_Call(node)

    def get_type_comment(self, node):
        return None  # generated statements have no type comments (nor positions)


#: how many more trees the accelerator prints twice, to compare; None once it is off
_TRIALS = {"left": 200 if _Unparser is not None else None}


def _printed(node, aliases):
    public = None
    left = _TRIALS["left"]
    if left is not None:
        try:
            fast = _Printer(aliases).visit(node)
        except AttributeError:  # a node without an optional field: print a full copy
            fast = None
        except Exception:  # noqa: BLE001 -- the private class changed: use the public path
            fast, _TRIALS["left"] = None, None
        if fast is not None and left == 0:
            return fast
        public = ast.unparse(_plain(node, aliases))
        if fast is not None:
            _TRIALS["left"] = left - 1 if fast == public else None
    return public if public is not None else ast.unparse(_plain(node, aliases))


def unparse(node, aliases=None):
    """Python source of one expression or statement (modules and builtins printed
    as ``aliases`` says, by their usual names by default)."""
    aliases = aliases or {}
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts:
        return "return " + ", ".join(unparse(e, aliases) for e in node.value.elts)
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Yield):
        value = node.value.value
        text = unparse(value, aliases) if value is not None else "None"
        target = node.targets[0]
        targets = ", ".join(unparse(e, aliases) for e in target.elts) \
            if isinstance(target, ast.Tuple) else unparse(target, aliases)
        return f"{targets} = yield {text}"
    return _printed(node, aliases)


def header(block, aliases=None):
    """The first line of a block: ``if c:``, ``for t in range(n):``, ``else:``, ``def f(x):``."""
    head = block.head
    if head is None:
        return "else:"
    if isinstance(head, ast.If):
        return f"if {unparse(head.test, aliases)}:"
    if isinstance(head, ast.While):
        return f"while {unparse(head.test, aliases)}:"
    if isinstance(head, ast.For):
        return f"for {unparse(head.target, aliases)} in {unparse(head.iter, aliases)}:"
    if isinstance(head, ast.FunctionDef):
        return f"def {head.name}({unparse(head.args, aliases)}):"
    raise TypeError(head)


_WIDTH = 100


def _decorator_lines(decorator, pad, aliases):
    """``@f(...)`` on one line; a longer call with literal keyword values (the
    Numba backend's ``passes=`` description) laid out one keyword per line, each
    literal wrapped at its elements' boundaries so that it can be read."""
    text = f"{pad}@{unparse(decorator, aliases)}"
    if len(text) <= _WIDTH or not isinstance(decorator, ast.Call) or decorator.args:
        return [text]
    lines = [f"{pad}@{unparse(decorator.func, aliases)}("]
    for keyword in decorator.keywords:
        prefix = f"{pad}    {keyword.arg}="
        try:
            value = ast.literal_eval(keyword.value)
        except ValueError:
            lines.append(f"{prefix}{unparse(keyword.value, aliases)},")
            continue
        wrapped = pprint.pformat(value, width=max(_WIDTH - len(prefix), 40)).split("\n")
        lines.append(prefix + wrapped[0])
        lines.extend(" " * len(prefix) + rest for rest in wrapped[1:])
        lines[-1] += ","
    lines.append(f"{pad})")
    return lines


def render(items, indent="    ", level=0, line_texts=None, aliases=None):
    """Print code items; a comment with the user's line precedes each new line's group."""
    return "\n".join(render_lines(items, indent, level, line_texts, aliases)[0])


def render_lines(items, indent="    ", level=0, line_texts=None, aliases=None):
    """(the printed lines of code items, for each line the :class:`UserLine` it
    computes or None): a statement belongs to its own user line, else to the
    one before it in its function (a driver call after the loop's comment)."""
    lines = []
    origins = []
    last = [None]
    current = [None]  # the user line of the statements printed now

    def add(text, origin=None):
        lines.append(text)
        origins.append(origin)

    def walk(items, level):
        for item in items:
            pad = indent * level
            if isinstance(item, Comment):
                add(f"{pad}# {item.text}")
                last[0] = None
            elif isinstance(item, Blank):
                add("")
                last[0] = None
            elif isinstance(item, Line):
                _note(item.line, item.adjoint, pad)
                if item.stmt is None:
                    add(f"{pad}# {item.comment}")
                else:
                    text = unparse(item.stmt, aliases)
                    if item.comment:
                        text += f"  # {item.comment}"
                    add(pad + text, current[0])
            elif isinstance(item, Block):
                if isinstance(item.head, ast.FunctionDef):
                    current[0] = None
                if item.head is not None:
                    _note(item.line, item.adjoint, pad)
                for decorator in getattr(item.head, "decorator_list", ()):
                    for text in _decorator_lines(decorator, pad, aliases):
                        add(text)
                add(pad + header(item, aliases), current[0])
                last[0] = None
                if item.body:
                    walk(item.body, level + 1)
                else:
                    add(pad + indent + "pass")
                last[0] = None

    def _note(line, adjoint, pad):
        if line is None:
            return
        current[0] = UserLine(line, adjoint)
        if (line, adjoint) == last[0]:
            return
        last[0] = (line, adjoint)
        label = "adjoint of line" if adjoint else "line"
        text = (line_texts or {}).get(line, "").strip()
        add(f"{pad}# {label} {line}: {text}" if text else f"{pad}# {label} {line}")

    walk(items, level)
    return lines, origins
