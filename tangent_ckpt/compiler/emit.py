"""Emit: the one place generated code becomes text, and the text a function.

Statements are stdlib ``ast`` trees printed with :func:`ast.unparse` (standard
library, one line per statement, never wrapped); blocks, comments and the
``# line N: ...`` notes that tie generated code to the user's lines are laid
out here.  The source is compiled once and run in ``{np, rt, bindings}``.
"""

import ast
import itertools
import linecache
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tangent_ckpt import runtime
from tangent_ckpt.compiler.code import Blank, Block, Comment, Line
from tangent_ckpt.compiler.syntax import copy_tree
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


def emit(code, function, bindings, wrt_names):
    """Emit.  Takes the packaged :class:`GradientCode` of ``function`` and the
    global bindings its code reads; gives a :class:`CompiledGradient`: the source,
    printed once, and the function it defines."""
    source = "\n\n\n".join(render(d, line_texts=function.line_texts)
                            for d in code.definitions) + "\n"
    namespace = {"np": np, "rt": runtime}
    namespace.update(bindings)
    filename = f"<tangent_ckpt {code.name} #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        compiled = compile(source, filename, "exec")
    except SyntaxError as exc:  # pragma: no cover - a compiler bug, reported with the text
        raise TransformError(f"internal error: generated code does not compile: {exc}\n{source}")
    exec(compiled, namespace)
    return CompiledGradient(source, namespace[code.name], namespace, code.name, code.params,
                            wrt_names, function.result, code.seed)


class _Plain(ast.NodeTransformer):
    """HelperCall -> ast.Call (``ast.unparse`` dispatches on the class name)."""

    def visit_HelperCall(self, node):  # noqa: N802
        self.generic_visit(node)
        return ast.Call(func=node.func, args=node.args, keywords=node.keywords)


def unparse(node):
    """Python source of one expression or statement."""
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts:
        return "return " + ", ".join(unparse(e) for e in node.value.elts)
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Yield):
        value = node.value.value
        text = unparse(value) if value is not None else "None"
        target = node.targets[0]
        targets = ", ".join(unparse(e) for e in target.elts) \
            if isinstance(target, ast.Tuple) else unparse(target)
        return f"{targets} = yield {text}"
    return ast.unparse(ast.fix_missing_locations(_Plain().visit(copy_tree(node))))


def header(block):
    """The first line of a block: ``if c:``, ``for t in range(n):``, ``else:``, ``def f(x):``."""
    head = block.head
    if head is None:
        return "else:"
    if isinstance(head, ast.If):
        return f"if {unparse(head.test)}:"
    if isinstance(head, ast.While):
        return f"while {unparse(head.test)}:"
    if isinstance(head, ast.For):
        return f"for {unparse(head.target)} in {unparse(head.iter)}:"
    if isinstance(head, ast.FunctionDef):
        return f"def {head.name}({unparse(head.args)}):"
    raise TypeError(head)


def render(items, indent="    ", level=0, line_texts=None):
    """Print code items; a comment with the user's line precedes each new line's group."""
    lines = []
    last = [None]

    def walk(items, level):
        for item in items:
            pad = indent * level
            if isinstance(item, Comment):
                lines.append(f"{pad}# {item.text}")
                last[0] = None
            elif isinstance(item, Blank):
                lines.append("")
                last[0] = None
            elif isinstance(item, Line):
                _note(item.line, item.adjoint, pad)
                if item.stmt is None:
                    lines.append(f"{pad}# {item.comment}")
                else:
                    text = unparse(item.stmt)
                    if item.comment:
                        text += f"  # {item.comment}"
                    lines.append(pad + text)
            elif isinstance(item, Block):
                if item.head is not None:
                    _note(item.line, item.adjoint, pad)
                lines.append(pad + header(item))
                last[0] = None
                if item.body:
                    walk(item.body, level + 1)
                else:
                    lines.append(pad + indent + "pass")
                last[0] = None

    def _note(line, adjoint, pad):
        if line is None or (line, adjoint) == last[0]:
            return
        last[0] = (line, adjoint)
        label = "adjoint of line" if adjoint else "line"
        text = (line_texts or {}).get(line, "").strip()
        lines.append(f"{pad}# {label} {line}: {text}" if text else f"{pad}# {label} {line}")

    walk(items, level)
    return "\n".join(lines)
