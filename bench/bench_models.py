"""How much each type checker finds on the model corpus (``typetests/models/``), and what it gets wrong.

    python bench/bench_models.py           (mypy + plugin, mypy alone, pyright; a table and JSON)

The corpus is whole programs written from the user docs: ``bug_*.py`` carry one planted bug on the
line marked ``# BUG:``, ``ok_*.py`` are correct (including tricky-but-legal code). A checker *catches*
a bug when it reports an error on the marked line; an error on a line marked ``# ALSO:`` (where the
same bug shows again, say in a return type) is neither a catch nor false; every other error is a
*false error*. Each checker
runs once over the whole corpus (mypy is the slow part).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "typetests" / "models"
CHECKERS = ("mypy+plugin", "mypy", "pyright")
_MYPY_LINE = re.compile(r"^(?P<file>[^:]+\.py):(?P<line>\d+): error: (?P<msg>.*)$")


def programs() -> list[Path]:
    return sorted(MODELS.glob("*.py"))


def bug_line(path: Path) -> int | None:
    """The line of the planted bug (``# BUG:``), or None for a correct program."""
    for no, line in enumerate(path.read_text().splitlines(), 1):
        if "# BUG:" in line:
            return no
    return None


def also_lines(path: Path) -> set[int]:
    """Lines where the planted bug shows again (``# ALSO:``)."""
    return {no for no, line in enumerate(path.read_text().splitlines(), 1) if "# ALSO:" in line}


@dataclass
class Score:
    checker: str
    caught: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    false_errors: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        n = len(self.caught) + len(self.missed)
        return len(self.caught) / n if n else 0.0


def mypy_errors(paths: Sequence[Path], plugin: bool) -> dict[Path, list[tuple[int, str]]]:
    from shapetorch.typetest import run_mypy

    stdout, stderr, status = run_mypy(paths, plugin=plugin, args=["--no-warn-unused-ignores"])
    if status == 2:
        raise RuntimeError(f"mypy failed: {stderr}{stdout}")
    by_name = {p.name: p for p in paths}
    out: dict[Path, list[tuple[int, str]]] = {p: [] for p in paths}
    for line in stdout.splitlines():
        m = _MYPY_LINE.match(line)
        if m and Path(m["file"]).name in by_name:
            out[by_name[Path(m["file"]).name]].append((int(m["line"]), m["msg"]))
    return out


def pyright_errors(paths: Sequence[Path]) -> dict[Path, list[tuple[int, str]]]:
    exe = Path(sys.executable).parent / "pyright"
    proc = subprocess.run([str(exe), "--pythonpath", sys.executable, "--outputjson", *map(str, paths)],
                          check=False, capture_output=True, text=True, cwd=MODELS, timeout=600)
    report = json.loads(proc.stdout)
    out: dict[Path, list[tuple[int, str]]] = {p: [] for p in paths}
    by_name = {p.name: p for p in paths}
    for d in report["generalDiagnostics"]:
        name = Path(d["file"]).name
        if d["severity"] == "error" and name in by_name:
            out[by_name[name]].append((d["range"]["start"]["line"] + 1, d["message"].splitlines()[0]))
    return out


def pyright_available() -> bool:
    return (Path(sys.executable).parent / "pyright").exists()


def score(checker: str, paths: Sequence[Path] | None = None) -> Score:
    paths = list(paths or programs())
    if checker == "pyright":
        errors = pyright_errors(paths)
    else:
        errors = mypy_errors(paths, plugin=checker == "mypy+plugin")
    s = Score(checker)
    for p in paths:
        bug = bug_line(p)
        on_bug = [e for e in errors[p] if e[0] == bug]
        also = also_lines(p)
        s.false_errors += [f"{p.name}:{no}: {msg}" for no, msg in errors[p] if no != bug and no not in also]
        if bug is not None:
            (s.caught if on_bug else s.missed).append(p.name)
    return s


def main() -> None:
    scores = [score(c) for c in CHECKERS if c != "pyright" or pyright_available()]
    for s in scores:
        print(f"{s.checker:12} caught {len(s.caught):2}/{len(s.caught) + len(s.missed)}"
              f"  recall {s.recall:.0%}  false errors {len(s.false_errors)}")
        for f in s.false_errors:
            print(f"    false: {f}")
        print(f"    missed: {', '.join(s.missed) or '-'}")
    print(json.dumps({s.checker: {"caught": len(s.caught), "bugs": len(s.caught) + len(s.missed),
                                  "false_errors": len(s.false_errors)} for s in scores}))


if __name__ == "__main__":
    main()
