"""The run-time support that generated gradients import as ``rt``.

NumPy only: this package never imports the compiler, so generated source can be
shipped with the runtime alone.
"""

from tangent_ckpt.runtime.primitive_adjoints.numpy_adjoints import *  # noqa: F401,F403
from tangent_ckpt.runtime.primitive_adjoints.linalg_adjoints import *  # noqa: F401,F403
from tangent_ckpt.runtime.primitive_adjoints.array_adjoints import *  # noqa: F401,F403
from tangent_ckpt.runtime.rows import *  # noqa: F401,F403
from tangent_ckpt.runtime.keyed import *  # noqa: F401,F403
from tangent_ckpt.runtime.primitive_adjoints.scatter_adjoints import *  # noqa: F401,F403
from tangent_ckpt.runtime.primitive_adjoints.complex_adjoints import *  # noqa: F401,F403
from tangent_ckpt.runtime.primitive_adjoints.fft_adjoints import *  # noqa: F401,F403
from tangent_ckpt.runtime.primitive_adjoints.signal_adjoints import *  # noqa: F401,F403
from tangent_ckpt.runtime.primitive_adjoints.last_axis import *  # noqa: F401,F403
from tangent_ckpt.runtime.primitive_adjoints.selection_adjoints import *  # noqa: F401,F403
try:  # scipy.special, scipy.signal and scipy.spatial rules, only where SciPy is installed
    from tangent_ckpt.runtime.primitive_adjoints.special_adjoints import *  # noqa: F401,F403
    from tangent_ckpt.runtime.primitive_adjoints.scipy_adjoints import *  # noqa: F401,F403
except ImportError:  # pragma: no cover - SciPy is an optional extra
    pass

from tangent_ckpt.runtime.loops.driver import CheckpointedLoop, run_schedule  # noqa: F401,E402
from tangent_ckpt.runtime.loops.replays import replaying  # noqa: F401,E402
from tangent_ckpt.runtime.memory import parse_memory  # noqa: F401,E402
from tangent_ckpt.runtime.stores.snapshots import tree_copy, tree_nbytes  # noqa: F401,E402
from tangent_ckpt.runtime.jit.numba_sweep import store_snapshot, restore_snapshot  # noqa: F401,E402
from tangent_ckpt.runtime.jit.numba_writes import assign_at  # noqa: F401,E402
from tangent_ckpt.runtime.stores.store_io import SnapshotStore  # noqa: F401,E402
from tangent_ckpt.runtime.scheduling import schedules  # noqa: F401,E402
from tangent_ckpt.runtime.loops import profiler  # noqa: F401,E402
from tangent_ckpt.runtime.custom_rules import adjoint_parts  # noqa: F401,E402
from tangent_ckpt.runtime.assertions import check, check_out_cast, raise_error  # noqa: F401,E402
from tangent_ckpt.runtime.assertions import UNBOUND, check_bound  # noqa: F401,E402
from tangent_ckpt.runtime.assertions import check_structure  # noqa: F401,E402
from tangent_ckpt.runtime.assertions import require_numpy_operand  # noqa: F401,E402
from tangent_ckpt.runtime.loops.segments import Segment, MemoryPlan  # noqa: F401,E402
from tangent_ckpt.runtime.alias_guards import distinct_arrays, not_a_view  # noqa: F401,E402
from tangent_ckpt.runtime.alias_guards import distinct_items  # noqa: F401,E402
from tangent_ckpt.runtime.alias_guards import require_array  # noqa: F401,E402
from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import max_position, min_position  # noqa: F401,E402
from tangent_ckpt.runtime.primitive_adjoints.extreme_positions import (  # noqa: F401,E402
    item_at, item_at_adjoint, sorted_order)
from tangent_ckpt.runtime.alias_guards import refuse_outside_in_place  # noqa: F401,E402
