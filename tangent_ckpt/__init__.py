"""tangent_ckpt: source-to-source reverse-mode AD for NumPy with optimal loop checkpointing."""

__version__ = "0.1.0"

from tangent_ckpt.errors import (  # noqa: F401
    TangentCkptError, TransformError, UnsupportedSyntaxError, UnsupportedFunctionError,
    SourceUnavailableError, WrtError, CheckpointError, NondeterministicStepError,
)
from tangent_ckpt.adjoints.registry import register_adjoint  # noqa: F401
