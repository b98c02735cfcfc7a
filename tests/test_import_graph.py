"""The package import graph has no circle and no upward import (the layering of the README).

Every ``import`` of the five packages is read with :mod:`ast` (module-level and function-local
imports alike, since a local import is still a dependency) and resolved to the module it
names. Layers, lowest first: trainer < export < firmware_gen < device_sim < sensorbudget (the
first four import as ``sensorbudget.<name>``; the rest of ``sensorbudget`` is the top layer).
"""

from __future__ import annotations

import ast

import pytest

from tests.paths import REPO

LAYERS = ("trainer", "export", "firmware_gen", "device_sim", "sensorbudget")


def module_files() -> dict:
    """{dotted module name: path} of every module of the packages."""
    out = {}
    for package in LAYERS:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if package != "sensorbudget":      # installed as sensorbudget.<package>
                parts = ["sensorbudget", *parts]
            out[".".join(parts)] = path
    return out


def imported_modules(name: str, path, modules: dict) -> set:
    """The project modules that module ``name`` (file ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            # "from pkg import sub" names the module pkg.sub when there is one
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                       for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:   # "import a.b.c" of an attribute: a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict:
    modules = module_files()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def circles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1] if len(parts) > 1 and parts[1] in LAYERS else parts[0])


def test_the_graph_is_read():
    graph = import_graph()
    assert "sensorbudget.trainer.selection.loop" in graph["sensorbudget.trainer.estimators"]
    assert "sensorbudget.trainer.bundle" in graph["sensorbudget.firmware_gen.build"]
    assert "sensorbudget.export.cgen" in graph["sensorbudget.firmware_gen.plan"]
    assert len(graph) > 60


def test_no_import_circles():
    assert circles(import_graph()) == []


def test_no_upward_imports():
    graph = import_graph()
    upward = sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                    if layer(b) > layer(a))
    assert upward == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
])
def test_circle_finder(graph, expected):
    assert circles(graph) == expected


def test_modules_stay_small():
    """No module over ~400 lines (a few lines of slack for a docstring)."""
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines())
             for name, path in module_files().items()}
    assert {name: n for name, n in sizes.items() if n > 420} == {}
