"""Frontend: a Python function -> its gast tree, its file and line, and a resolver
that maps every free name to the object it denotes (globals, closures, builtins).

Names are resolved to objects, never matched as strings: ``import numpy as onp``
then ``onp.tanh`` is ``np.tanh``.
"""

import builtins
import inspect
import textwrap
import types

import gast

from tangent_ckpt.errors import SourceUnavailableError, UnsupportedSyntaxError

_UNRESOLVED = object()


class ParsedFunction:
    """A user function ready for the compiler.

    ``node`` is the ``gast.FunctionDef`` whose line numbers are the user's file
    lines; ``filename`` is the file it came from.
    """

    def __init__(self, fn, node, filename, source_lines):
        self.fn = fn
        self.node = node
        self.filename = filename
        self.source_lines = source_lines  # {lineno: text} of the user's file
        self.globals = getattr(fn, "__globals__", {})
        self.closure = _closure_values(fn)

    @property
    def name(self):
        return self.node.name

    def line_text(self, lineno):
        return self.source_lines.get(lineno, "").strip()

    def resolve(self, name):
        """The object that free name ``name`` denotes, or ``_UNRESOLVED``."""
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        return _UNRESOLVED

    def error(self, cls, message, node=None, construct=None, hint=None):
        lineno = getattr(node, "lineno", None) if node is not None else self.node.lineno
        return cls(message, filename=self.filename, lineno=lineno,
                   construct=construct, hint=hint)


def _closure_values(fn):
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    values = {}
    if code is None:
        return values
    for name, cell in zip(code.co_freevars, cells):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell: a name bound later in the outer scope
            continue
    return values


def parse_function(fn):
    """Parse ``fn``'s source into a :class:`ParsedFunction`.

    Raises :class:`SourceUnavailableError` for builtins, C functions and lambdas
    typed at the interactive prompt, whose source Python does not keep.
    """
    label = getattr(fn, "__qualname__", repr(fn))
    if isinstance(fn, (types.BuiltinFunctionType, types.BuiltinMethodType)) or \
            not isinstance(fn, types.FunctionType):
        raise SourceUnavailableError(
            f"cannot differentiate {label}: it is not a Python function with source",
            construct="function without source",
            hint="differentiate a def written in a .py file, or give it an adjoint "
                 "with tangent_ckpt.register_adjoint")
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"cannot read the source of {label} ({exc})",
            filename=getattr(fn.__code__, "co_filename", None),
            lineno=getattr(fn.__code__, "co_firstlineno", None),
            construct="function without source",
            hint="define the function in a file (not at the interactive prompt) "
                 "so that its source can be read") from None
    source = textwrap.dedent("".join(lines))
    first = max(first, 1)
    try:
        tree = gast.parse(source)
    except SyntaxError:
        tree = None
    node = None
    if tree is not None:
        for candidate in tree.body:
            if isinstance(candidate, (gast.FunctionDef,)):
                node = candidate
                break
    if node is None and fn.__name__ == "<lambda>":
        node = _lambda_as_function(source, fn, filename, first)
    if node is None:
        raise SourceUnavailableError(
            f"cannot find the definition of {label} in its source",
            filename=filename, lineno=first, construct="function without source",
            hint="write the function as a plain def")
    if isinstance(node, gast.AsyncFunctionDef):
        raise UnsupportedSyntaxError("async functions cannot be differentiated",
                                     filename=filename, lineno=first,
                                     construct="async def")
    _shift_lines(node, first - 1)
    node.decorator_list = []
    source_lines = {first + i: text.rstrip("\n") for i, text in enumerate(lines)}
    return ParsedFunction(fn, node, filename, source_lines)


def _shift_lines(node, offset):
    for child in gast.walk(node):
        if hasattr(child, "lineno") and child.lineno is not None:
            child.lineno += offset
        if hasattr(child, "end_lineno") and getattr(child, "end_lineno", None) is not None:
            child.end_lineno += offset


def _lambda_as_function(source, fn, filename, first):
    """Turn ``f = lambda x: expr`` (defined in a file) into ``def f(x): return expr``."""
    text = source.strip()
    start = text.find("lambda")
    candidates = []
    for end in range(len(text), start, -1):
        try:
            expr = gast.parse(text[start:end], mode="eval").body
        except SyntaxError:
            continue
        if isinstance(expr, gast.Lambda):
            candidates.append(expr)
            break
    if not candidates:
        raise SourceUnavailableError(
            "cannot isolate the lambda's source", filename=filename, lineno=first,
            construct="lambda", hint="write the function as a def")
    lam = candidates[0]
    ret = gast.Return(value=lam.body)
    node = gast.FunctionDef(name="lambda_fn", args=lam.args, body=[ret],
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])
    for child in gast.walk(node):
        if hasattr(child, "lineno") or isinstance(child, (gast.stmt, gast.expr)):
            child.lineno = 1
    return node
