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
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    # `b += g` reads b too (its ctx is Store): without this, the zeros that
    # initialize an in-place loop accumulator were dropped as dead
    names |= {n.target.id for n in ast.walk(tree)
              if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    return names


def _flatten(items, path=()):
    """(kind, payload, path): ``path`` is the chain of enclosing blocks."""
    for item in items:
        if isinstance(item, Block):
            yield ("reads", _loads(item.header + "\n    pass")
                   if not item.header.startswith(("def ", "else")) else set(), path)
            yield from _flatten(item.body, path + (id(item),))
        elif isinstance(item, Line):
            yield ("reads", _loads(item.text), path)
        elif isinstance(item, Restore):
            yield ("restore", item, path)


def live_restores(items):
    """Slots of local (non-tape) restores whose value is read before the variable
    is surely restored again, in the order the reverse sweep runs (textual order;
    a restore inside one branch counts reads in the other: conservative).

    Only a later restore that runs whenever this one ran (in the same block or an
    enclosing one) ends the search: one inside an ``if`` or a loop may not run,
    and the value restored here is then the one read (found by tests/test_fuzz.py:
    dropping it gave silently wrong gradients)."""
    flat = list(_flatten(items))
    live = set()
    for k, (kind, payload, path) in enumerate(flat):
        if kind != "restore" or payload.tape:
            continue
        for kind2, later, path2 in flat[k + 1:]:
            if kind2 == "restore" and later.var == payload.var and path[:len(path2)] == path2:
                break
            if kind2 == "reads" and payload.var in later:
                live.add(payload.slot)
                break
    return live


def shape_only(items):
    """Variables the code reads only as the second argument of ``rt.unbroadcast``:
    their saves keep the shape (``rt.shape_of(x)``), not the array."""
    ok, other = set(), set()

    def visit(text):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return
        shape_args = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "unbroadcast" and len(node.args) == 2 and \
                    isinstance(node.args[1], ast.Name):
                shape_args.add(id(node.args[1]))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                (ok if id(node) in shape_args else other).add(node.id)

    def walk(items):
        for item in items:
            if isinstance(item, Line):
                visit(item.text)
            elif isinstance(item, Block):
                if not item.header.startswith(("def ", "else")):
                    visit(item.header + "\n    pass")
                walk(item.body)

    walk(items)
    return ok - other


def resolve_saves(items, needed, live_slots=None, shapes=frozenset()):
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
                value = f"rt.shape_of({item.var})" if item.var in shapes else item.var
                text = f"{item.slot}.append({value})" if item.tape else f"{item.slot} = {value}"
            else:
                text = f"{item.var} = {item.slot}.pop()" if item.tape else f"{item.var} = {item.slot}"
            out.append(Line(text, item.line, isinstance(item, Restore)))
        elif isinstance(item, Block):
            out.append(Block(item.header, resolve_saves(item.body, needed, live_slots, shapes),
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


def drop_dead_adjoints(items, live):
    """Drop adjoint assignments ``b = ...`` whose value is never read.

    ``live``: names read after ``items``.  Only single-name adjoint lines without
    side effects (no tape ``pop``/``append``) are dropped; a loop's body sees
    every name the loop reads as live (the next iteration may read it), and a
    branch sees the reads of its sibling branch (conservative).  Returns the
    kept items; Save/Restore markers stay for :func:`resolve_saves`.
    """
    kept = []
    live = set(live)
    for item in reversed(items):
        if isinstance(item, Line):
            target = _single_target(item.text)
            if item.adjoint and target is not None and target not in live and \
                    ".pop()" not in item.text and ".append(" not in item.text:
                continue
            if target is not None:
                live.discard(target)
            live |= _loads(item.text)
        elif isinstance(item, Block):
            inner = set(live)
            if item.header.startswith(("for ", "while ")):
                inner |= names_read([item])
            body = drop_dead_adjoints(item.body, inner)
            item = Block(item.header, body, item.line, item.adjoint)
            live |= names_read([item])
        elif isinstance(item, Restore):
            live.discard(item.var)
        kept.append(item)
    kept.reverse()
    return kept


def drop_empty_branches(items):
    """``if c: <nothing>`` (and an empty ``else:``) disappear; an empty ``if``
    with a non-empty ``else`` becomes ``if not c:``.  Run after resolve_saves."""
    out = []
    k = 0
    items = [Block(i.header, drop_empty_branches(i.body), i.line, i.adjoint)
             if isinstance(i, Block) else i for i in items]
    while k < len(items):
        item = items[k]
        nxt = items[k + 1] if k + 1 < len(items) else None
        if isinstance(item, Block) and item.header.startswith("if ") and _empty(item.body):
            has_else = isinstance(nxt, Block) and nxt.header == "else:"
            if has_else and not _empty(nxt.body):
                cond = item.header[3:-1]
                out.append(Block(f"if not ({cond}):", nxt.body, item.line, item.adjoint))
            k += 2 if has_else else 1
            continue
        if isinstance(item, Block) and item.header == "else:" and _empty(item.body):
            k += 1
            continue
        out.append(item)
        k += 1
    return out


def _empty(body):
    return all(isinstance(i, (Comment, Blank)) for i in body)


def _single_target(text):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assign):
        targets = tree.body[0].targets
        if len(targets) == 1 and isinstance(targets[0], ast.Name):
            return targets[0].id
    return None


def finish_saves(primal, adjoint, ret, extra_needed=()):
    """Settle the saves of one generated function: drop adjoint statements nobody
    reads, keep the saves the reverse sweep reads (shapes only where that is all
    it reads), and drop branches left empty.  Returns (primal, adjoint, needed):
    ``needed`` are the variables whose overwritten values are kept."""
    extra_needed = set(extra_needed)
    adjoint = drop_dead_adjoints(adjoint, names_read([ret]))
    needed = names_read(adjoint + [ret]) | extra_needed
    live = live_restores(adjoint + [ret])
    shapes = shape_only(adjoint + [ret])
    while True:  # a branch left empty no longer reads its condition: fewer saves
        resolved = drop_empty_branches(resolve_saves(adjoint, needed, live, shapes))
        still_needed = names_read(resolved + [ret]) | extra_needed
        if still_needed >= needed:
            break
        needed = still_needed & needed
    primal = resolve_saves(primal, needed, live, shapes)
    renames = _short_slot_names(primal, resolved, ret)
    if renames:
        primal, resolved = _rename(primal, renames), _rename(resolved, renames)
    return primal, resolved, needed


def _short_slot_names(primal, adjoint, ret):
    """``h_old_3`` -> ``h_old`` where this function uses no ``h_old``: save slots
    are named from one compile-wide namer, but each generated function is its
    own scope.  Returns {old: new}."""
    used = _all_names(primal + adjoint + [ret])
    renames = {}
    for item in _flat_lines(primal):
        target, _, value = item.text.partition(" = ")
        value = value.strip()
        if value.startswith("rt.shape_of(") and value.endswith(")"):
            value = value[len("rt.shape_of("):-1]
        base = f"{value}_old"
        if target.startswith(base + "_") and target[len(base) + 1:].isdigit() \
                and base not in used and base not in renames.values():
            renames[target] = base
    return renames


def _flat_lines(items):
    for item in items:
        if isinstance(item, Line):
            yield item
        elif isinstance(item, Block):
            yield from _flat_lines(item.body)


def parsed_trees(items):
    """The syntax tree of every line and block header in ``items``, nested
    blocks included (text that does not parse is skipped)."""
    for item in items:
        texts = [item.text] if isinstance(item, Line) else \
            [item.header + "\n    pass"] if isinstance(item, Block) else []
        for text in texts:
            try:
                yield ast.parse(text.strip())
            except SyntaxError:
                pass
        if isinstance(item, Block):
            yield from parsed_trees(item.body)


def _all_names(items):
    return {n.id for tree in parsed_trees(items) for n in ast.walk(tree)
            if isinstance(n, ast.Name)}


def _rename(items, renames):
    out = []
    for item in items:
        if isinstance(item, Line):
            out.append(Line(_rename_text(item.text, renames), item.line, item.adjoint))
        elif isinstance(item, Block):
            out.append(Block(item.header, _rename(item.body, renames), item.line, item.adjoint))
        else:
            out.append(item)
    return out


def _rename_text(text, renames):
    import re
    return re.sub(r"\b[A-Za-z_][A-Za-z0-9_]*\b",
                  lambda m: renames.get(m.group(0), m.group(0)), text)
