"""The host package's shape: no import circle (imports inside functions included, so that none
hides one), and only the targets module names a kind of target."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "host-tools/src/pqscope"
TARGET_CLASSES = {"VirtualTarget", "SerialTarget", "LabgridTarget"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, name: str, modules: set[str], is_package: bool = False) -> set[str]:
    """The package's modules that module `name` (its `source`) imports anywhere in it, in a
    function too (`from . import x` names x)."""
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
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
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
    assert "pqscope.views" in graph["pqscope.runner"]  # the walk sees imports (and the package's)
    assert cycles(graph) == []


def test_the_walk_finds_a_circle_through_a_function_local_import():
    modules = {"pqscope.ct", "pqscope.views", "pqscope.views.ct"}
    assert imported_modules("def f():\n    from ..ct import CtSample\n", "pqscope.views.ct", modules) == {"pqscope.ct"}
    assert imported_modules("from . import views\n", "pqscope.ct", modules) == {"pqscope.views"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def names_used(source: str) -> set[str]:
    """The names a module's code uses or imports."""
    tree = ast.parse(source)
    return ({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
            | {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names})


def test_only_the_targets_module_names_a_kind_of_target():
    naming = {module_name(path) for path in PACKAGE.rglob("*.py") if TARGET_CLASSES & names_used(path.read_text())}
    assert naming == {"pqscope.targets"}
