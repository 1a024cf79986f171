"""Progress of long checkpointed loops.

A checkpointed gradient of 100 000 steps runs for minutes. With progress on,
each checkpointed loop shows two bars, one for its forward sweep and one for
its reverse sweep. Each bar gives the steps done, the steps recomputed and the
snapshots held. The bars come from ``tqdm`` when it is installed (its notebook
bar in Jupyter when ``ipywidgets`` is installed too, else its text bar); otherwise a plain counter is rewritten
in place on one stderr line.

Progress is on when either of these is true:

- the gradient was made with ``progress=True``. The generated code then runs
  inside :func:`reporting`;
- the environment variable ``TANGENT_CKPT_PROGRESS`` is set to ``1``.

When progress is off, nothing is printed and the driver's cost is one
attribute test per schedule action.
"""

import contextlib
import importlib.util
import os
import sys
import threading
import time

_local = threading.local()

#: seconds between two redraws of the plain counter
REFRESH = 0.2


def enabled():
    """Whether loops started now report progress."""
    forced = getattr(_local, "forced", None)
    if forced is not None:
        return forced
    return os.environ.get("TANGENT_CKPT_PROGRESS", "") not in ("", "0")


@contextlib.contextmanager
def reporting(on=True):
    """Turn progress on (or off) for the loops run inside this block, in this thread."""
    saved = getattr(_local, "forced", None)
    _local.forced = bool(on)
    try:
        yield
    finally:
        _local.forced = saved


def _tqdm():
    """tqdm's bar class (the optional extra ``progress``), or None: its notebook
    bar in a Jupyter kernel that has ``ipywidgets``, else its text bar.  (Not
    ``tqdm.auto``: without ipywidgets it warns "IProgress not found" on every
    gradient before it falls back to the text bar.)"""
    try:
        from tqdm.std import tqdm  # noqa: PLC0415 - optional
    except Exception:  # noqa: BLE001 - not installed, or broken: use the plain counter
        return None
    if _in_kernel() and importlib.util.find_spec("ipywidgets") is not None:
        try:
            from tqdm.notebook import tqdm as notebook_bar  # noqa: PLC0415
            return notebook_bar
        except Exception:  # noqa: BLE001 - an ipywidgets tqdm cannot use
            pass
    return tqdm


def _in_kernel():
    """Whether this process is a Jupyter kernel (IPython is never imported here)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    try:
        return shell is not None and "IPKernelApp" in shell.config
    except Exception:  # noqa: BLE001 - an unusual shell
        return False


class LoopProgress:
    """The bar of one sweep of one loop: ``advance`` for steps done, ``recompute``
    for steps run again, ``snapshots`` for the snapshots held."""

    def __init__(self, name, sweep, total, stream=None):
        self.name, self.sweep, self.total = name, sweep, total
        self.done = 0
        self.recomputed = 0
        self.held = 0
        self._stream = stream if stream is not None else sys.stderr
        self._last = 0.0
        tqdm = _tqdm() if stream is None else None
        self._bar = None
        if tqdm is not None:
            self._bar = tqdm(total=total, desc=f"{name} {sweep}", unit="step", leave=False,
                             file=self._stream)

    def advance(self, steps=1):
        self.done += steps
        self._show()

    def ran(self, steps):
        """Plain steps run: progress in the forward sweep, recomputation in the reverse."""
        if self.sweep == "forward":
            self.advance(steps)
        else:
            self.recompute(steps)

    def recompute(self, steps):
        self.recomputed += steps
        self._show()

    def snapshots(self, held):
        self.held = held

    def _text(self):
        total = "?" if self.total is None else self.total
        return (f"{self.name} {self.sweep}: {self.done}/{total} steps, "
                f"{self.recomputed} recomputed, {self.held} snapshots")

    def _show(self, final=False):
        now = time.monotonic()
        if not final and now - self._last < REFRESH:
            return
        self._last = now
        if self._bar is not None:
            self._bar.n = self.done
            self._bar.set_postfix(recomputed=self.recomputed, snapshots=self.held,
                                  refresh=False)
            self._bar.refresh()
        else:
            self._stream.write("\r" + self._text())
            self._stream.flush()

    def close(self):
        self._show(final=True)
        if self._bar is not None:
            self._bar.close()
        else:
            self._stream.write("\n")
            self._stream.flush()


def start(name, sweep, total):
    """A :class:`LoopProgress` when progress is on, else ``None``."""
    return LoopProgress(name, sweep, total) if enabled() else None
