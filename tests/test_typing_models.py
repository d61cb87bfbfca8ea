"""The model corpus (``typetests/models/``): each program under torch and under shapetorch, then scored per checker.

A program with a planted bug must fail with its marked line on the stack under both runtimes (torch is the oracle of
that verdict) with a shapetorch error code; a correct program must run under both. Then each checker
must report no false error on the corpus; how many bugs each one catches is pinned from below so a
regression shows (``python bench/bench_models.py`` prints the table).
"""

from __future__ import annotations

import contextlib
import runpy
import sys
import traceback
import types
from collections.abc import Iterator
from pathlib import Path

import einops
import pytest
import torch
from bench.bench_models import bug_line, mypy_errors, programs, pyright_available, score

PROGRAMS = programs()


def _torch_as_shapetorch() -> dict[str, types.ModuleType]:
    """Modules standing in for ``shapetorch``, ``shapetorch.nn``, ``shapetorch.nn.functional`` and
    ``shapetorch.distributions``, backed by torch."""
    top = types.ModuleType("shapetorch")
    top.__getattr__ = lambda name: getattr(torch, name)  # type: ignore[method-assign]
    # shapetorch carries einops' functions at top level (st.rearrange); the einops package is their oracle
    for name in ("rearrange", "reduce", "repeat"):
        setattr(top, name, getattr(einops, name))

    class Dim:  # named dims are only annotations: torch needs the class to exist
        pass

    top.Dim = Dim  # type: ignore[attr-defined]
    top.nn = torch.nn  # type: ignore[attr-defined]
    return {"shapetorch": top, "shapetorch.nn": torch.nn, "shapetorch.nn.functional": torch.nn.functional,
            "shapetorch.distributions": torch.distributions}


@contextlib.contextmanager
def _modules(replacements: dict[str, types.ModuleType]) -> Iterator[None]:
    saved = {name: sys.modules.get(name) for name in replacements}
    sys.modules.update(replacements)
    try:
        yield
    finally:
        for name, mod in saved.items():
            if mod is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = mod


def _run(path: Path) -> BaseException | None:
    try:
        runpy.run_path(str(path), run_name="corpus")["main"]()
    except Exception as exc:  # the verdict is what is checked, not the class alone
        return exc
    return None


def _failing_lines(exc: BaseException, path: Path) -> list[int | None]:
    """The program's lines on the failing stack: the marked line must be one (a helper called with bad
    arguments fails inside the helper, and the bug is the call)."""
    return [f.lineno for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]


def test_corpus_size() -> None:
    bugs = [p for p in PROGRAMS if bug_line(p) is not None]
    assert len(bugs) >= 40 and len(PROGRAMS) - len(bugs) >= 43
    assert all(p.name.startswith("bug_") == (bug_line(p) is not None) for p in PROGRAMS)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_program_under_torch_and_shapetorch(path: Path) -> None:
    torch.manual_seed(0)
    with _modules(_torch_as_shapetorch()):
        oracle = _run(path)
    mine = _run(path)
    bug = bug_line(path)
    if bug is None:
        assert oracle is None, f"torch rejects a correct program: {oracle!r}"
        assert mine is None, f"shapetorch rejects a correct program: {mine!r}"
        return
    assert oracle is not None and bug in _failing_lines(oracle, path), f"torch: {oracle!r}"
    assert mine is not None and bug in _failing_lines(mine, path), f"shapetorch: {mine!r}"
    assert isinstance(mine, type(oracle)), (type(mine), type(oracle))
    assert getattr(mine, "code", None), f"no shapetorch error code: {mine!r}"


# The least each checker must catch (of 40 planted bugs); raise these as the checkers improve. The plugin's
# one miss is bug_vae_prior (a shape through shapetorch.distributions, typed loosely: docs/type-safety.md).
MIN_CAUGHT = {"mypy+plugin": 39, "mypy": 5, "pyright": 16}


@pytest.mark.parametrize("checker", ["mypy+plugin", "mypy", "pyright"])
def test_checker_on_corpus(checker: str) -> None:
    if checker == "pyright" and not pyright_available():
        pytest.skip("pyright is not installed")
    s = score(checker, PROGRAMS)
    print(f"{checker}: caught {len(s.caught)}/{len(s.caught) + len(s.missed)}, missed {s.missed}")
    assert not s.false_errors, "\n".join(s.false_errors)
    assert len(s.caught) >= MIN_CAUGHT[checker], s.missed


def test_plugin_reports_the_runtime_code() -> None:
    """A bug the plugin catches is reported with the code the runtime raises for it, on the marked line: a
    catch under another code (a follow-on error, a mypy type error) would be a different verdict."""
    bugs = [p for p in PROGRAMS if bug_line(p) is not None]
    errors = mypy_errors(bugs, plugin=True)
    wrong = []
    for path in bugs:
        codes = [m.rsplit("[", 1)[-1].rstrip("]") for no, m in errors[path] if no == bug_line(path)]
        if not codes:
            continue  # a miss: test_checker_on_corpus counts those
        if codes == ["call_error_dim_conflict"]:
            continue  # a call against a helper's annotated dims: the signature's contract, broken before the body runs
        exc = _run(path)
        if getattr(exc, "code", None) not in codes:
            wrong.append(f"{path.name}: static {codes}, runtime {getattr(exc, 'code', exc)!r}")
    assert not wrong, "\n".join(wrong)
