"""The import graph of `builder/` has no cycles: every import counts, at module level or inside a function.

A lazy import inside a function hides a cycle from Python at load time but not from a reader, so it counts too.
Read from the source with `ast`; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "builder"

def modules(package: Path = PACKAGE) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package __init__)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _owner(name: str, known: dict) -> str | None:
    """The innermost module of ours that `name` lies in (`builder.x.func` -> `builder.x`)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, is_pkg: bool, known: dict) -> set[str]:
    """Our modules that `module` imports anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_pkg else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # `from pkg import sub` imports the submodule pkg.sub when there is one, else a name from pkg.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in filter(None, (_owner(t, known) for t in targets)):
            found.add(target)
            found.update(_foreign_parents(module, target, known))
    found.discard(module)
    return found


def _foreign_parents(module: str, target: str, known: dict) -> set[str]:
    """Importing a.b.c runs a/__init__ and a/b/__init__ first; that counts unless `module` sits inside them already."""
    parts = target.split(".")
    parents = {".".join(parts[:i]) for i in range(1, len(parts))}
    return {p for p in parents if p in known and not module.startswith(p + ".")}


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    known = modules(package)
    return {m: imports_of(m, path, is_pkg, known) for m, (path, is_pkg) in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One concrete cycle (a -> b -> ... -> a) per strongly connected component with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:  # Tarjan; the graph is a few hundred nodes, recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [_one_cycle(edges, c) for c in components]


def _one_cycle(edges: dict[str, set[str]], component: set[str]) -> list[str]:
    """Shortest path back to the component's first module, staying inside the component."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges[v] & component):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in {sorted(component)}")  # cannot happen in an SCC


def test_the_walker_finds_a_planted_cycle(tmp_path):
    pkg = tmp_path / "builder"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from builder.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from . import c\n")  # relative and function-level
    (pkg / "sub" / "c.py").write_text("import builder.a\n")
    (pkg / "d.py").write_text("from builder.a import name\n")  # imports into the cycle, is not part of it
    found = cycles(graph(pkg))
    assert found == [["builder.a", "builder.sub.b", "builder.sub.c", "builder.a"]]


def test_the_walker_counts_a_foreign_package_init(tmp_path):
    # cli/__init__ imports cli.main, which imports x; x imports cli.opts, which runs cli/__init__ first.
    pkg = tmp_path / "builder"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli" / "__init__.py").write_text("from builder.cli.main import app\n")
    (pkg / "cli" / "main.py").write_text("from builder.cli.opts import f\nfrom builder.x import y\n")
    (pkg / "cli" / "opts.py").write_text("")
    (pkg / "x.py").write_text("from builder.cli.opts import f\n")
    assert cycles(graph(pkg)) == [["builder.cli", "builder.cli.main", "builder.x", "builder.cli"]]


def test_builder_has_no_import_cycle():
    edges = graph()
    assert "builder.build.steps" in edges and edges["builder.build.steps"], "the walker read nothing"
    found = cycles(edges)
    assert not found, "import cycles in builder/:\n" + "\n".join(" -> ".join(c) for c in found)
