"""Errors raised by tangent_ckpt.

Every error about the user's code names the file, the line and the construct,
and says what to do about it.
"""


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
            where = f"{self.filename}:{self.lineno}: " if self.lineno else f"{self.filename}: "
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
