"""Names in generated code: fresh names that collide with nothing, and how
generated code spells a NumPy function (``np.tanh``, ``np.linalg.norm``)."""

import numpy as np


def _numpy_paths():
    paths = {}
    for modname, module in (("np.linalg", np.linalg), ("np.fft", np.fft), ("np", np)):
        for attr in dir(module):
            try:
                obj = getattr(module, attr)
            except Exception:  # pragma: no cover - deprecated attributes
                continue
            if callable(obj) and not isinstance(obj, type):
                try:
                    paths[id(obj)] = f"{modname}.{attr}"
                except TypeError:
                    pass
    return paths


_NUMPY_PATHS = None


def numpy_path(obj):
    """``'np.tanh'`` for ``np.tanh``; ``None`` for objects outside NumPy."""
    global _NUMPY_PATHS
    if _NUMPY_PATHS is None:
        _NUMPY_PATHS = _numpy_paths()
    path = _NUMPY_PATHS.get(id(obj))
    if path is not None:
        head, _, attr = path.rpartition(".")
        module = {"np": np, "np.linalg": np.linalg, "np.fft": np.fft}[head]
        if getattr(module, attr, None) is obj:
            return path
    return None


class Namer:
    """Hands out names no user variable and no other generated name uses."""

    def __init__(self, reserved=()):
        self.used = set(reserved)

    def reserve(self, names):
        self.used.update(names)

    def fresh(self, base):
        base = base.strip("_") or "v"
        if base not in self.used:
            self.used.add(base)
            return base
        k = 2
        while f"{base}_{k}" in self.used:
            k += 1
        name = f"{base}_{k}"
        self.used.add(name)
        return name
