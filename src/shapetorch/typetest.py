"""Typetests: mypy (with the shapetorch plugin) over files with inline expectations.

    y = a @ c  # E: inner dimensions do not match  [matmul_error_inner_dimensions_do_not_match]
    reveal_type(a @ b)  # N: Tensor[tuple[Literal[2], Literal[5]], shapetorch.float32]

``# E: <text>  [code]`` expects an error whose message contains ``<text>`` (and whose code is
``code``, when given); ``# N: <text>`` expects a note (``reveal_type``, ``reveal_shape``). Several
expectations may share a line. The check runs both ways: every diagnostic must be expected and
every expectation met.

    python -m shapetorch.typetest PATH...              # files or folders of *.py
    python -m shapetorch.typetest --no-plugin PATH...  # mypy without the plugin (degraded mode)

No config file is needed: the runner writes one with ``plugins = shapetorch_mypy``. mypy is
imported only when a check runs (it is a test dependency, not a runtime one).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Diagnostic", "Result", "check_files", "check_main", "expectations", "main", "run_mypy"]

_EXPECT = re.compile(r"#\s*(E|N):\s*(.*?)\s*(?:\[([\w-]+)\])?\s*(?=#\s*[EN]:|$)")
_OUT = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+): (?P<sev>error|note): (?P<msg>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error" | "note"
    message: str
    code: str | None


@dataclass
class Result:
    path: Path
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def expectations(path: Path) -> dict[int, list[Diagnostic]]:
    """``line -> expected diagnostics`` from the ``# E:`` / ``# N:`` comments of ``path``."""
    out: dict[int, list[Diagnostic]] = {}
    for no, line in enumerate(path.read_text().splitlines(), 1):
        start = _first_expectation(line)
        if start < 0:
            continue
        for m in _EXPECT.finditer(line, start):
            sev = "error" if m.group(1) == "E" else "note"
            out.setdefault(no, []).append(Diagnostic(sev, m.group(2), m.group(3)))
    return out


def _first_expectation(line: str) -> int:
    found = [i for i in (line.find("# E:"), line.find("# N:")) if i >= 0]
    return min(found) if found else -1


def _config(plugin: bool, extra: str) -> str:
    # A cache of its own: a project's `mypy src/` run analyses shapetorch from its sources, these runs
    # from its stubs, and one cache holding both confuses mypy (cross references into the other).
    cache = Path(".mypy_cache").resolve() / ("shapetorch-plugin" if plugin else "shapetorch-noplugin")
    lines = ["[mypy]", "warn_unused_ignores = True", "show_error_codes = True", f"cache_dir = {cache}"]
    if plugin:
        lines.append("plugins = shapetorch_mypy")
    return "\n".join(lines) + "\n" + extra


def run_mypy(files: Sequence[str | os.PathLike[str]], *, plugin: bool = True, args: Sequence[str] = (),
             config: str = "") -> tuple[str, str, int]:
    """Run mypy on ``files`` with (or without) the plugin configured; (stdout, stderr, exit status)."""
    from mypy import api

    with tempfile.TemporaryDirectory() as tmp:
        ini = Path(tmp) / "mypy.ini"
        ini.write_text(_config(plugin, config))
        argv = ["--config-file", str(ini), "--no-error-summary", *args, *[str(f) for f in files]]
        return api.run(argv)


def check_files(paths: Sequence[Path], *, plugin: bool = True, args: Sequence[str] = ()) -> list[Result]:
    """One mypy run over ``paths``; each file's diagnostics compared with its expectations."""
    files = [p.resolve() for p in paths]
    stdout, stderr, status = run_mypy(files, plugin=plugin, args=args)
    got: dict[Path, dict[int, list[Diagnostic]]] = {f: {} for f in files}
    by_name = {f.name: f for f in files}
    stray: list[str] = []
    for line in stdout.splitlines():
        m = _OUT.match(line)
        if not m:
            if line.strip():
                stray.append(line)
            continue
        where = Path(m["file"]).resolve()
        if where not in got:  # mypy replays cached errors under the path it first saw the module at
            where = by_name.get(where.name, where)
        diag = Diagnostic(m["sev"], m["msg"], m["code"])
        if where in got:
            got[where].setdefault(int(m["line"]), []).append(diag)
        else:
            stray.append(line)
    results = [Result(f, _compare(f, expectations(f), got[f])) for f in files]
    if status == 2 or stderr.strip() or stray:
        results[0].problems.insert(0, f"mypy failed (status {status}):\n{stderr}{chr(10).join(stray)}")
    return results


def _compare(path: Path, expected: dict[int, list[Diagnostic]], got: dict[int, list[Diagnostic]]) -> list[str]:
    problems: list[str] = []
    for no in sorted(set(expected) | set(got)):
        left = list(got.get(no, []))
        for exp in expected.get(no, []):
            hit = next((g for g in left if g.severity == exp.severity and exp.message in g.message
                        and (exp.code is None or exp.code == g.code)), None)
            if hit is None:
                seen = "; ".join(f"{g.severity}: {g.message} [{g.code}]" for g in left) or "nothing"
                problems.append(f"{path.name}:{no}: expected {exp.severity} {exp.message!r} [{exp.code}], got {seen}")
            else:
                left.remove(hit)
        for g in left:
            problems.append(f"{path.name}:{no}: unexpected {g.severity}: {g.message}  [{g.code}]")
    return problems


def _collect(args: Sequence[str]) -> list[Path]:
    out: list[Path] = []
    for a in args:
        p = Path(a)
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m shapetorch.typetest [--no-plugin] PATH...``: 0 when every file matches."""
    argv = list(sys.argv[1:] if argv is None else argv)
    plugin = "--no-plugin" not in argv
    paths = _collect([a for a in argv if a != "--no-plugin"])
    if not paths:
        print("usage: python -m shapetorch.typetest [--no-plugin] PATH...", file=sys.stderr)
        return 2
    results = check_files(paths, plugin=plugin)
    for r in results:
        print(f"{'ok  ' if r.ok else 'FAIL'} {r.path}")
        for p in r.problems:
            print(f"    {p}")
    return 0 if all(r.ok for r in results) else 1


def check_main(argv: list[str]) -> int:
    """``shapetorch check FILES``: mypy with the plugin on FILES, output as mypy prints it."""
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: shapetorch check [mypy options] FILES...\n"
              "Type-checks FILES with mypy and the shapetorch plugin (shape and dtype errors).")
        return 0 if argv else 2
    from mypy import api

    with tempfile.TemporaryDirectory() as tmp:
        ini = Path(tmp) / "mypy.ini"
        ini.write_text(_config(True, ""))
        stdout, stderr, status = api.run(["--config-file", str(ini), *argv])
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
