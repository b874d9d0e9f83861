"""The package's shape: imports run one way, no cycles, no private imports, a curated API.

The layers are declared here, bottom first. A module may import modules of its
own layer or of layers below it, never above; bottom modules and the glass box
import neither TensorFlow nor Matplotlib. A new module must be placed in a layer.
Imports under ``if TYPE_CHECKING:`` are annotations only (they never run) and
are not edges.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "datakit"

LAYERS = [
    ("bottom: rules, errors, pure algorithms",
     ["errors", "checks", "shuffle_buffer", "interleave_cycle"]),
    ("the glass box", ["glassbox"]),
    ("building blocks", ["plotting", "lines", "examples", "shards", "memory", "chain",
                         "chunkshuffle"]),
    ("tracers and pictures", ["basics", "shuffle", "interleave", "mixing", "timeline", "bench",
                              "tune"]),
    ("readers and writers", ["records", "sources", "synthetic", "csv", "video"]),
    ("built on readers", ["stats", "inmemory"]),
    ("the doctor: diagnosis and measured advice", ["advice", "doctor"]),
]
LAYER = {m: i for i, (_, mods) in enumerate(LAYERS) for m in mods}
PURE = {"errors", "checks", "shuffle_buffer", "interleave_cycle", "glassbox"}
HEAVY = ("tensorflow", "matplotlib", "keras", "pandas")


def modules() -> list[str]:
    return sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")


def _runtime_nodes(tree: ast.Module):
    """Every node except those under ``if TYPE_CHECKING:``."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        yield node
        todo.extend(ast.iter_child_nodes(node))


def imports(path: Path) -> list[tuple[str, list[str], int]]:
    """``(module imported, names imported from it, line)`` for each import statement."""
    out = []
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x / from .x import y
                base = "datakit" + ("." + base if base else "")
            out.append((base, [a.name for a in node.names], node.lineno))
    return out


def kit_edges(name: str) -> set[str]:
    """The kit modules ``datakit/<name>.py`` imports (anywhere but TYPE_CHECKING)."""
    edges = set()
    for mod, names, _ in imports(PACKAGE / f"{name}.py"):
        if mod == "datakit":
            edges |= {n for n in names if (PACKAGE / f"{n}.py").exists()}
        elif mod.startswith("datakit."):
            edges.add(mod.split(".")[1])
    return edges - {name}


def test_every_module_has_a_layer():
    unplaced = sorted(set(modules()) - set(LAYER))
    assert not unplaced, f"place {unplaced} in LAYERS in tests/test_imports.py"


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in modules()])
def test_imports_run_downward(name):
    if name not in LAYER:
        pytest.skip("not placed yet: see test_every_module_has_a_layer")
    upward = {m for m in kit_edges(name) if LAYER.get(m, -1) > LAYER[name]}
    assert not upward, (f"{name} ({LAYERS[LAYER[name]][0]}) imports {sorted(upward)} from a "
                        "higher layer: move the shared part down, or the importer up")


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in sorted(PURE)])
def test_bottom_and_glassbox_import_no_heavy_library(name):
    heavy = [(m, line) for m, _, line in imports(PACKAGE / f"{name}.py")
             if m.split(".")[0] in HEAVY]
    assert not heavy
    if LAYER[name] == 0:
        assert kit_edges(name) <= set(LAYERS[0][1])


def test_no_import_cycle():
    graph = {m: kit_edges(m) for m in modules()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m, path):
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path + [m, n]))
            if n not in state:
                visit(n, path + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])


def _private_uses(path: Path) -> list[str]:
    """``from datakit.x import _y`` and ``alias._y`` where alias is a kit module."""
    tree = ast.parse(path.read_text())
    found, aliases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("datakit"):
            for a in node.names:
                if a.name.startswith("_"):
                    found.append(f"{path.name}:{node.lineno} imports {node.module}.{a.name}")
                elif node.module == "datakit":
                    aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name.startswith("datakit.") and a.asname}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"{path.name}:{node.lineno} uses {node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("folder", ["datakit", "benchmarks"])
def test_no_module_imports_another_modules_private_name(folder):
    found = [f for p in sorted((ROOT / folder).glob("*.py")) for f in _private_uses(p)]
    assert not found, "private names used across modules: " + "; ".join(found)


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in modules()])
def test_every_module_has_all_and_it_names_real_things(name):
    module = importlib.import_module(f"datakit.{name}")
    assert hasattr(module, "__all__"), f"datakit/{name}.py has no __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing and len(set(module.__all__)) == len(module.__all__)


def _loaded_after(statement: str) -> list[str]:
    code = (f"import sys; {statement}; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("statement", [
    pytest.param("import datakit", id="datakit"),
    pytest.param("import datakit.glassbox", id="glassbox"),
    pytest.param("import datakit.checks, datakit.errors, datakit.shuffle_buffer, "
                 "datakit.interleave_cycle", id="bottom")])
def test_light_imports_load_neither_tensorflow_nor_matplotlib(statement):
    assert _loaded_after(statement) == []


def test_lazy_reexports_resolve_to_their_modules():
    import datakit
    for name, module in datakit._LAZY.items():
        assert getattr(datakit, name) is getattr(importlib.import_module(module), name)
        assert name in datakit.__all__ and name in dir(datakit)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        datakit.nope  # noqa: B018


def test_readme_module_table_matches_the_package_and_its_layers():
    rows = [line.split("|")[1:3] for line in (ROOT / "README.md").read_text().splitlines()
            if line.startswith("| ") and "`datakit." in line]
    listed = {cell.strip().strip("`").removeprefix("datakit."): layer.strip()
              for layer, cell in rows}
    assert set(listed) == set(modules())
    labels = [{listed[m] for m in mods if m in listed} for _, mods in LAYERS]
    assert all(len(s) == 1 for s in labels), "one README layer label per declared layer"
    assert len({s.pop() for s in labels}) == len(LAYERS), "a label per layer, none shared"
