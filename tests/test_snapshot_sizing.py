"""How a memory budget prices one step (runtime/scheduling/snapshot_sizing.py)."""

import numpy as np

from tangent_ckpt.runtime.scheduling.snapshot_sizing import (
    ASSUMED_STEP_STATES, measure_step_bytes,
)


class DeviceArray:
    """The least of a GPU array (CuPy's) the sizing reads: NumPy's dispatch
    protocols, a shape, a dtype, a byte count and the CUDA array interface."""

    __array_function__ = __array_ufunc__ = None

    def __init__(self, n):
        self.shape, self.dtype, self.nbytes = (n,), np.dtype(float), 8 * n
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": "<f8"}


def test_a_device_states_step_is_priced_in_device_memory_not_host_peaks():
    """tracemalloc sees only host memory: on a GPU a first step's host peak is the
    library compiling its kernels (measured on an H200 with CuPy: 18 states on the
    first call, 0.01 after), which a budget of device memory does not pay for."""
    state = DeviceArray(1000)

    def step(i, h):
        np.ones(100_000).sum()  # 800 kB of host memory, 100 states
        return h

    forward, adjoint, probes = measure_step_bytes(step, 0, state, (), None)
    assert forward == adjoint == ASSUMED_STEP_STATES * state.nbytes and probes == 1


def test_a_host_states_step_is_priced_by_its_measured_peak():
    state = np.zeros(1000)

    def step(i, h):
        return h + np.ones(100_000)[:1000]

    forward, adjoint, _ = measure_step_bytes(step, 0, state, (), None)
    assert forward >= 800_000 and adjoint == 2 * forward
