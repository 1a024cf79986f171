"""Shared test helper: where a marker stands in a function's source file.

    from source_lines import line_of
    line_of(fn, "# WRITE")   # the file line of the first line of fn containing the text
"""

import inspect


def line_of(fn, text):
    """The file line of the first line of ``fn`` containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return first + k
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def names_line(message, filename, line):
    """Does the error ``message`` point at ``filename``:``line``, either there or
    (a helper desugar inlined, refused at its own line) as the line calling it?
    ``filename`` is the file's base name (``test_views.py``)."""
    return f"{filename}:{line}:" in message or f"called at line {line})" in message or \
        f"called at line {line}," in message
