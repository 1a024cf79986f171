"""The run-time support that generated gradients import as ``rt``.

NumPy only: this package never imports the compiler, so generated source can be
shipped with the runtime alone.
"""

from tangent_ckpt.runtime.numpy_adjoints import *  # noqa: F401,F403

