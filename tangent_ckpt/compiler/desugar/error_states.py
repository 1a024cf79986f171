"""Desugar: ``with np.errstate(divide="ignore"): body`` as ``body``.

``np.errstate`` only decides what a floating-point error does (warn, stay
silent, raise, call a function); it never changes a computed value.  Where each
setting it names is ``"ignore"`` or ``"warn"``, the block computes exactly what
its body computes, so the gradient runs the body's statements (the only
difference: NumPy's floating-point warnings follow the caller's setting while the
gradient runs).  A setting that raises or calls (``"raise"``, ``"call"``,
``"print"``, ``"log"``), one not a constant, an ``as`` target or a second item keep
the ``with``, which the lowering refuses with its line: there the error changes
what the code does."""

import gast
import numpy as np

from tangent_ckpt.compiler.desugar.local_bindings import local_names
from tangent_ckpt.compiler.desugar.view_facts import resolve_dotted

_SILENT = ("ignore", "warn")


def drop_silent_error_states(parsed, fnode=None):
    """Rewrite, in ``fnode`` (default ``parsed.node``, whose names ``parsed``
    resolves), each ``with np.errstate(...)`` that only silences or warns as its body."""
    fnode = parsed.node if fnode is None else fnode
    blocks = [n for n in gast.walk(fnode) if isinstance(n, gast.With)]
    if not blocks:
        return
    local = local_names(fnode)
    silent = {id(n) for n in blocks if _silent(n, parsed.resolve, local)}
    if silent:
        _Unwrap(silent).visit(fnode)


def _silent(node, resolve, local):
    if len(node.items) != 1 or node.items[0].optional_vars is not None:
        return False
    call = node.items[0].context_expr
    return isinstance(call, gast.Call) and not call.args and \
        resolve_dotted(call.func, resolve, local) is np.errstate and \
        all(k.arg is not None and isinstance(k.value, gast.Constant) and
            k.value.value in _SILENT for k in call.keywords)


class _Unwrap(gast.NodeTransformer):
    def __init__(self, silent):
        self.silent = silent

    def visit_With(self, node):
        self.generic_visit(node)
        return node.body if id(node) in self.silent else node
