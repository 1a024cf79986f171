"""``backend="numba"``: Numba twins of the runtime helpers and the compiled sweep."""
