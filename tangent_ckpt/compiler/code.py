"""The generated program before it is printed: lines, blocks and comments.

``Save``/``Restore`` mark where an overwritten value is kept for the reverse
sweep (a local variable outside loops, the tape inside them); they are dropped
in pairs when the reverse sweep never reads the variable.
"""

import ast
from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class Line:
    text: str
    line: Optional[int] = None
    adjoint: bool = False


@dataclass
class Block:
    header: str  # "for t in range(n):", "if cond:", "else:", "def f(x):"
    body: List = field(default_factory=list)
    line: Optional[int] = None
    adjoint: bool = False


@dataclass
class Comment:
    text: str


@dataclass
class Blank:
    pass


@dataclass
class Save:
    var: str
    slot: str  # local variable name, or the tape's name when tape=True
    tape: bool = False
    line: Optional[int] = None


@dataclass
class Restore:
    var: str
    slot: str
    tape: bool = False
    line: Optional[int] = None


def names_read(items):
    """Every name loaded by the code (Save/Restore excluded)."""
    names = set()
    for item in items:
        if isinstance(item, Line):
            names |= _loads(item.text)
        elif isinstance(item, Block):
            header = item.header
            if header.startswith(("def ", "else")):
                pass
            else:
                names |= _loads(header + "\n    pass")
            names |= names_read(item.body)
    return names


def _loads(text):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _flatten(items):
    for item in items:
        if isinstance(item, Block):
            yield ("reads", _loads(item.header + "\n    pass")
                   if not item.header.startswith(("def ", "else")) else set())
            yield from _flatten(item.body)
        elif isinstance(item, Line):
            yield ("reads", _loads(item.text))
        elif isinstance(item, Restore):
            yield ("restore", item)


def live_restores(items):
    """Slots of local (non-tape) restores whose value is read before the variable
    is restored again, in the order the reverse sweep runs (textual order; a
    restore inside one branch counts reads in the other: conservative)."""
    flat = list(_flatten(items))
    live = set()
    for k, (kind, payload) in enumerate(flat):
        if kind != "restore" or payload.tape:
            continue
        for kind2, later in flat[k + 1:]:
            if kind2 == "restore" and later.var == payload.var:
                break
            if kind2 == "reads" and payload.var in later:
                live.add(payload.slot)
                break
    return live


def resolve_saves(items, needed, live_slots=None):
    """Replace Save/Restore by real statements for needed variables, drop the rest.

    A tape push/pop is kept when the reverse sweep reads the variable anywhere
    (``needed``); a local save when its restore is read (``live_slots``)."""
    out = []
    for item in items:
        if isinstance(item, (Save, Restore)):
            if item.var not in needed:
                continue
            if live_slots is not None and not item.tape and item.slot not in live_slots:
                continue
            if isinstance(item, Save):
                text = f"{item.slot}.append({item.var})" if item.tape else f"{item.slot} = {item.var}"
            else:
                text = f"{item.var} = {item.slot}.pop()" if item.tape else f"{item.var} = {item.slot}"
            out.append(Line(text, item.line, isinstance(item, Restore)))
        elif isinstance(item, Block):
            out.append(Block(item.header, resolve_saves(item.body, needed, live_slots),
                             item.line, item.adjoint))
        else:
            out.append(item)
    return out


def used_slots(items):
    """Names of save slots and tapes that survive ``resolve_saves``."""
    slots = set()
    for item in items:
        if isinstance(item, Line):
            slots |= _loads(item.text)
        elif isinstance(item, Block):
            slots |= used_slots(item.body)
    return slots


def render(items, indent="    ", level=0, line_texts=None):
    """Print code items; a comment with the user's line precedes each new line's group."""
    lines = []
    last = [None]

    def walk(items, level):
        for item in items:
            pad = indent * level
            if isinstance(item, Comment):
                lines.append(f"{pad}# {item.text}")
                last[0] = None
            elif isinstance(item, Blank):
                lines.append("")
                last[0] = None
            elif isinstance(item, Line):
                _note(item.line, item.adjoint, pad)
                lines.append(pad + item.text)
            elif isinstance(item, Block):
                if not item.header.startswith(("else", "elif")):
                    _note(item.line, item.adjoint, pad)
                lines.append(pad + item.header)
                last[0] = None
                if item.body:
                    walk(item.body, level + 1)
                else:
                    lines.append(pad + indent + "pass")
                last[0] = None

    def _note(line, adjoint, pad):
        if line is None or (line, adjoint) == last[0]:
            return
        last[0] = (line, adjoint)
        label = "adjoint of line" if adjoint else "line"
        text = (line_texts or {}).get(line, "").strip()
        lines.append(f"{pad}# {label} {line}: {text}" if text else f"{pad}# {label} {line}")

    walk(items, level)
    return "\n".join(lines)
