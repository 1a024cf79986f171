"""The user's code as a stage before lowering leaves it, as text for a person:
``tangent-ckpt dump FILE.py:FUNC --stage desugar``.  Only this and
``rendering.py`` turn trees into text; nothing reads this text back."""

import ast

import gast


def desugared_text(fenced_function, helpers):
    """The source of the differentiated function after desugar (writes through
    views and aliases explicit, loops over tuples of written arrays unrolled),
    then each user function the fence prepared for the lowering to inline:
    ``helpers`` is ``[(label, parsed or None, error or None)]``."""
    parts = [_source(fenced_function.node)]
    for label, parsed, error in helpers:
        if parsed is None or error is not None:
            what = f"refused where it is inlined: {error}" if error is not None else \
                "no source"
            parts.append(f"# {label}: {what}")
        else:
            parts.append(f"# {label}, as the lowering inlines it\n" + _source(parsed.node))
    return "\n\n\n".join(parts) + "\n"


def _source(node):
    tree = gast.gast_to_ast(node)
    return ast.unparse(ast.fix_missing_locations(tree))
