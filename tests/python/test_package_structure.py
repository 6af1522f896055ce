"""The host package's shape: rooms along the pipeline, each importing only rooms below it; no
import circle (imports inside functions included, so that none hides one); no module too long to
read whole; and only the targets room names a kind of target."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "host-tools/src/pqscope"
TARGET_CLASSES = {"VirtualTarget", "SerialTarget", "LabgridTarget"}
# The rooms, from the ground up: each may import only those before it (and itself).
ROOMS = ("project", "link", "targets", "results", "measure", "analysis", "jobs", "views", "cli")
MOST_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, name: str, modules: set[str], is_package: bool = False) -> set[str]:
    """The package's modules that module `name` (its `source`) imports anywhere in it, in a
    function too (`from . import x` names x, not its package)."""
    package = name if is_package else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            named = {f"{base}.{alias.name}" for alias in node.names}
            # `from package import module, ...` imports those modules; the package is its parent,
            # there before any of them. Any other name is the package's (or module's) own.
            found |= named if named <= modules else named | {base}
    return {module for module in found if module in modules and module != name}


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(path) for path in paths}
    return {module_name(path): imported_modules(path.read_text(), module_name(path), modules,
                                                path.name == "__init__.py") for path in paths}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph[node]:
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_the_host_package_has_no_import_circle():
    graph = import_graph()
    assert "pqscope.views" in graph["pqscope.cli.app"]  # the walk sees imports (and the package's)
    assert cycles(graph) == []


def test_the_walk_finds_a_circle_through_a_function_local_import():
    modules = {"pqscope.analysis", "pqscope.analysis.ct", "pqscope.views", "pqscope.views.ct"}
    assert imported_modules("def f():\n    from ..analysis.ct import CtSample\n", "pqscope.views.ct",
                            modules) == {"pqscope.analysis.ct"}
    assert imported_modules("from .. import views\n", "pqscope.analysis.ct", modules) == {"pqscope.views"}
    assert imported_modules("from . import ct\n", "pqscope.views.page", modules) == {"pqscope.views.ct"}
    assert imported_modules("from .ct import page\n", "pqscope.views.page", modules) == {"pqscope.views.ct"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def names_used(source: str) -> set[str]:
    """The names a module's code uses or imports."""
    tree = ast.parse(source)
    return ({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
            | {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names})


def test_only_the_targets_room_names_a_kind_of_target():
    naming = {module_name(path) for path in PACKAGE.rglob("*.py") if TARGET_CLASSES & names_used(path.read_text())}
    assert naming and {room_of(module) for module in naming} == {"targets"}


def room_of(module: str) -> str | None:
    """The room (subpackage) of a module of the package; None for the package's own face."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else None


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Which rooms each room imports (itself left out)."""
    rooms: dict[str, set[str]] = {room: set() for room in ROOMS}
    for module, imported in graph.items():
        if room_of(module) is not None:
            rooms[room_of(module)] |= {room_of(other) for other in imported} - {None, room_of(module)}
    return rooms


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import from a room to one above it, as "module -> module"."""
    return sorted(f"{module} -> {other}" for module, imported in graph.items() if room_of(module) is not None
                  for other in imported
                  if room_of(other) is not None and ROOMS.index(room_of(other)) > ROOMS.index(room_of(module)))


def levels(rooms: dict[str, set[str]]) -> int:
    """The floors the rooms stand on: the longest chain of imports, counted in rooms."""
    floor: dict[str, int] = {}

    def of(room: str) -> int:
        if room not in floor:
            floor[room] = 1 + max((of(below) for below in rooms[room]), default=0)
        return floor[room]

    return max(map(of, rooms))


def test_every_module_is_in_a_room():
    assert {module for module in import_graph() if room_of(module) is None} == {"pqscope", "pqscope.__main__"}
    assert {path.name for path in PACKAGE.iterdir() if path.is_dir() and path.name != "__pycache__"} == set(ROOMS)


def test_no_room_imports_one_above_it():
    graph = import_graph()
    assert upward_imports(graph) == []
    assert levels(room_graph(graph)) <= len(ROOMS)


def test_the_room_checks_find_an_import_that_runs_back_up():
    graph = {"pqscope.measure.runner": {"pqscope.views.page"}, "pqscope.views.page": {"pqscope.project.errors"},
             "pqscope.project.errors": set()}
    assert upward_imports(graph) == ["pqscope.measure.runner -> pqscope.views.page"]
    assert levels(room_graph(graph)) == 3


def test_no_module_is_longer_than_can_be_read_whole():
    lengths = {module_name(path): len(path.read_text().splitlines()) for path in PACKAGE.rglob("*.py")}
    assert {module: lines for module, lines in lengths.items() if lines > MOST_LINES} == {}
