"""The modules of biasamp form no import circle, counting the imports inside functions too.

A lazy import (inside a function) that closes a circle only hides it: the two
modules still depend on each other. The graph is read from the source with
``ast`` (every ``import`` / ``from ... import`` anywhere in a module, relative
ones resolved), one edge to the most specific module an import names, as
import-linter's graph does (importing ``biasamp.a.b`` is not counted as an
import of the package ``biasamp.a``). No allow-list: there is no circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import biasamp

SRC = Path(biasamp.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The biasamp modules ``name`` imports, anywhere in its source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the biasamp modules it imports."""
    modules = _modules()
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_circles_finds_a_circle_of_lazy_imports() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_holds_lazy_and_relative_imports() -> None:
    graph = import_graph()
    assert "biasamp.report._model" in graph["biasamp.report"]  # ``from ._model import *`` (relative)
    assert "biasamp.report._html" in graph["biasamp.report._model"]  # inside a method (lazy)
    assert "biasamp._engine.groups" in graph["biasamp.fairness._metrics"]


def test_no_import_circle_between_modules_of_biasamp() -> None:
    found = circles(import_graph())
    assert not found, "import circles (a lazy import only hides one: move what both need below them):\n" + \
        "\n".join(" <-> ".join(c) for c in found)
