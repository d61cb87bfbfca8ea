"""Mutation testing: plant small bugs one at a time with cosmic-ray and report how many the tests kill.

    pip install -e ".[mutation]"
    python tools/mutation.py rules            # one target (see TARGETS), all its modules
    python tools/mutation.py engine --module src/shapetorch/_engine/backward.py

Each target names the modules to mutate and the tests that should catch their bugs. cosmic-ray edits a
module in place, runs the tests, and restores it; a mutant that the tests pass "survives". The report
lists every survivor (file, line, operator) so each can be killed by a new test or explained. Slow: not
part of CI. Run it before resolving an issue that touches one of these parts, and quote the kill rate.
The session databases go to ``.mutation/`` (ignored by git).
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST = "python -m pytest -x -q -p no:cacheprovider -W ignore"

TARGETS: dict[str, tuple[list[str], str]] = {
    "rules": (sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/shapetorch/_rules").glob("*.py")),
              f"{PYTEST} tests/test_rules.py tests/test_einsum.py tests/test_einops.py tests/test_ops_views.py"),
    "engine": (sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/shapetorch/_engine").glob("*.py")),
               f"{PYTEST} tests/test_autograd_engine.py tests/test_autograd_function.py tests/test_checkers.py"),
    "gradcheck": (["src/shapetorch/autograd/gradcheck.py"], f"{PYTEST} tests/test_checkers.py tests/test_autograd_tools.py"),
    "optim": (["src/shapetorch/optim/algorithms.py", "src/shapetorch/optim/optimizer.py",
               "src/shapetorch/optim/lr_scheduler.py"], f"{PYTEST} tests/test_optim.py tests/test_workflows.py"),
    "data": (sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/shapetorch/utils/data").glob("*.py")),
             f"{PYTEST} tests/test_data.py"),
}


def check_baseline(test_command: str) -> None:
    """The unmutated code must pass the test command: a command that fails anyway (a test file that no
    longer exists, a broken test) would count every mutant as killed and report a perfect, empty rate."""
    if subprocess.run(test_command, shell=True, cwd=ROOT, check=False).returncode != 0:
        sys.exit(f"the tests fail without any mutant, so no kill would mean anything: {test_command}")


# One mutant per operator site, the one a plausible slip would make (an off-by-one comparison, a sign, a
# swapped and/or), instead of cosmic-ray's every-operator-into-every-other (ten per `+`): the same sites
# are probed at a tenth of the cost, which is what makes a run over all of `_rules` fit in an hour.
SITE_OPERATORS = {
    "ReplaceBinaryOperator_Add_Sub", "ReplaceBinaryOperator_Sub_Add", "ReplaceBinaryOperator_Mul_Add",
    "ReplaceBinaryOperator_FloorDiv_Mul", "ReplaceBinaryOperator_Mod_FloorDiv", "ReplaceBinaryOperator_Div_Mul",
    "ReplaceBinaryOperator_Pow_Mul", "ReplaceBinaryOperator_BitOr_BitAnd", "ReplaceBinaryOperator_BitAnd_BitOr",
    "ReplaceComparisonOperator_Lt_LtE", "ReplaceComparisonOperator_LtE_Lt", "ReplaceComparisonOperator_Gt_GtE",
    "ReplaceComparisonOperator_GtE_Gt", "ReplaceComparisonOperator_Eq_NotEq", "ReplaceComparisonOperator_NotEq_Eq",
    "ReplaceComparisonOperator_Is_IsNot", "ReplaceComparisonOperator_IsNot_Is", "ReplaceComparisonOperator_In_NotIn",
    "ReplaceComparisonOperator_NotIn_In", "ReplaceAndWithOr", "ReplaceOrWithAnd", "AddNot", "NumberReplacer",
    "ReplaceTrueWithFalse", "ReplaceFalseWithTrue", "ReplaceUnaryOperator_USub_UAdd",
    "ReplaceUnaryOperator_Delete_Not", "ZeroIterationForLoop", "RemoveDecorator", "ReplaceBreakWithContinue",
    "ReplaceContinueWithBreak", "ExceptionReplacer",
}


def annotation_rows(module: str) -> set[int]:
    """Lines that hold only annotations. Under `from __future__ import annotations` they are never
    evaluated, so a mutant there (`int | None` into `int & None`) is equivalent: no test can kill it."""
    tree = ast.parse((ROOT / module).read_text())
    rows: set[int] = set()
    for node in ast.walk(tree):
        notes: list[ast.expr | None] = []
        if isinstance(node, ast.arg):
            notes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        for note in notes:
            if note is not None:
                rows.update(range(note.lineno, (note.end_lineno or note.lineno) + 1))
    return rows


def prune(session: Path, module: str, every_operator: bool, sample: float = 1.0) -> None:
    """Drop equivalent mutants (inside annotations) and, unless asked for all, keep one per site; with
    `sample` < 1 keep that fraction, drawn by a fixed seed (the same mutants on every run, so a rate before
    and after a new test compare the same set)."""
    draw = random.Random(f"{module}:{sample}")
    db = sqlite3.connect(session)
    notes = annotation_rows(module)
    doomed = []
    for job, op, row, col, end_row, _end_col in db.execute(
        "SELECT job_id, operator_name, start_pos_row, start_pos_col, end_pos_row, end_pos_col FROM mutation_specs"
    ):
        in_note = row in notes and end_row in notes and _inside_annotation(module, row, col)
        kept_operator = every_operator or op.split("/")[-1] in SITE_OPERATORS
        if in_note or not kept_operator or draw.random() >= sample:
            doomed.append((job,))
    db.executemany("DELETE FROM mutation_specs WHERE job_id = ?", doomed)
    db.executemany("DELETE FROM work_items WHERE job_id = ?", doomed)
    db.commit()


def _inside_annotation(module: str, row: int, col: int) -> bool:
    # A line can hold an annotation and code (`def f(x: int = a + 1)`): the mutant is in the annotation
    # only when its column falls inside one of that line's annotation spans.
    for node in ast.walk(ast.parse((ROOT / module).read_text())):
        notes = [node.annotation] if isinstance(node, (ast.arg, ast.AnnAssign)) else (
            [node.returns] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else [])
        for note in notes:
            if note is None:
                continue
            starts = (note.lineno, note.col_offset) <= (row, col)
            ends = (row, col) < (note.end_lineno or note.lineno, note.end_col_offset or 0)
            if starts and ends:
                return True
    return False


def run_module(
    module: str, test_command: str, out: Path, timeout: float, every_operator: bool = False, dry_run: bool = False,
    sample: float = 1.0,
) -> dict[str, object]:
    name = module.replace("/", "_").removesuffix(".py")
    config, session = out / f"{name}.toml", out / f"{name}.sqlite"
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(module)}\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(test_command)}\n"
        "[cosmic-ray.distributor]\nname = \"local\"\n"
    )
    session.unlink(missing_ok=True)
    subprocess.run(["cosmic-ray", "init", str(config), str(session)], cwd=ROOT, check=True)
    prune(session, module, every_operator, sample)
    if dry_run:
        count = sqlite3.connect(session).execute("SELECT count(*) FROM mutation_specs").fetchone()[0]
        return {"mutants": count, "killed": 0, "survived": 0, "survivors": []}
    subprocess.run(["cosmic-ray", "exec", str(config), str(session)], cwd=ROOT, check=True)
    return summarize(session)


def summarize(session: Path) -> dict[str, object]:
    """Killed, survived and the survivors' places, read from cosmic-ray's session database."""
    db = sqlite3.connect(session)
    rows = db.execute(
        "SELECT m.module_path, m.start_pos_row, m.operator_name, r.test_outcome FROM mutation_specs m "
        "JOIN work_results r ON r.job_id = m.job_id"
    ).fetchall()
    survivors = [f"{path}:{line} {op}" for path, line, op, outcome in rows if outcome == "SURVIVED"]
    killed = sum(1 for *_, outcome in rows if outcome in ("KILLED",))
    return {"mutants": len(rows), "killed": killed, "survived": len(survivors), "survivors": survivors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target", choices=sorted(TARGETS))
    ap.add_argument("--module", action="append", help="mutate only this module (repeatable)")
    ap.add_argument("--tests", help="pytest arguments to run instead of the target's (a faster, targeted set)")
    ap.add_argument("--every-operator", action="store_true",
                    help="all of cosmic-ray's mutants per site (about ten times slower), not one per site")
    ap.add_argument("--sample", type=float, default=1.0,
                    help="run this fraction of the mutants (seeded: the same ones each run); the rate is then an estimate")
    ap.add_argument("--dry-run", action="store_true", help="count the mutants per module and stop")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant's test run")
    args = ap.parse_args()
    if shutil.which("cosmic-ray") is None:
        sys.exit('cosmic-ray is not installed: pip install -e ".[mutation]"')
    modules, test_command = TARGETS[args.target]
    if args.tests:
        test_command = f"{PYTEST} {args.tests}"
    # cosmic-ray edits the module in this checkout: a run cut short leaves its last mutant in the file,
    # and tests run here meanwhile see the mutants. Start only from clean sources (restore with
    # `git checkout -- src` after an interrupted run), and run nothing else in this checkout meanwhile.
    if subprocess.run(["git", "diff", "--quiet", "--", "src"], cwd=ROOT, check=False).returncode != 0:
        sys.exit("src/ has uncommitted changes (a mutant left by an interrupted run?): see `git diff src`")
    if not args.dry_run:
        check_baseline(test_command)
    out = ROOT / ".mutation"
    out.mkdir(exist_ok=True)
    total = {"mutants": 0, "killed": 0, "survived": 0}
    for module in args.module or modules:
        res = run_module(module, test_command, out, args.timeout, args.every_operator, args.dry_run,
                         args.sample)
        for k in total:
            total[k] += int(res[k])  # type: ignore[call-overload]
        rate = 100 * int(res["killed"]) / max(1, int(res["mutants"]))  # type: ignore[call-overload]
        print(f"{module}: {res['killed']}/{res['mutants']} killed ({rate:.1f}%)")
        for s in res["survivors"]:  # type: ignore[attr-defined]
            print(f"  survived: {s}")
    rate = 100 * total["killed"] / max(1, total["mutants"])
    print(f"{args.target}: {total['killed']}/{total['mutants']} killed ({rate:.1f}%)")


if __name__ == "__main__":
    main()
