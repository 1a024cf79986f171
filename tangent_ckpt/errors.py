"""Errors raised by tangent_ckpt.

Every error about the user's code names the file, the line and the construct,
and says what to do about it.  In IPython and Jupyter the place is named the
way IPython names it (``Cell In[10], line 2``), and :func:`at_user_line` gives
an error a traceback that ends in the user's own line instead of the
compiler's frames (``TANGENT_CKPT_DEBUG=1`` keeps the compiler's frames).
"""

import linecache
import os
import sys


class TangentCkptError(Exception):
    """Base class of every error raised by tangent_ckpt."""


class TransformError(TangentCkptError):
    """The user's function cannot be differentiated as written.

    Attributes: ``filename``, ``lineno``, ``construct`` (a short name of what was
    found) and ``hint`` (what to do).  ``str(err)`` reads
    ``file.py:12: <message> (<hint>)``.
    """

    def __init__(self, message, filename=None, lineno=None, construct=None, hint=None):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.construct = construct
        self.hint = hint
        super().__init__(self._render())

    def _render(self):
        where = ""
        if self.filename is not None:
            where = place(self.filename, self.lineno) + ": "
        text = where + self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class UnsupportedSyntaxError(TransformError):
    """A Python construct the transformer does not handle (``try``, ``yield``, ...)."""


class UnsupportedFunctionError(TransformError):
    """A call to a function that has no adjoint rule and no source to differentiate."""


class SourceUnavailableError(TransformError):
    """The function has no retrievable source (a REPL lambda, a builtin, C code)."""


class WrtError(TangentCkptError, TypeError):
    """``wrt`` names an argument that cannot be differentiated (integer, object, out of range)."""


class CheckpointError(TangentCkptError, ValueError):
    """Bad checkpointing options: negative snapshots, a memory budget below one state, ..."""


class NondeterministicStepError(TangentCkptError):
    """``verify=True`` found that recomputing a loop step did not reproduce the stored state."""


class SnapshotStoreError(CheckpointError):
    """A snapshot could not be written or read back intact: a full disk, a store that
    is missing or unreachable, a snapshot deleted or corrupted (checksum mismatch)."""


class OptionError(TangentCkptError, TypeError):
    """An option ``grad``/``value_and_grad`` does not know (a misspelling: the
    message names the closest valid option)."""


class BackendError(TangentCkptError):
    """What the array library of the arguments (CuPy, Dask) cannot do, or does
    differently from NumPy in a way the gradient cannot follow; the message
    names the function or construct and the library (docs/backends.md)."""


class OutputAdjointError(TangentCkptError, ValueError):
    """The output adjoint given to a gradient function does not have the
    output's shape (a scalar always fits)."""


def place(filename, lineno=None):
    """``file.py:12``, or ``Cell In[10], line 2`` for a cell of the running IPython."""
    cell = _ipython_cell(filename)
    if cell is not None:
        return f"Cell In[{cell}], line {lineno}" if lineno else f"Cell In[{cell}]"
    return f"{filename}:{lineno}" if lineno else str(filename)


def _ipython_cell(filename):
    """The execution count of the IPython cell compiled under ``filename``, or None.
    IPython is never imported here: only a running one is asked."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if not isinstance(names, dict):
        return None
    return names.get(filename)


def debugging():
    """True when ``TANGENT_CKPT_DEBUG`` asks for the compiler's own frames."""
    return os.environ.get("TANGENT_CKPT_DEBUG", "") not in ("", "0")


def at_user_line(error, name="<module>"):
    """``error`` with a traceback of one frame: the user's line it names (running
    function ``name``), so that a traceback shows the user's code -- in a notebook,
    the cell -- instead of the compiler's frames.  Without a readable line the
    traceback is simply dropped.  With ``TANGENT_CKPT_DEBUG=1`` nothing changes."""
    if debugging():
        return error
    filename = getattr(error, "filename", None)
    lineno = getattr(error, "lineno", None)
    text = linecache.getline(filename, lineno) if filename and lineno else ""
    if not text.strip():
        return error.with_traceback(None)
    # a raise statement at the user's line (spanning it, so no carets are drawn
    # under a part of it), compiled under the user's file name and run once
    indent = len(text) - len(text.lstrip())
    if indent and lineno > 1:
        stub = "\n" * (lineno - 2) + "if 1:\n" + " " * indent + "raise (\n_error_)"
    else:
        stub = "\n" * (lineno - 1) + "raise (\n_error_)"
    code = compile(stub, filename, "exec").replace(co_name=name)
    try:
        exec(code, {"_error_": error.with_traceback(None)})
    except BaseException as raised:  # noqa: B902 - it is `error` itself
        return raised.with_traceback(raised.__traceback__.tb_next)
    return error  # pragma: no cover - the stub always raises
