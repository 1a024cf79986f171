"""An error raised while a generated gradient runs, placed at the user's line.

Generated code fails where the user's code would: a shape mismatch inside a
loop step, an ``IndexError`` in an adjoint, a refusal by a runtime helper that
only sees values (a subscript write whose index array names an element twice,
found by the reverse sweep's ``rt.setitem_adjoint_value``).  Its traceback ends
in generated code (``File "<tangent_ckpt dloss #1>", line 4, in loop3_step``),
which the user did not write.  Emit keeps, as data, which user line each
generated statement computes (``CompiledGradient.line_table``); the innermost
generated frame of the traceback is looked up there:

- a bare ``TangentCkptError`` (a runtime refusal) becomes a ``TransformError``
  at the user's line, as a compile-time refusal is;
- any other exception keeps its type (``except ValueError`` still works) and
  gets a note naming the user's file:line and its text, and the generated
  statement (``BaseException.add_note``, Python 3.11+).
"""

import linecache
import sys
import weakref

from tangent_ckpt.errors import TangentCkptError, TransformError, at_user_line, place

GENERATED = "<tangent_ckpt"  # how the file names of generated gradients begin

# generated file name -> its CompiledGradient (emit registers each; weak: a
# gradient that is garbage takes its entry with it)
_COMPILED = weakref.WeakValueDictionary()


def register(compiled):
    """Make ``compiled``'s line table findable from its frames' file name."""
    _COMPILED[compiled.filename] = compiled


def placed_at_user_line(error):
    """``error``, placed at the user's line of the innermost generated statement
    that raised it (see the module's docstring); ``error`` itself when no
    generated frame raised it or its line is not known."""
    if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit: as they are
        return error
    origin = _origin(error.__traceback__)
    if origin is None:
        return error
    user_file, user_line, generated = origin
    if type(error) is TangentCkptError:
        placed = TransformError(str(error), filename=user_file, lineno=user_line.line,
                                construct="run-time refusal")
        placed.__cause__ = error
        return at_user_line(placed)
    note = _note(user_file, user_line, generated)
    if note not in getattr(error, "__notes__", ()):
        if sys.version_info >= (3, 11):
            error.add_note(note)
        else:  # pragma: no cover - older Pythons print no notes; keep them readable
            error.__notes__ = [*getattr(error, "__notes__", ()), note]
    return error


def _origin(tb):
    """(user file, UserLine, (generated file, line, function)) of the innermost
    generated frame in ``tb`` that the line tables know, or None."""
    found = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith(GENERATED):
            found = (code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    if found is None:
        return None
    filename, lineno, _ = found
    user_line = None
    # a gradient of generated code (hvp: the gradient of the tangent-linear
    # function) maps to that code's lines, and those to the user's
    while filename.startswith(GENERATED):
        compiled = _COMPILED.get(filename)
        if compiled is None:
            return None
        user_line = compiled.line_table.get(lineno if user_line is None else user_line.line)
        if user_line is None:
            return None
        filename = compiled.user_file
    return filename, user_line, found


def _note(user_file, user_line, generated):
    what = " (in that line's adjoint)" if user_line.adjoint else ""
    text = linecache.getline(user_file, user_line.line).strip()
    gen_file, gen_line, gen_function = generated
    gen_text = linecache.getline(gen_file, gen_line).strip()
    lines = [f"in the gradient, at {place(user_file, user_line.line)}{what}:"]
    if text:
        lines.append(f"    {text}")
    lines.append(f"in the generated {gen_function}, line {gen_line}"
                 + (f": {gen_text}" if gen_text else "")
                 + " (the gradient's .source shows the generated code)")
    return "\n".join(lines)
