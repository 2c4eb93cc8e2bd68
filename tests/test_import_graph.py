"""No import cycles: the whole package's import graph, and the benchmark scripts', checked.

grimp builds the graph of ``agent_room`` from the source, every import statement in it:
those at the top of a module, those inside functions (the hot path's lazy imports) and
those under ``TYPE_CHECKING``. A cycle is a group of modules that reach one another
through those imports (a strongly connected component); the failure names each group
and the imports inside it, with their lines. What grimp cannot see is read with ``ast``
into the same graph: the modules the CLI loads by name when a command runs, and the
imports among the scripts of ``bench/`` (a folder of scripts, not a package).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Set
from pathlib import Path

import grimp
import pytest

from tests.conftest import REPO

PACKAGE = "agent_room"
BENCH = REPO / "bench"

LOADERS = frozenset({"Command", "import_module"})
"""Calls naming a module to import by a string (``cli.commands``' table of the modules
``cli.app`` loads when their command runs): grimp reads statements only, so these are
added from the source."""


def package_graph() -> grimp.ImportGraph:
    """``agent_room`` with every import grimp finds, the modules its loaders name by
    string, and the bench scripts' imports of one another."""
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    for module in sorted(graph.modules):
        for imported, line in _loaded_by_name(module, graph.modules):
            graph.add_import(importer=module, imported=imported, line_number=line, line_contents="")
    scripts = {path.stem: path for path in BENCH.glob("*.py")}
    for name in scripts:
        graph.add_module(f"bench.{name}")
    for name, path in scripts.items():
        for imported, line in _local_imports(path, set(scripts)):
            graph.add_import(
                importer=f"bench.{name}",
                imported=f"bench.{imported}",
                line_number=line,
                line_contents="",
            )
    return graph


def _loaded_by_name(module: str, modules: Set[str]) -> Iterator[tuple[str, int]]:
    """The modules of the package ``module`` loads through ``LOADERS`` by a literal name."""
    where = REPO.joinpath(*module.split("."))
    path = where / "__init__.py" if where.is_dir() else where.with_suffix(".py")
    source = path.read_text()
    if not any(f"{loader}(" in source for loader in LOADERS):
        return  # most modules: no parse needed
    for node in ast.walk(ast.parse(source, str(path))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        called = node.func
        name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
        for arg in node.args if name in LOADERS else ():
            if isinstance(arg, ast.Constant) and arg.value in modules:
                yield str(arg.value), node.lineno


def _local_imports(path: Path, scripts: Set[str]) -> Iterator[tuple[str, int]]:
    """The bench scripts ``path`` imports (they import one another by bare name, the
    folder being on the path), wherever the statement stands."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            if name in scripts:
                yield name, node.lineno


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The groups of two or more modules that import one another, directly or not
    (Tarjan's strongly connected components, without recursion), each sorted."""
    edges = {
        module: sorted(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, following = work[-1]
            step = next(following, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(edges.get(step, []))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


def describe(graph: grimp.ImportGraph, group: list[str]) -> str:
    """One cycle: its modules and every import among them, with the lines."""
    members = set(group)
    lines = [f"cycle of {len(group)} modules: {', '.join(group)}"]
    for importer in group:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            details = graph.get_import_details(importer=importer, imported=imported)
            at = ", ".join(str(d["line_number"]) for d in details)
            lines.append(f"    {importer} -> {imported} (line {at})")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return package_graph()


def test_the_package_has_no_import_cycles(graph: grimp.ImportGraph) -> None:
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(describe(graph, g) for g in found)


def test_the_graph_holds_lazy_type_checking_and_bench_imports(
    graph: grimp.ImportGraph,
) -> None:
    """The search sees what it must: an import inside a function, one under
    ``TYPE_CHECKING``, one between two bench scripts and a module the CLI loads by name
    (else it could pass on a graph that misses them)."""
    inside_a_function = ("agent_room.room.service", "agent_room.room.memory")
    type_checking_only = ("agent_room.room.checkpoints", "agent_room.room.base")
    between_scripts = ("bench.soak", "bench._soak_gates")
    by_name = ("agent_room.cli.commands", "agent_room.cli.links")  # Command("...", "...links")
    for importer, imported in (inside_a_function, type_checking_only, between_scripts, by_name):
        assert graph.direct_import_exists(importer=importer, imported=imported), (
            importer,
            imported,
        )


def test_the_search_finds_a_cycle_and_names_its_imports(graph: grimp.ImportGraph) -> None:
    """One import back from a sub-service to the room makes a cycle the test names, and
    so does one from a console screen back to the app."""
    broken = package_graph()  # a graph of its own: the module's stays as built
    broken.add_import(
        importer="agent_room.room.links",
        imported="agent_room.room.service",
        line_number=1,
        line_contents="from agent_room.room.service import Room",
    )
    broken.add_import(
        importer="agent_room.ui.screens.main",
        imported="agent_room.ui.app",
        line_number=1,
        line_contents="from agent_room.ui.app import RoomConsole",
    )
    found, ui = sorted(cycles(broken), key=lambda group: group[0] != "agent_room.room.links")
    assert {"agent_room.room.links", "agent_room.room.service"} <= set(found)
    text = describe(broken, found)
    assert "agent_room.room.links -> agent_room.room.service (line 1)" in text
    assert "agent_room.room.service -> agent_room.room." in text  # its way back, named
    assert {"agent_room.ui.app", "agent_room.ui.screens.main"} <= set(ui)
    assert not cycles(graph)
