"""The package's layout (issue 25 items 2 and 4), read with ``ast``: nothing here is imported.

- No private name (``_x``) crosses a module: none is imported from another module, and none that
  another module defines is reached as an attribute (as ``Motion._trusted`` was, from seven).
  If two modules need a name, it is public.
- Every arrow of ``addon/`` points down: a file imports no file of a higher layer of
  ``ADDON_LAYERS``, and ``core/`` imports nothing of ``addon/``.
- No import circle anywhere in ``core/`` or ``addon/``, counting imports made inside functions:
  an import delayed to dodge a circle is still an arrow.
"""

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "addon")

# Issue 25 item 2, lowest first. A file may import files of lower layers (and of its own, as long
# as no circle forms); ``state`` is item 3's module of session caches, ``pose`` the pose channels'
# conversions (numpy on core alone) that fcurves and convert use.
ADDON_LAYERS = {
    # (state, the session's stores and hooks, imports nothing of addon/; the table has it at 3,
    # but timeline (2) keeps its answers in it, so it sits at the bottom; pose: core alone, used by 1-2)
    1: ("fcurves", "strips", "pose", "state"),
    2: ("convert", "timeline", "sync_groups"),
    3: ("preview", "report"),
    4: ("synthesis", "bake"),
    5: ("arrange", "live", "perform", "hops", "reach", "assemble", "clips", "demo", "footprints", "pictures"),
    6: ("properties", "operators", "panels"),
    7: ("__init__",),
}
LAYER_OF = {name: layer for layer, names in ADDON_LAYERS.items() for name in names}


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@dataclass(frozen=True)
class Source:
    module: str  # dotted, from the repository root: "core.motion"; "addon" for addon/__init__.py
    path: Path
    file: str  # the path from the repository root, for messages
    tree: ast.Module

    @property
    def package(self) -> str:
        return self.module if self.path.name == "__init__.py" else self.module.rpartition(".")[0]

    @property
    def stem(self) -> str:
        return self.path.stem


@dataclass(frozen=True)
class Import:
    line: int
    target: str  # the project module imported from
    name: str | None  # the name taken from it (None: the module itself)
    bound: str | None  # the name it is bound to in the importing file


@functools.cache
def read_sources(root: Path, packages=PACKAGES) -> dict[str, Source]:
    sources = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            tree = ast.parse(path.read_text(), filename=str(path))
            sources[module] = Source(module, path, str(path.relative_to(root)), tree)
    return sources


def project_imports(source: Source, modules) -> list[Import]:
    """Every import of ``source`` (at module level or inside a function) of a module in ``modules``."""
    found = []
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.append(Import(node.lineno, alias.name, None, alias.asname or alias.name.split(".")[0]))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = source.package.split(".") if source.package else []
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for alias in node.names:
                if f"{origin}.{alias.name}" in modules:  # ``from . import quat``: the module itself
                    found.append(Import(node.lineno, f"{origin}.{alias.name}", None, alias.asname or alias.name))
                elif origin in modules:
                    found.append(Import(node.lineno, origin, alias.name, alias.asname or alias.name))
    return found


def defined_names(tree: ast.Module) -> set[str]:
    """Every name a file defines or assigns: functions, classes, variables, attributes it sets."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__setattr__"
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str)):
            names.add(node.args[1].value)  # frozen dataclasses set their fields this way
    return names


def private_crossings(sources: dict[str, Source]) -> list[str]:
    """Each use of another module's private name, as ``file:line: what``."""
    defined = {module: defined_names(source.tree) for module, source in sources.items()}
    found = []
    for module, source in sources.items():
        where = source.file
        elsewhere = {name for other, names in defined.items() if other != module for name in names if is_private(name)}
        from_project = {}
        for imp in project_imports(source, sources):
            name = imp.name if imp.name is not None else imp.target.rpartition(".")[2]
            if is_private(name):
                found.append(f"{where}:{imp.line}: imports {name} from {imp.target}")
            from_project[imp.bound] = imp.target
        for node in ast.walk(source.tree):
            if not (isinstance(node, ast.Attribute) and is_private(node.attr)):
                continue
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if owner in from_project:
                found.append(f"{where}:{node.lineno}: uses {owner}.{node.attr} of {from_project[owner]}")
            elif owner not in ("self", "cls") and node.attr in elsewhere and node.attr not in defined[module]:
                found.append(f"{where}:{node.lineno}: uses .{node.attr}, a private name of another module")
    return sorted(set(found))


def upward_imports(sources: dict[str, Source]) -> list[str]:
    """Each arrow that runs back up: an addon file importing one of a higher layer (or one not
    placed in ``ADDON_LAYERS``), core importing addon."""
    found = []
    for module, source in sources.items():
        where = source.file
        top = module.split(".")[0]
        if top == "addon" and source.stem not in LAYER_OF:
            found.append(f"{where}: not in the layer table: add it to ADDON_LAYERS in tests/core/test_layout.py "
                         f"(issue 25 item 2), above the files it imports and below the files importing it")
        for imp in project_imports(source, sources):
            target = sources[imp.target]
            if top == "core" and imp.target.split(".")[0] == "addon":
                found.append(f"{where}:{imp.line}: core imports {imp.target}; core never depends on the add-on")
            elif top == "addon" and imp.target.split(".")[0] == "addon":
                mine, theirs = LAYER_OF.get(source.stem), LAYER_OF.get(target.stem)
                if mine is not None and theirs is not None and theirs > mine:
                    found.append(f"{where}:{imp.line}: {source.stem} (layer {mine}) imports {target.stem} "
                                 f"(layer {theirs}); an arrow may only point down")
    return sorted(set(found))


def import_circles(sources: dict[str, Source]) -> list[list[str]]:
    """The import circles: for each set of modules that reach each other, one shortest path
    ``a -> b -> ... -> a`` through it (breaking that one may leave others in the set)."""
    graph = {module: sorted({imp.target for imp in project_imports(source, sources)} - {module})
             for module, source in sources.items()}
    # Tarjan's strongly connected components, iterative: the graph's depth is the package's.
    index, low, on_stack, stack, components, counter = {}, {}, set(), [], [], [0]
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)
    return sorted(shortest_circle(graph, component) for component in components)


def reaching_each_other(sources: dict[str, Source], module: str) -> list[str]:
    """The modules that both import ``module`` (through others) and are imported by it."""
    graph = {name: {imp.target for imp in project_imports(source, sources)} for name, source in sources.items()}

    def reach(start, edges):
        seen, frontier = {start}, [start]
        while frontier:
            frontier = [nxt for node in frontier for nxt in edges[node] if nxt not in seen and not seen.add(nxt)]
        return seen

    reverse = {name: {other for other, targets in graph.items() if name in targets} for name in graph}
    return sorted(reach(module, graph) & reach(module, reverse))


def shortest_circle(graph, component) -> list[str]:
    """One shortest circle through the component's first module, to name in a message."""
    first = min(component)
    paths, frontier = {first: [first]}, [first]
    while frontier:
        following = []
        for node in frontier:
            for nxt in graph[node]:
                if nxt == first:
                    return paths[node] + [first]
                if nxt in component and nxt not in paths:
                    paths[nxt] = paths[node] + [nxt]
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"{sorted(component)} is strongly connected but holds no circle through {first}")


@functools.cache
def repository_findings() -> tuple[list[str], list[str], list[list[str]]]:
    """The three checks over this repository, once for every test that reads them."""
    sources = read_sources(ROOT)
    return private_crossings(sources), upward_imports(sources), import_circles(sources)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_private_name_is_used_across_modules(package):
    crossings = [c for c in repository_findings()[0] if c.startswith(f"{package}/")]
    assert not crossings, ("a private name (_x) is used outside its module; if two modules need it, make it "
                           "public:\n  " + "\n  ".join(crossings))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_import_points_down(package):
    upward = [u for u in repository_findings()[1] if u.startswith(f"{package}/")]
    assert not upward, "imports that run back up (issue 25 item 2's layers):\n  " + "\n  ".join(upward)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package):
    circles = [c for c in repository_findings()[2] if c[0].split(".")[0] == package]
    assert not circles, "import circles:\n  " + "\n  ".join(
        " -> ".join(circle) + f"  (modules that reach each other: "
                              f"{', '.join(reaching_each_other(read_sources(ROOT), circle[0]))})"
        for circle in circles)


# The checks themselves, on a small package written for each case.

def write_package(root: Path, files: dict[str, str]) -> dict[str, Source]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return read_sources(root)


def test_the_check_catches_a_private_import_and_a_private_attribute(tmp_path):
    sources = write_package(tmp_path, {
        "core/__init__.py": "",
        "core/motion.py": "class Motion:\n    @classmethod\n    def _trusted(cls):\n        return cls()\n"
                          "def _helper():\n    pass\n",
        "core/render.py": "from .motion import Motion, _helper\n\ndef f():\n    return Motion._trusted()\n",
        "core/ik.py": "from . import motion\n\ndef g(m):\n    motion._helper()\n    return m._trusted()\n",
        "core/fine.py": "from .motion import Motion as _Motion\n\nclass A:\n"
                        "    def _own(self):\n        return self._own\n"
                        "    def h(self, other, terms):\n        return other._own, terms._asdict(), _Motion\n",
    })
    assert private_crossings(sources) == [
        "core/ik.py:4: uses motion._helper of core.motion",
        "core/ik.py:5: uses ._trusted, a private name of another module",
        "core/render.py:1: imports _helper from core.motion",
        "core/render.py:4: uses Motion._trusted of core.motion",
    ]


def test_the_check_catches_an_upward_import_an_unplaced_file_and_core_on_addon(tmp_path):
    sources = write_package(tmp_path, {
        "core/__init__.py": "",
        "core/motion.py": "def f():\n    from ..addon import convert\n",
        "addon/__init__.py": "from . import operators\n",
        "addon/fcurves.py": "",
        "addon/convert.py": "from . import fcurves\nfrom .strips import x\n\ndef f():\n    from .synthesis import y\n",
        "addon/strips.py": "from . import fcurves\n\nx = 1\n",  # (one layer: allowed while no circle forms)
        "addon/synthesis.py": "y = 1\n",
        "addon/operators.py": "from .convert import f\nfrom ..core.motion import f as g\n",
        "addon/nla.py": "",
    })
    assert upward_imports(sources) == [
        "addon/convert.py:5: convert (layer 2) imports synthesis (layer 4); an arrow may only point down",
        "addon/nla.py: not in the layer table: add it to ADDON_LAYERS in tests/core/test_layout.py "
        "(issue 25 item 2), above the files it imports and below the files importing it",
        "core/motion.py:2: core imports addon.convert; core never depends on the add-on",
    ]


def test_the_check_catches_a_circle_through_a_delayed_import(tmp_path):
    sources = write_package(tmp_path, {
        "core/__init__.py": "",
        "core/a.py": "from .b import x\n",
        "core/b.py": "x = 1\n\ndef f():\n    from . import c\n",
        "core/c.py": "import core.a\n",
        "core/d.py": "from .a import x\n",
    })
    assert import_circles(sources) == [["core.a", "core.b", "core.c", "core.a"]]


ADDON_MOST_LINES = 600  # issue 25: a file past this holds more than one job


def test_no_addon_file_is_longer_than_a_few_screens():
    long = {p.name: n for p in sorted((ROOT / "addon").glob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > ADDON_MOST_LINES}
    assert not long, f"addon files over {ADDON_MOST_LINES} lines (split them by job): {long}"
