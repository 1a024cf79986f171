"""A refusal raised while a generated gradient runs, placed at the user's line.

The runtime's helpers refuse some values only when they see them (a subscript
write whose index array names an element twice, found by the reverse sweep's
``rt.setitem_adjoint_value``); they know nothing of the user's code.  The
generated code does: each of its statements follows a comment naming the
user's line (``# line 12: ...``, ``# adjoint of line 12: ...``).  The error is
given that line, as a compile-time refusal is.
"""

import linecache

from tangent_ckpt.errors import TangentCkptError, TransformError, at_user_line

GENERATED = "<tangent_ckpt"  # how the file names of generated gradients begin
_MARKS = ("# line ", "# adjoint of line ")


def placed_at_user_line(error, user_filename):
    """``error`` naming ``user_filename`` and the line of the generated statement
    that raised it (a ``TransformError``, still a ``TangentCkptError``); ``error``
    itself when it already names a place or no generated frame raised it."""
    if type(error) is not TangentCkptError or user_filename is None:
        return error
    line = _user_line(error.__traceback__)
    if line is None:
        return error
    placed = TransformError(str(error), filename=user_filename, lineno=line,
                            construct="run-time refusal")
    placed.__cause__ = error
    return at_user_line(placed)


def _user_line(tb):
    """The user's line named above the innermost generated statement in ``tb``."""
    where = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith(GENERATED):
            where = (code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    if where is None:
        return None
    lines = linecache.getlines(where[0])
    for text in reversed(lines[:where[1]]):
        text = text.strip()
        for mark in _MARKS:
            if text.startswith(mark):
                number = text[len(mark):].split(":", 1)[0]
                if number.isdigit():
                    return int(number)
    return None
