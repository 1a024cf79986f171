"""Code backends after packaging: the Numba code pass."""
