"""The docs' command examples run as written, and print what the docs show.

Each fenced ``sh`` block of ``docs/cli.md`` is run, in order, in one
temporary folder (the first writes the demo content, ``python -m core demo
--write``; the rest read it), with this interpreter for ``.venv/bin/python``.
A command exits 0 unless its comment says ``# exits N``. Where a ``text``
block follows, each of its lines (but ``...``) is in what the block's commands
printed, numbers compared to three significant figures (numpy 1 and 2 may
round the last digits differently). The README's commands are ``make`` targets
the Makefile has; the README points at documents that exist.
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYTHON = ".venv/bin/python"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def fenced_blocks(text: str) -> list[tuple[str, str, str | None]]:
    """``[(language, body, the text block right after it or None)]`` of a Markdown text."""
    blocks = [(m.group(1), m.group(2), m.start(), m.end()) for m in FENCE.finditer(text)]
    out = []
    for i, (language, body, _, end) in enumerate(blocks):
        following = blocks[i + 1] if i + 1 < len(blocks) else None
        shown = following[1] if following and following[0] == "text" and following[2] == end else None
        out.append((language, body, shown))
    return out


def commands(body: str) -> list[tuple[list[str], int]]:
    """A shell block's commands as argument lists (continuation lines joined, comments dropped) and the
    exit status each is expected to end with."""
    out = []
    for line in body.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=False)
        if not words or words[0].startswith("#"):
            continue
        status = 0
        if "#" in words:
            comment = " ".join(words[words.index("#"):])
            words = words[:words.index("#")]
            said = re.search(r"exits (\d+)", comment)
            status = int(said.group(1)) if said else 0
        out.append((words, status))
    return out


def same_line(expected: str, printed: str) -> bool:
    """``printed`` is ``expected`` with every number equal to three significant figures."""
    if NUMBER.sub("#", expected).strip() != NUMBER.sub("#", printed).strip():
        return False
    for a, b in zip(NUMBER.findall(expected), NUMBER.findall(printed)):
        x, y = float(a), float(b)
        if abs(x - y) > 1e-3 * max(abs(x), abs(y)) + 1e-9:
            return False
    return True


def test_every_command_example_of_the_cli_doc_runs_and_prints_what_the_doc_shows(tmp_path):
    blocks = [(body, shown) for language, body, shown in fenced_blocks((REPO / "docs" / "cli.md").read_text())
              if language == "sh"]
    assert len(blocks) >= 15, "docs/cli.md shows an example of every command"
    ran = set()
    for body, shown in blocks:
        printed = []
        for words, status in commands(body):
            assert words[:3] == [PYTHON, "-m", "core"], f"not a command of the project: {' '.join(words)}"
            run = subprocess.run([sys.executable, "-m", "core", *words[3:]], cwd=tmp_path, capture_output=True,
                                 text=True, timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
            assert run.returncode == status, f"{' '.join(words)}\n{run.stdout}\n{run.stderr}"
            printed += (run.stdout + run.stderr).splitlines()
            ran.add(words[3] if words[3] != "hops" else f"hops {words[4]}")
        for line in (shown or "").splitlines():
            if line.strip() and line.strip() != "...":
                assert any(same_line(line, out) for out in printed), f"not printed: {line}\nprinted:\n" + "\n".join(printed)
    expected = {"demo", "analyze", "synthesize", "blend", "hops precompute", "hops show", "hops render", "reach",
                "assemble"}
    assert expected <= ran, f"commands with no example: {sorted(expected - ran)}"


def test_the_readme_commands_are_make_targets_and_its_links_lead_somewhere():
    readme = (REPO / "README.md").read_text()
    targets = set(re.findall(r"^([\w.-]+):", (REPO / "Makefile").read_text(), re.M))
    shown = [words for language, body, _ in fenced_blocks(readme) if language == "sh" for words, _ in commands(body)]
    assert ["make", "demo"] in shown and ["make", "test"] in shown
    for words in shown:
        if words[0] == "make":
            assert set(words[1:]) <= targets, f"README: `{' '.join(words)}` names no target of the Makefile"
        else:
            assert words[:3] == [PYTHON, "-m", "core"], f"README: {' '.join(words)}"
    for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme):
        if not link.startswith("docs/images/"):  # (the pictures are made by `make demo`)
            assert (REPO / link).exists(), f"README links to {link}, which does not exist"


@pytest.mark.parametrize("line, printed, same", [
    ("gap 94 .. 111: skate 0.001", "gap 94 .. 111: skate 0.001", True),
    ("error 0.04995 (file units)", "error 0.049951 (file units)", True),
    ("error 0.04995 (file units)", "error 0.05995 (file units)", False),
    ("wrote 79 frames", "wrote 80 frames", False),
    ("wrote 79 frames", "wrote 79 frames to", False),
])
def test_printed_lines_are_compared_to_three_figures_and_word_for_word(line, printed, same):
    assert same_line(line, printed) is same


# --- the README a newcomer reads, and the module maps ---------------------------------------------


def modules(package: str) -> set[str]:
    return {path.name for path in (REPO / package).glob("*.py")}


def readme_layout() -> dict[str, set[str]]:
    """The files the README's Layout block lists under ``core/`` and ``addon/``."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Layout", 1)[1].split("```", 2)[1]
    listed, package = {"core": set(), "addon": set()}, None
    for line in block.splitlines():
        top = re.match(r"^(\w+)/", line)
        if top:
            package = top.group(1) if top.group(1) in listed else None
        elif package and re.match(r"^  (\S+\.py)\s", line):
            listed[package].add(re.match(r"^  (\S+\.py)", line).group(1))
    return listed


def test_the_readme_is_short_names_the_five_papers_and_says_where_the_data_comes_from():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) < 200
    for paper in ("Oshita 2008", "Oshita 2014", "Ménardais et al. 2004", "Koyama & Goto 2019", "Juang et al. 2009"):
        assert paper in readme, paper
    assert "## Data for tests and benchmarks" in readme  # (tests/real_capture.py's skip reason points here)
    assert "Bandai Namco Research Motion Dataset" in readme and "../shared/mocap" in readme
    for picture in ("docs/images/demo_contact_sheet.png", "docs/images/demo_speed.png"):
        assert f"]({picture})" in readme, picture


@pytest.mark.parametrize("package", ["core", "addon"])
def test_the_readme_layout_lists_every_module_and_no_other(package):
    listed = readme_layout()[package]
    assert listed == modules(package), (f"README's layout of {package}/: missing {sorted(modules(package) - listed)}, "
                                        f"gone {sorted(listed - modules(package))}")


@pytest.mark.parametrize("package", ["core", "addon"])
def test_each_package_docstring_is_its_module_map(package):
    import ast

    doc = ast.get_docstring(ast.parse((REPO / package / "__init__.py").read_text()))
    named = set(re.findall(r":mod:`\.(\w+)`", doc))
    expected = {name[:-3] for name in modules(package)} - {"__init__"}
    assert named == expected, f"{package}/__init__.py's map: missing {sorted(expected - named)}, gone {sorted(named - expected)}"


def test_the_addon_map_gives_each_file_the_layer_the_layout_test_holds_it_to():
    import ast

    from test_layout import LAYER_OF

    doc = ast.get_docstring(ast.parse((REPO / "addon" / "__init__.py").read_text()))
    mapped = {name: int(layer) for layer, name in re.findall(r"^(\d)\s+:mod:`\.(\w+)`", doc, re.M)}
    assert mapped == {name: layer for name, layer in LAYER_OF.items() if name != "__init__"}
    readme = {name[:-3]: int(layer) for name, layer in
              re.findall(r"^  (\w+\.py)\s+\((\d)\)", (REPO / "README.md").read_text(), re.M)}
    assert readme == LAYER_OF
