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
