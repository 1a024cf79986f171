"""Deeply nested expressions: compile them on a deep stack.

The compiler's passes recurse over the user's syntax trees (gast's conversion,
``ast`` visitors, the lowering of an expression), so an expression nested a
few hundred levels deep -- the 1 500-term sums that ``sympy.lambdify`` and
other code generators write -- exceeds Python's default recursion limit,
although CPython compiles and runs it.  :func:`on_deep_stack` runs a
compilation again, when it ran out of recursion, in a thread of its own with a
large stack and a high recursion limit (restored afterwards; compilations are
serialized by the API's lock).  What is deeper still is refused with a
:class:`~tangent_ckpt.errors.UnsupportedSyntaxError` naming the line of the
deepest expression.
"""

import ast
import sys
import textwrap
import threading

from tangent_ckpt.compiler.frontend.parse import function_source
from tangent_ckpt.errors import TangentCkptError, UnsupportedSyntaxError

STACK_BYTES = 512 * 1024 * 1024  # reserved, not committed, until the frames use it
RECURSION_LIMIT = 200_000


def on_deep_stack(compile_once, fn):
    """``compile_once()``; when it overflows the recursion limit, again on a deep
    stack; when that overflows too, an error naming ``fn``'s deepest line."""
    try:
        return compile_once()
    except RecursionError:
        pass
    outcome = {}

    def run():
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
        try:
            outcome["value"] = compile_once()
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc
        finally:
            sys.setrecursionlimit(limit)

    previous = threading.stack_size()
    threading.stack_size(STACK_BYTES)
    try:
        thread = threading.Thread(target=run, name="tangent_ckpt deep compile")
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    error = outcome.get("error")
    if isinstance(error, RecursionError):
        filename, line, depth = deepest_expression(fn)
        raise UnsupportedSyntaxError(
            f"an expression nested {depth} levels deep is too deep to differentiate",
            filename=filename, lineno=line, construct="deeply nested expression",
            hint="split it into several assignments (s1 = ...; s2 = s1 + ...)") from None
    if error is not None:
        raise error
    return outcome["value"]


def deepest_expression(fn):
    """(file, line, depth) of the most deeply nested node of ``fn``'s source,
    found without recursion; the function's first line when its source cannot
    be read."""
    code = getattr(fn, "__code__", None)
    filename = getattr(code, "co_filename", None)
    first = getattr(code, "co_firstlineno", None)
    try:
        filename, lines, first = function_source(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (TangentCkptError, AttributeError, SyntaxError, RecursionError, MemoryError):
        return filename, first, "many"
    best = (0, 1)
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        line = getattr(node, "lineno", None)
        if line is not None and depth > best[0]:
            best = (depth, line)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return filename, first + best[1] - 1, best[0]
