"""Parse: the source of a lambda, found by its code object.

``tc.grad`` takes lambdas written anywhere -- several on one line, inline in
a call, a list of them -- and each is told apart by where its bytecode comes
from (Python >= 3.11) or by its argument names.  The text around it is parsed
once per text (a module of many lambdas, each differentiated, parsed the whole
file per lambda before: ``benchmarks/compile_time.py --lambdas``).
"""

import copy
import functools
import linecache
import textwrap

import gast

from tangent_ckpt.errors import SourceUnavailableError


def lambda_as_function(fn, filename, lines, first, by_position=True):
    """The lambda ``fn`` as ``def lambda_fn(args): return body``.

    The lambda is identified by its code object, never as "the first lambda on
    its line": among the lambdas of its first line, the one whose body holds
    the source positions of its bytecode (Python >= 3.11), else the only one
    with its argument names.  In a source given by hand (``by_position``
    false) every lambda of the text is a candidate.  Returns the node and the
    lines it spans."""
    code = fn.__code__
    found = _lambdas_at(filename, lines, first, code.co_firstlineno if by_position else None)
    if found is None:
        raise SourceUnavailableError(
            "cannot parse the source around the lambda", filename=filename,
            lineno=code.co_firstlineno, construct="lambda", hint="write the function as a def")
    lam = _the_lambda(found, code, by_position)
    if lam is None:
        raise SourceUnavailableError(
            "cannot tell which lambda of this line it is", filename=filename,
            lineno=code.co_firstlineno, construct="lambda",
            hint="give each lambda its own line, or write it as a def")
    node = gast.FunctionDef(name="lambda_fn", args=lam.args, body=[gast.Return(value=lam.body)],
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])
    node.lineno = lam.lineno
    node.body[0].lineno = lam.lineno
    all_lines = linecache.getlines(filename) or []
    start, end = lam.lineno, getattr(lam, "end_lineno", None) or lam.lineno
    span = all_lines[start - 1:end] or lines[:1]
    return node, span, start


def _lambdas_at(filename, lines, first, lineno):
    """The lambdas that start on file line ``lineno``, with file positions: from
    the whole file when it parses, else from the block inspect found.  Each is
    a private copy (later stages may change the tree)."""
    whole = "".join(linecache.getlines(filename))
    for text, line_shift, col_shift in ((whole, 0, 0), _block(lines, first)):
        if not text:
            continue
        by_line = _lambdas_by_line(text)
        if by_line is None:
            continue
        candidates = [lam for lam in by_line.get(None, ())] if lineno is None else \
            list(by_line.get(lineno - line_shift, ()))
        found = []
        for node in candidates:
            node = copy.deepcopy(node)
            _shift_positions(node, line_shift, col_shift)
            found.append(node)
        if found:
            return found
    return None


@functools.lru_cache(maxsize=16)
def _lambdas_by_line(text):
    """{first line: the lambdas that start there, None: every lambda} of ``text``,
    parsed once per text: a file of many lambdas, each differentiated, parsed
    the whole file per lambda (quadratic, benchmarks/compile_time.py
    --lambdas); None when it does not parse."""
    try:
        tree = gast.parse(text)
    except SyntaxError:
        return None
    by_line = {None: []}
    for node in gast.walk(tree):
        if isinstance(node, gast.Lambda):
            by_line.setdefault(node.lineno, []).append(node)
            by_line[None].append(node)
    return by_line


def _block(lines, first):
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(lines[0]) - len(lines[0].lstrip()) if dedented != text and lines else 0
    return dedented, first - 1, indent


def _shift_positions(lam, line_shift, col_shift):
    for child in gast.walk(lam):
        for attr in ("lineno", "end_lineno"):
            if getattr(child, attr, None) is not None:
                setattr(child, attr, getattr(child, attr) + line_shift)
        for attr in ("col_offset", "end_col_offset"):
            if getattr(child, attr, None) is not None:
                setattr(child, attr, getattr(child, attr) + col_shift)


def _the_lambda(candidates, code, by_position):
    if len(candidates) == 1 and not by_position:
        return candidates[0]
    spans = _code_span(code) if by_position else None
    if spans is not None:
        (lo, hi) = spans
        holding = [lam for lam in candidates
                   if (lam.body.lineno, lam.body.col_offset) <= lo and
                   hi <= (lam.body.end_lineno, lam.body.end_col_offset)]
        if holding:  # the innermost lambda whose body holds all of the code
            return min(holding, key=lambda lam: (lam.body.end_lineno - lam.body.lineno,
                                                 lam.body.end_col_offset - lam.body.col_offset))
        return None
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    same = [lam for lam in candidates if tuple(_arg_names(lam.args)) == tuple(names)]
    return same[0] if len(same) == 1 else None


def _code_span(code):
    """(first, last) source position of ``code``'s instructions, or None before 3.11."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return None
    starts, ends = [], []
    for line, end_line, col, end_col in positions():
        if None in (line, end_line, col, end_col) or (line, col) == (end_line, end_col):
            continue  # no position, or the empty one of the RESUME instruction
        starts.append((line, col))
        ends.append((end_line, end_col))
    if not starts:
        return None
    return min(starts), max(ends)


def _arg_names(args):
    every = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
    return [a.id for a in every]
