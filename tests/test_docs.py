"""Every ```python block of README.md, Checkpointing.md and docs/*.md runs, and
every pasted generated source is what the library generates now.

The conventions (documented in docs/writing_docs.md) are HTML comments right
before a block, invisible on the rendered page:

- ``<!-- setup: CODE -->`` runs CODE (may span lines) before the block;
- ``<!-- file: NAME -->`` or ``<!-- file: NAME, line: N -->`` runs the block as
  lines N... (default 1) of file NAME, so generated code names that file and
  those lines; when NAME is a file of this repository, the block must be those
  very lines of it;
- ``<!-- generated: EXPR -->``: the block is not run; it must be exactly the
  text of EXPR (e.g. ``tc.grad(loss).source``) evaluated now;
- ``<!-- generated excerpt: EXPR -->``: the same for an excerpt: the block's
  lines, except ``...`` lines, appear in EXPR's text in this order;
- ``<!-- requires: MODULE -->``: an optional package; without it this block
  and the rest of the page are not run, and the test says so (skipped).

The blocks of one page run in order in one namespace, like a notebook.
"""

import importlib.util
import linecache
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md", "Checkpointing.md"] + sorted(
    os.path.join("docs", name) for name in os.listdir(os.path.join(ROOT, "docs"))
    if name.endswith(".md"))

BLOCK = re.compile(r"((?:<!--.*?-->[ \t]*\n)*)```python\n(.*?)^```[ \t]*$", re.S | re.M)
COMMENT = re.compile(r"<!--\s*(setup|file|requires|generated excerpt|generated)\s*:(.*?)-->",
                     re.S)


class Block:
    def __init__(self, page, line, code, directives):
        self.page, self.line, self.code = page, line, code
        self.setup = [text for kind, text in directives if kind == "setup"]
        self.file = next((text.strip() for kind, text in directives if kind == "file"), None)
        self.requires = [name.strip() for kind, text in directives if kind == "requires"
                         for name in text.split(",")]
        generated = [(kind, text.strip()) for kind, text in directives
                     if kind.startswith("generated")]
        self.generated = generated[0] if generated else None

    def __repr__(self):
        return f"{self.page}:{self.line}"


def blocks(page):
    text = open(os.path.join(ROOT, page)).read()
    found = []
    for match in BLOCK.finditer(text):
        line = text.count("\n", 0, match.start(2))
        found.append(Block(page, line, match.group(2), COMMENT.findall(match.group(1))))
    return found


def run_code(code, filename, first_line, namespace):
    padded = "\n" * (first_line - 1) + code
    if not os.path.isabs(filename):
        linecache.cache[filename] = (len(padded), None, padded.splitlines(True), filename)
    exec(compile(padded, filename, "exec"), namespace)


def where(block):
    if block.file is None:
        return f"<{block.page} line {block.line}>", 1
    name, _, line = block.file.partition(",")
    first = int(line.split(":")[1]) if line else 1
    path = os.path.join(ROOT, name.strip())
    if os.path.exists(path):
        lines = open(path).read().splitlines(True)
        real = "".join(lines[first - 1:first - 1 + block.code.count("\n")])
        assert block.code == real, f"{block}: not lines {first}... of {name}"
        return path, first
    return name.strip(), first


def check_generated(block, namespace):
    kind, expr = block.generated
    actual = str(eval(expr, namespace))
    if kind == "generated":
        assert block.code.rstrip() == actual.rstrip(), \
            f"{block}: the pasted source is not what `{expr}` gives now:\n{actual}"
        return
    pending = iter(line.rstrip() for line in actual.splitlines())
    for line in block.code.splitlines():
        if line.strip() in ("...", ""):
            continue
        assert any(line.rstrip() == other for other in pending), \
            f"{block}: {line.strip()!r} is not (in this order) in what `{expr}` gives now"


@pytest.mark.parametrize("page", PAGES)
def test_python_blocks_run(page, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    namespace = {"__name__": "__docs__"}
    for block in blocks(page):
        missing = [name for name in block.requires if importlib.util.find_spec(name) is None]
        if missing:
            pytest.skip(f"{block} and the rest of {page} need {', '.join(missing)}")
        for setup in block.setup:
            run_code(setup.strip() + "\n", f"<{page} setup before line {block.line}>", 1,
                     namespace)
        if block.generated is not None:
            check_generated(block, namespace)
            continue
        filename, first = where(block)
        try:
            run_code(block.code, filename, first, namespace)
        except Exception as exc:
            raise AssertionError(f"{block}: the block fails: {type(exc).__name__}: {exc}") from exc


def test_the_conventions_are_documented():
    text = open(os.path.join(ROOT, "docs", "writing_docs.md")).read()
    for directive in ("<!-- setup:", "<!-- file:", "<!-- generated:", "<!-- generated excerpt:"):
        assert directive in text


def test_the_block_pattern_finds_every_python_block():
    for page in PAGES:
        text = open(os.path.join(ROOT, page)).read()
        assert len(blocks(page)) == len(re.findall(r"^```python", text, re.M)), page


def test_a_stale_generated_block_fails():
    namespace = {"text": "def f():\n    return 1\n"}
    fresh = Block("page.md", 1, "def f():\n    return 1\n", [("generated", " text ")])
    check_generated(fresh, namespace)
    stale = Block("page.md", 1, "def f():\n    return 2\n", [("generated", " text ")])
    with pytest.raises(AssertionError, match="not what `text` gives now"):
        check_generated(stale, namespace)
    excerpt = Block("page.md", 1, "    return 1\n...\n", [("generated excerpt", "text")])
    check_generated(excerpt, namespace)
    swapped = Block("page.md", 1, "    return 1\ndef f():\n", [("generated excerpt", "text")])
    with pytest.raises(AssertionError, match="in this order"):
        check_generated(swapped, namespace)


def test_a_block_claiming_lines_of_a_file_must_be_those_lines():
    good = Block("page.md", 1, "def loss(h, W, b, n):\n", [("file", " examples/rnn.py, line: 21")])
    assert where(good) == (os.path.join(ROOT, "examples", "rnn.py"), 21)
    bad = Block("page.md", 1, "def loss(h, W, b, n):\n", [("file", " examples/rnn.py, line: 20")])
    with pytest.raises(AssertionError, match="not lines 20... of examples/rnn.py"):
        where(bad)


# --- numbers in prose come from a benchmark the docs name -----------------------------
# a duration: "5 to 7 minutes", "1.2 ms", "11.8 s"
_DURATION = r"\b\d[\d.]*\s?(?:ms|s|seconds?|minutes?|min|hours?)\b"
# a claim about how long the tests take or compiling takes, with a duration
_TIME_CLAIM = re.compile(
    r"[^.;\n]*(?:\bcompil\w*|\btests?\b|test suite)[^.;]*?" + _DURATION + "|"
    + _DURATION + r"[^.;]*?(?:\bcompil\w*|\btests? (?:take|run)|test suite)", re.I)
# what backs such a number: a benchmark script, CI's run, or a pytest command
_MEASURED_BY = re.compile(r"benchmarks/\w+\.py|\.ci/run|pytest [^`\n]*")


def time_claims_without_a_source(text):
    """The claims of ``text`` (one page) about test or compile time whose section
    (the text between two headings) names nothing that measured them.  Code
    blocks and table rows are left out: blocks are output, rows name their tests."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    found = []
    for section in re.split(r"\n#+ ", text):
        prose = re.sub(r"^\|.*$", "", section, flags=re.M)
        if _MEASURED_BY.search(section):
            continue
        found += [" ".join(m.group(0).split()) for m in _TIME_CLAIM.finditer(prose)]
    return found


@pytest.mark.parametrize("page", PAGES)
def test_time_claims_name_the_benchmark_that_measured_them(page):
    """"The tests take a few seconds to a minute" stood in the README while they
    took five minutes: a number about test or compile time must come with the
    benchmark (or CI run) a reader can run to check it."""
    assert time_claims_without_a_source(open(os.path.join(ROOT, page)).read()) == []


def test_an_unsourced_time_claim_is_found():
    assert time_claims_without_a_source(
        "## Speed\n\nCompile time is linear, about 1.0 ms per line.\n") != []
    assert time_claims_without_a_source(
        "## Tests\n\nThe tests take 5 minutes.\n") != []
    assert time_claims_without_a_source(
        "## Speed\n\n`python benchmarks/compile_time.py`: 1.0 ms per line of compile.\n") == []
    assert time_claims_without_a_source("## Revolve\n\nF(1, s) = 0; 3 snapshots.\n") == []
