"""The package's shape: imports run one way, no cycles, no private imports, a curated API.

The layers are the package's top-level folders (and two top-level modules), declared
here bottom first; a module's layer is read from its path, so a new module is placed by
where it is saved. A module may import its own layer or the layers below it, never above;
``core`` and ``glassbox`` import neither TensorFlow nor Matplotlib. No two modules import
each other, even through imports made only for type annotations.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "datakit"

#: The layers, bottom first: each is a top-level part of the package (a sub-package or a
#: module), so a module's layer is read from its path. A module may import its own layer
#: or the layers below it, never above.
LAYERS = [
    ("core", "errors, argument rules, paths, atomic writes, manifests"),
    ("tensorflow_logs", "quiet_tensorflow(): TensorFlow loaded without its start-up lines"),
    ("glassbox", "the pure-Python twin of tf.data and its algorithms"),
    ("plotting", "the one figure style"),
    ("perf", "timelines, throughput, memory, synthetic sources, the tuner"),
    ("readers", "CSV, TFRecord and Examples, fixed-length, SQLite, video"),
    ("see", "pictures of batches, shuffles, mixing, interleave, sampling; widgets"),
    ("doctor", "the pipeline's chain, each stage's cost, measured advice"),
    ("cluster", "the tf.data service on loopback and on real machines"),
    ("bench", "python -m datakit.bench: is my GPU fed, on my videos and my model"),
    ("exercises", "feedback on write-it-yourself answers"),
    ("__main__", "python -m datakit: the course's notebooks copied where you work"),
]
LAYER = {name: i for i, (name, _) in enumerate(LAYERS)}
#: Layers that import neither TensorFlow nor Matplotlib (nor anything heavy).
PURE = ("core", "glassbox")
HEAVY = ("tensorflow", "matplotlib", "keras", "pandas")


def module_files() -> list[Path]:
    """Every ``.py`` file of the package but the top-level ``__init__``."""
    return sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")


def dotted(path: Path) -> str:
    """``datakit/readers/csv_files/reader.py`` -> ``datakit.readers.csv_files.reader``."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {dotted(p): p for p in module_files()}
FACES = sorted([dotted(p) for p in PACKAGE.rglob("__init__.py")])


def layer_of(module: str) -> str:
    """The layer a module belongs to: its first part under ``datakit``."""
    return module.split(".")[1]


def imports(path: Path) -> list[tuple[str, list[str], int]]:
    """``(module imported, names imported from it, line)`` for each import statement.

    Imports made only for type annotations (under ``if TYPE_CHECKING:``) count like any
    other: they are edges of the import graph all the same.
    """
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                pkg = dotted(path).split(".")
                pkg = pkg if path.name == "__init__.py" else pkg[:-1]
                pkg = pkg[:len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            out.append((base, [a.name for a in node.names], node.lineno))
    return out


def kit_edges(module: str) -> set[str]:
    """The kit modules ``module`` imports (``from datakit.x import y`` counts ``datakit.x.y``
    when that is a module)."""
    edges = set()
    for mod, names, _ in imports(MODULES[module]):
        if mod == "datakit" or mod.startswith("datakit."):
            subs = {f"{mod}.{n}" for n in names} & set(MODULES)
            edges |= subs or ({mod} & set(MODULES))
    return edges - {module}


def test_every_module_is_in_a_layer():
    unplaced = sorted({layer_of(m) for m in MODULES} - set(LAYER))
    assert not unplaced, f"place {unplaced} in LAYERS in tests/test_imports.py"


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in sorted(MODULES)])
def test_imports_run_downward(name):
    upward = {m for m in kit_edges(name) if LAYER[layer_of(m)] > LAYER[layer_of(name)]}
    assert not upward, (f"{name} (layer {layer_of(name)}) imports {sorted(upward)} from a "
                        "higher layer: move the shared part down, or the importer up")


#: The wings of ``readers/``, bottom first, as LAYERS: a reader module may import its own
#: wing or the wings below it. ``tables`` is the floor, knowing no format.
READER_WINGS = [
    ("tables", "what every row reader shares: statistics, options, file sets, the tail"),
    ("small_sources", "text lines, fixed-length records, SQLite"),
    ("records", "TFRecord files and Examples"),
    ("csv_files", "CSV: dialect, statistics, shards, the reader"),
    ("parquet_files", "Parquet and Arrow"),
    ("tf_transform", "the tf.Transform full pass"),
    ("video", "video files, clips, shards, the converters"),
    ("checkpoints", "iterator checkpoints of any reader's pipeline"),
]
WING = {name: i for i, (name, _) in enumerate(READER_WINGS)}


def wing_of(module: str) -> str | None:
    """The wing of ``readers/`` a module lives in, or None (outside, or the face)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "readers" else None


def test_every_reader_module_is_in_a_wing():
    unplaced = sorted({wing_of(m) for m in MODULES} - set(WING) - {None})
    assert not unplaced, f"place {unplaced} in READER_WINGS in tests/test_imports.py"


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in sorted(MODULES)
                                  if wing_of(m)])
def test_reader_wings_import_downward(name):
    upward = {m for m in kit_edges(name)
              if wing_of(m) and WING[wing_of(m)] > WING[wing_of(name)]}
    assert not upward, (f"{name} (wing {wing_of(name)}) imports {sorted(upward)} from a "
                        "higher wing of readers/: move the shared part down (tables/ knows "
                        "no format), or the importer up")


#: The rooms of the video wing, bottom first, as READER_WINGS: a video module may import
#: its own room or the rooms below it. ``synthetic`` imports no other room; it sits above
#: the index so that decoding, the options and the index never lean on the course's videos.
VIDEO_ROOMS = [
    ("decoding", "a video file opened, probed (the probe cached) and decoded; no TensorFlow"),
    ("options", "VideoOptions, the clip samplers, the Keras directory-loader words"),
    ("index", "class folders listed, probed and split; the one video index"),
    ("synthetic", "the course's videos: moving squares, any codec, a messy folder, MP4s"),
    ("converter", "videos to SequenceExample shards: parts, shard sets, generations, Beam"),
    ("reading", "the clip readers and baselines, and their one tail"),
]
ROOM = {name: i for i, (name, _) in enumerate(VIDEO_ROOMS)}


def room_of(module: str) -> str | None:
    """The room of the video wing a module lives in, or None (outside, or the wing's face)."""
    parts = module.split(".")
    return parts[3] if len(parts) > 3 and parts[1:3] == ["readers", "video"] else None


def test_every_video_module_is_in_a_room():
    """The wing's face is its only loose file: every other module is in a room."""
    loose = sorted(m for m in MODULES if room_of(m) and room_of(m) not in ROOM)
    assert not loose, f"place {loose} in a room of VIDEO_ROOMS in tests/test_imports.py"


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in sorted(MODULES)
                                  if room_of(m)])
def test_video_rooms_import_downward(name):
    upward = {m for m in kit_edges(name)
              if room_of(m) and ROOM[room_of(m)] > ROOM[room_of(name)]}
    assert not upward, (f"{name} (room {room_of(name)}) imports {sorted(upward)} from a "
                        "higher room of readers/video/: move the shared part down, or the "
                        "importer up")


def test_no_module_imports_the_top_package():
    """``import datakit`` inside the package is an arrow back up over every layer."""
    up = [f"{MODULES[m].relative_to(ROOT)}:{line}" for m in MODULES
          for mod, names, line in imports(MODULES[m]) if mod == "datakit" and not names]
    assert not up, f"import the module you need, not the top package: {up}"


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in sorted(MODULES)
                                  if layer_of(m) in PURE])
def test_core_and_glassbox_import_no_heavy_library(name):
    heavy = [(m, line) for m, _, line in imports(MODULES[name])
             if m.split(".")[0] in HEAVY]
    assert not heavy
    if layer_of(name) == "core":
        assert {layer_of(m) for m in kit_edges(name)} <= {"core"}


def test_no_import_cycle_between_modules_type_checking_imports_included():
    graph = {m: kit_edges(m) for m in MODULES}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m, path):
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            if n.startswith(m + "."):
                continue  # a package's __init__ re-exporting its own modules
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path + [m, n]))
            if n not in state:
                visit(n, path + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])


def _is_kit_module(dotted: str) -> bool:
    """``datakit.a.b`` is a module or package of the kit (not a name defined in one)."""
    where = ROOT.joinpath(*dotted.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _private_uses(path: Path) -> list[str]:
    """``from datakit.x import _y``, and ``alias._y`` where alias is a kit module: imported
    as ``import datakit.x as alias`` or ``from datakit.x import module`` (``convert._record``)."""
    tree = ast.parse(path.read_text())
    found, aliases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("datakit"):
            for a in node.names:
                if a.name.startswith("_"):
                    found.append(f"{path.name}:{node.lineno} imports {node.module}.{a.name}")
                elif _is_kit_module(f"{node.module}.{a.name}"):
                    aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name.startswith("datakit.") and a.asname}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"{path.name}:{node.lineno} uses {node.value.id}.{node.attr}")
    return found


def test_a_private_name_reached_through_an_imported_module_is_found(tmp_path):
    user = tmp_path / "user.py"
    user.write_text("from datakit.readers.video.converter import conversion\n"
                    "from datakit.readers.video.converter.conversion import convert_videos\n"
                    "conversion._record(None)\nconvert_videos._x\n")
    assert _private_uses(user) == ["user.py:3 uses conversion._record"]


@pytest.mark.parametrize("folder", ["datakit", "benchmarks"])
def test_no_module_imports_another_modules_private_name(folder):
    found = [f for p in sorted((ROOT / folder).glob("**/*.py")) for f in _private_uses(p)]
    assert not found, "private names used across modules: " + "; ".join(found)


def test_the_benchmarks_import_each_other_without_cycles_or_private_names():
    bench = {p.stem: p for p in (ROOT / "benchmarks").glob("*.py")}
    graph, private = {}, []
    for name, path in bench.items():
        graph[name] = set()
        for mod, names, line in imports(path):
            if mod == "benchmarks":
                targets = [(n, []) for n in names if n in bench]
            elif mod.startswith("benchmarks."):
                targets = [(mod.split(".")[1], names)]
            else:
                continue
            for target, taken in targets:
                graph[name].add(target)
                private += [f"{name}.py:{line} imports {target}.{t}" for t in taken
                            if t.startswith("_")]
    assert not private, "; ".join(private)
    cycles = sorted(f"{a} <-> {b}" for a in graph for b in graph[a]
                    if a < b and a in graph.get(b, ()))
    assert not cycles, f"benchmark modules importing each other: {cycles}"


@pytest.mark.parametrize("name", [pytest.param(m, id=m) for m in sorted(MODULES)])
def test_every_module_has_all_and_it_names_real_things(name):
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{MODULES[name]} has no __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing and len(set(module.__all__)) == len(module.__all__)


@pytest.mark.parametrize("name", [m for m in sorted(MODULES) if MODULES[m].name != "__init__.py"])
def test_each_name_has_one_address(name):
    """A module's __all__ lists only what it defines: a name imported from elsewhere and listed
    again is a second address, which drifts from the first (its docs, its notebook). Import a
    name from the module that defines it; only a package face (``__init__``) re-exports."""
    module = importlib.import_module(name)
    defined = {n for n, _ in _top_level_names(ast.parse(MODULES[name].read_text()))}
    borrowed = [f"{n} (from {getattr(module, n).__module__})" for n in module.__all__
                if n not in defined]
    assert not borrowed, (f"{MODULES[name].relative_to(ROOT)}: __all__ lists {borrowed}: take "
                          "them out and import each from its own module wherever it is used")


def test_no_public_alias_gives_a_function_or_class_a_second_name():
    """``plan_blocks = block_ranges`` is one function under two names, one of them unused in
    the docs; the kit keeps one name (a constant given a meaning, ``PREFETCH = AUTOTUNE``,
    is not an alias of a function or class)."""
    found = []
    for name, path in sorted(MODULES.items()):
        module = importlib.import_module(name)
        for node in ast.parse(path.read_text()).body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and not node.targets[0].id.startswith("_")
                    and isinstance(node.value, (ast.Name, ast.Attribute))):
                value = getattr(module, node.targets[0].id)
                if callable(value) and getattr(value, "__name__", "") != node.targets[0].id:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {ast.unparse(node)}")
    assert not found, "second names for one function or class: " + "; ".join(found)


def _is_import_block(node: ast.stmt) -> bool:
    """An import, or an ``if`` / ``try`` made of imports (``if TYPE_CHECKING:``, fallbacks)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(node, (ast.If, ast.Try)):
        inner = node.body + node.orelse + [s for h in getattr(node, "handlers", []) for s in h.body]
        return all(_is_import_block(s) or isinstance(s, ast.Pass) for s in inner)
    return False


def _top_level_names(tree: ast.Module) -> list[tuple[str, int]]:
    """``(name, line)`` of everything a module defines at its top level (not what it imports)."""
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append((node.name, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [(n.id, node.lineno) for t in targets for n in ast.walk(t)
                      if isinstance(n, ast.Name)]
    return found


@functools.cache
def _taught_words() -> set[str]:
    """Every word of the notebooks' sources and of the README: where a user meets the kit."""
    import json
    text = (ROOT / "README.md").read_text()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        text += "\n".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"])
    return set(re.findall(r"\w+", text))


@functools.cache
def _faced() -> set[tuple[str, str]]:
    """``(module, name)`` of each name a package face re-exports."""
    found: set[tuple[str, str]] = set()
    for face in FACES:
        path = ROOT / (face.replace(".", "/") + "/__init__.py")
        found |= {(m, n) for n, m in _type_checking_imports(ast.parse(path.read_text())).items()}
    return found


@pytest.mark.parametrize("name", [m for m in sorted(MODULES) if MODULES[m].name != "__init__.py"])
def test_all_lists_only_what_a_user_calls(name):
    """A module's __all__ is its face to a user: each name is used in a notebook, named in the
    README, or re-exported by a package face. Helpers shared inside the kit stay public
    (other modules import them) but out of __all__."""
    module = importlib.import_module(name)
    words, faced = _taught_words(), _faced()
    untaught = [n for n in module.__all__ if n not in words and (name, n) not in faced]
    assert not untaught, (f"{MODULES[name].relative_to(ROOT)}: __all__ lists {untaught}, which "
                          "no notebook, README line or face uses: take them out of __all__ "
                          "(and make a helper used only here private)")


@pytest.mark.parametrize("name", sorted(MODULES))
def test_all_comes_right_after_the_imports(name):
    body = ast.parse(MODULES[name].read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    first = next((node for node in body if not _is_import_block(node)), None)
    targets = (first.targets if isinstance(first, ast.Assign)
               else [first.target] if isinstance(first, ast.AnnAssign) else [])
    is_all = [ast.unparse(t) for t in targets] == ["__all__"]
    where = f"line {first.lineno}: {ast.unparse(first)[:60]!r}" if first else "the end"
    assert is_all, (f"{MODULES[name].relative_to(ROOT)}: __all__ must come right after the "
                    f"imports, found {where} first")


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
    pytest.param("import " + ", ".join(m for m in sorted(MODULES) if layer_of(m) == "core"),
                 id="core")])
def test_light_imports_load_neither_tensorflow_nor_matplotlib(statement):
    assert _loaded_after(statement) == []


def test_lazy_reexports_resolve_to_their_modules():
    import datakit
    for name, module in datakit._HOME.items():
        assert getattr(datakit, name) is getattr(importlib.import_module(f"datakit.{module}"),
                                                 name)
        assert name in datakit.__all__ and name in dir(datakit)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        datakit.nope  # noqa: B018




def _type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """``{name: module}`` imported in the face's ``if TYPE_CHECKING:`` block."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and not imp.names[0].asname
                found |= {a.name: imp.module for a in imp.names}
    return found


def _writes_a_table(tree: ast.Module) -> bool:
    return any(isinstance(n, (ast.Assign, ast.AnnAssign)) and ast.unparse(
        n.targets[0] if isinstance(n, ast.Assign) else n.target) == "_HOME" for n in tree.body)


@pytest.mark.parametrize("name", FACES)
def test_every_face_writes_each_name_once_and_is_made_lazy_by_the_shared_helper(name):
    """A face writes each name it re-exports once, as an import under TYPE_CHECKING (for
    mypy); core.faces.lazy_face makes its __all__, __getattr__ and __dir__ from them. A
    face re-exports only names its module lists in __all__, and holds no code."""
    path = ROOT / (name.replace(".", "/") + "/__init__.py")
    tree = ast.parse(path.read_text())
    assert not _writes_a_table(tree), f"{path}: end with __all__ = lazy_face(__name__)"
    face = importlib.import_module(name)
    home = {n: f"{name}.{m}" for n, m in face._HOME.items()}
    assert _type_checking_imports(tree) == home, f"{path}: TYPE_CHECKING imports != _HOME"
    extra = set(face.__all__) - set(home)  # names the face defines itself (the top level)
    assert set(home) <= set(face.__all__) and len(set(face.__all__)) == len(face.__all__)
    assert all(n in vars(face) for n in extra), f"{path}: __all__ names {extra - set(vars(face))}"
    assert face.__getattr__.__qualname__.startswith("_lazy_names."), f"{path}: not lazy_face's"
    assert face.__dir__.__qualname__.startswith("_lazy_names.")
    assert not [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                and name != "datakit"], f"{path}: a face holds no code; move it to a module"
    for n, module in home.items():
        assert getattr(face, n) is getattr(importlib.import_module(module), n)
        assert n in dir(face) and n in importlib.import_module(module).__all__, (n, module)
    with pytest.raises(AttributeError, match=f"module '{name}' has no attribute 'nope'"):
        face.nope  # noqa: B018


def test_readme_module_map_is_the_folder_tree():
    """The README lists every module file once, under the layer its folder says."""
    rows = [line.split("|")[1:3] for line in (ROOT / "README.md").read_text().splitlines()
            if line.startswith("| ") and "`datakit." in line]
    listed = {cell.strip().strip("`"): layer.strip().strip("`").rstrip("/") for layer, cell in rows}
    files = {m for m, p in MODULES.items() if p.name not in ("__init__.py", "__main__.py")}
    assert set(listed) == files
    assert {m: layer_of(m) for m in files} == listed
