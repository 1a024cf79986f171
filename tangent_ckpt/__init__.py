"""tangent_ckpt: source-to-source reverse-mode AD for NumPy with optimal loop checkpointing."""

__version__ = "0.1.0"

from tangent_ckpt.errors import (  # noqa: F401
    TangentCkptError, TransformError, UnsupportedSyntaxError, UnsupportedFunctionError,
    SourceUnavailableError, WrtError, CheckpointError, NondeterministicStepError, OptionError,
    OutputAdjointError,
    SnapshotStoreError,
)
from tangent_ckpt.adjoints.registry import register_adjoint, register_tangent  # noqa: F401
from tangent_ckpt.runtime.profiler import profile  # noqa: F401,E402
from tangent_ckpt.runtime.store_io import SnapshotStore  # noqa: F401,E402
from tangent_ckpt.runtime.savings import (  # noqa: F401,E402
    checkpointed_loop, compute_checkpoint_positions, get_memory_savings,
    estimate_checkpoint_savings, should_checkpoint,
)
from tangent_ckpt.api import (clear_cache, grad, value_and_grad,  # noqa: F401,E402
                              grad_with_checkpointing, source)
from tangent_ckpt.flatten import ravel  # noqa: F401,E402
from tangent_ckpt.second_order import hessian, hvp, jvp  # noqa: F401,E402
from tangent_ckpt.markers import checkpoint, checkpoint_scope, custom_adjoint  # noqa: F401,E402

__all__ = [
    # differentiation
    "grad", "value_and_grad", "grad_with_checkpointing", "source", "clear_cache",
    # forward mode and second order
    "jvp", "hvp", "hessian", "register_tangent",
    # parameters <-> one flat vector (scipy.optimize)
    "ravel",
    # checkpointing inside a differentiated function
    "checkpoint", "checkpoint_scope", "custom_adjoint", "register_adjoint",
    # profiling and the checkpointing helpers
    "profile", "checkpointed_loop", "compute_checkpoint_positions", "get_memory_savings",
    "estimate_checkpoint_savings", "should_checkpoint", "SnapshotStore",
    # errors
    "TangentCkptError", "TransformError", "UnsupportedSyntaxError", "UnsupportedFunctionError",
    "SourceUnavailableError", "WrtError", "CheckpointError", "NondeterministicStepError",
    "OptionError", "OutputAdjointError", "SnapshotStoreError",
]
