"""tangent_ckpt: source-to-source reverse-mode AD for NumPy with optimal loop checkpointing.

The differentiating entry points (``grad``, ``jvp``, ...) live in modules that
import the compiler; they are loaded when first named (``tc.grad``, ``from
tangent_ckpt import grad``: PEP 562), so that ``import tangent_ckpt.runtime`` --
all a dumped gradient module needs, and which runs this file first -- never
loads the compiler.
"""

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

from tangent_ckpt.errors import (  # noqa: F401
    TangentCkptError, TransformError, UnsupportedSyntaxError, UnsupportedFunctionError,
    SourceUnavailableError, WrtError, CheckpointError, NondeterministicStepError, OptionError,
    OutputAdjointError,
    SnapshotStoreError, BackendError,
)
from tangent_ckpt.adjoints.registry import register_adjoint, register_tangent  # noqa: F401
from tangent_ckpt.runtime.loops.profiler import profile  # noqa: F401,E402
from tangent_ckpt.runtime.stores.store_io import SnapshotStore  # noqa: F401,E402
from tangent_ckpt.runtime.scheduling.savings import (  # noqa: F401,E402
    checkpointed_loop, compute_checkpoint_positions, get_memory_savings,
    estimate_checkpoint_savings, should_checkpoint,
)
from tangent_ckpt.flatten import ravel  # noqa: F401,E402
from tangent_ckpt.markers import checkpoint, checkpoint_scope, custom_adjoint  # noqa: F401,E402

# public name -> the module that defines it, imported on first use
_COMPILING = {
    "grad": "tangent_ckpt.api", "value_and_grad": "tangent_ckpt.api",
    "grad_with_checkpointing": "tangent_ckpt.api", "source": "tangent_ckpt.api",
    "clear_cache": "tangent_ckpt.api",
    "jvp": "tangent_ckpt.second_order", "hvp": "tangent_ckpt.second_order",
    "hessian": "tangent_ckpt.second_order",
    "check_grad": "tangent_ckpt.checking", "GradCheckReport": "tangent_ckpt.checking",
    "GradCheckError": "tangent_ckpt.checking",
}

if TYPE_CHECKING:  # what type checkers see: the same names, imported eagerly
    from tangent_ckpt.api import (clear_cache, grad, value_and_grad,  # noqa: F401
                                  grad_with_checkpointing, source)
    from tangent_ckpt.second_order import hessian, hvp, jvp  # noqa: F401
    from tangent_ckpt.checking import check_grad, GradCheckError, GradCheckReport  # noqa: F401


def __getattr__(name):
    """``tc.grad`` and the other entry points that load the compiler (PEP 562)."""
    module = _COMPILING.get(name)
    if module is None:
        raise AttributeError(f"module 'tangent_ckpt' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups find it without this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_COMPILING))


__all__ = [
    # differentiation
    "grad", "value_and_grad", "grad_with_checkpointing", "source", "clear_cache",
    # forward mode and second order
    "jvp", "hvp", "hessian", "register_tangent",
    # checking derivatives against finite differences
    "check_grad", "GradCheckReport", "GradCheckError",
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
    "OptionError", "OutputAdjointError", "SnapshotStoreError", "BackendError",
]
