"""How gradients show themselves in Jupyter: highlighted code under a one-line
summary (function, wrt, each loop and how it is reversed).

Pygments highlights the code when it is installed (with inline styles, so no
stylesheet is needed); otherwise the code is an escaped ``<pre>`` block.
Nothing here changes the text: ``print(df.source)`` prints exactly the
generated source.
"""

import html
from typing import Iterable, Sequence, Tuple


def header(label: str, wrt_names: Sequence[str], loops: Iterable[Tuple[int, str]],
           return_value: bool = False) -> str:
    """``gradient of loss wrt W, b; loop line 6: Revolve schedule, 10 snapshots``."""
    what = "value and gradient" if return_value else "gradient"
    parts = [f"{what} of {label} wrt {', '.join(wrt_names)}"]
    loops = list(loops)
    parts += [f"loop line {line}: {how}" for line, how in loops] or ["no loops"]
    return "; ".join(parts)


def highlight_html(code: str) -> str:
    """``code`` as HTML: Pygments-highlighted when available, else a plain ``<pre>``.
    (Pygments is imported here, when a notebook first shows code, not with the package.)"""
    try:
        import pygments
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f"<pre>{html.escape(code)}</pre>"
    return pygments.highlight(code, PythonLexer(), HtmlFormatter(noclasses=True))


class GeneratedSource(str):
    """Generated source text (a ``str``: printing, comparing and slicing work as
    for any string) that Jupyter renders as highlighted code under ``header``."""

    header: str

    def __new__(cls, text: str, header: str = ""):
        self = super().__new__(cls, text)
        self.header = header
        return self

    def _repr_html_(self) -> str:
        return (f'<div class="tangent-ckpt-source"><p><b>{html.escape(self.header)}</b></p>'
                f"{highlight_html(str(self))}</div>")

    def _repr_markdown_(self) -> str:
        return f"**{self.header}**\n\n```python\n{self}```\n"

    def _repr_pretty_(self, printer, cycle):
        """The IPython terminal shows the code itself, not a quoted string."""
        printer.text(f"# {self.header}\n{self}")
