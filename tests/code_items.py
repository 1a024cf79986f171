"""Test helper: generated-code items written as text in a test, made into the
syntax trees the compiler works on (``rt.name(...)`` calls become HelperCalls
and ``np.tanh`` reads NumPy's id, as the compiler builds them), and printed back
for assertions."""

import ast

from tangent_ckpt import runtime
from tangent_ckpt.compiler import syntax as sx
from tangent_ckpt.compiler.code import Block, Line
from tangent_ckpt.compiler.emit.rendering import header, unparse


class _Helpers(ast.NodeTransformer):
    def visit_Call(self, node):  # noqa: N802
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                f.value.id == "rt" and hasattr(runtime, f.attr):
            return sx.rt(f.attr, *node.args, **{k.arg: k.value for k in node.keywords})
        return node

    def visit_Attribute(self, node):  # noqa: N802
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "np":
            node.value = sx.numpy_module()
        return node


def stmt(text):
    return _Helpers().visit(ast.parse(text).body[0])


def line(text):
    return Line(stmt(text))


def lines(*texts):
    return [line(t) for t in texts]


def block(head, body):
    """``block("if c:", [...])``; ``block("else:", [...])``."""
    if head == "else:":
        return Block(None, body)
    node = stmt(head + "\n    pass")
    node.body = []
    return Block(node, body)


def text(item):
    return header(item) if isinstance(item, Block) else unparse(item.stmt)


def texts(items):
    return [text(i) for i in items]
