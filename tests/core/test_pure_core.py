"""core/ stays pure numpy: nothing in it may import Blender's modules."""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"
FORBIDDEN = {"bpy", "mathutils", "bmesh", "bpy_extras"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__" and node.args:
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.add(arg.value.split(".")[0])
    return names


def test_no_module_in_core_imports_blender():
    files = sorted(CORE.rglob("*.py"))
    assert files, "core/ has no Python files?"
    offenders = {str(f.relative_to(CORE)): sorted(imported_modules(f) & FORBIDDEN) for f in files}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"core/ must stay pure numpy; Blender imports found: {offenders}"


def test_the_check_itself_catches_an_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy\nfrom mathutils import Vector\n")
    assert imported_modules(bad) & FORBIDDEN == {"mathutils"}
