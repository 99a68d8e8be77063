"""The package has no import cycle, counting imports inside functions too (a lazy import hides a cycle from
Python, not from a reader): data flows one way, dataset -> run -> front -> views."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ((ROOT / "treeexplorer", "treeexplorer"), (ROOT / "solvers", "treeexplorer.solvers"))


def _modules() -> dict[str, Path]:
    mods = {}
    for base, pkg in PACKAGES:
        for path in base.rglob("*.py"):
            parts = [pkg, *path.relative_to(base).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


def _imports(name: str, path: Path, mods: dict) -> set[str]:
    """Modules of the package that ``name`` imports anywhere (``if TYPE_CHECKING:`` blocks excepted)."""

    def owner(dotted: str) -> str:
        while dotted and dotted not in mods:
            dotted = dotted.rpartition(".")[0]
        return dotted

    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for n in ast.walk(node)
    }
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out |= {owner(a.name) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = (
                ".".join(here[: len(here) - node.level + 1] + [node.module or ""]).strip(".")
                if node.level
                else node.module
            )
            for a in node.names:
                full = f"{base}.{a.name}"
                out.add(full if full in mods else owner(base or ""))
    return {m for m in out if m in mods and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_the_package_has_no_import_cycle():
    mods = _modules()
    graph = {name: _imports(name, path, mods) for name, path in mods.items()}
    assert len(mods) > 50 and sum(map(len, graph.values())) > 100  # the walk saw the package
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_search_engine_imports_nothing_of_the_app():
    mods = _modules()
    for name, path in mods.items():
        if name.startswith("treeexplorer.solvers"):
            bad = {m for m in _imports(name, path, mods) if not m.startswith("treeexplorer.solvers")}
            assert not bad, f"{name} imports {sorted(bad)}"
