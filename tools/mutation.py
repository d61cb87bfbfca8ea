"""Mutation testing: plant small bugs one at a time with cosmic-ray and report how many the tests kill.

    pip install -e ".[mutation]"
    python tools/mutation.py rules            # one target (see TARGETS), all its modules
    python tools/mutation.py engine --module src/shapetorch/_engine/backward.py
    python tools/mutation.py record --module src/shapetorch/backends/array_pool.py   # the recording paths' modules
    python tools/mutation.py rules --sample 0.03          # a seeded fraction: the same mutants each run
    python tools/mutation.py rules --resume               # finish a run cut short
    python tools/mutation.py rules --rerun-survivors      # after new tests: before -> after, same mutants
    python tools/mutation.py rules --report               # the rates of the last run, nothing run

Each target names the modules to mutate and the tests that should catch their bugs (per module for the
rules: the pure rule tests, then that family's op tests). cosmic-ray edits a module, runs the tests, and
restores it; a mutant that the tests pass "survives". It works in a scratch copy of the checkout
(``.mutation/tree``), never in the checkout itself, so tests can be written while a run goes on. The
report lists every survivor (file, line, operator) so each can be killed by a new test or explained.
Slow: not part of CI. Run it before resolving an issue that touches one of these parts, and quote the
kill rate. The session databases and ``<target>.json`` (per-module results) go to ``.mutation/``
(ignored by git).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# -x: a mutant is killed by the first failing test, so a killed mutant costs a fraction of a full run;
# no cache: the scratch tree's runs must not depend on each other's order
PYTEST = "python -m pytest -x -q -p no:cacheprovider -W ignore"
RULES = ROOT / "src/shapetorch/_rules"


def _modules(folder: str) -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / folder).glob("*.py") if p.name != "__init__.py")


# The tests for each rule module: its family's op tests (every public op checks its result's shape and
# dtype against the rules in the suite, SHAPETORCH_CHECK_RULES) after the pure rule tests, which run first
# because they kill most mutants in a second. One family's files instead of every family's is what makes
# a mutant cost seconds rather than minutes; a rule module that several families use lists their files.
_RULE_TESTS = {
    "axes": "tests/test_ops_reduction.py tests/test_ops_views.py",
    "broadcast": "tests/test_ops_arithmetic.py tests/test_ops_views.py",
    "dims": "tests/test_ops_views.py tests/test_einops.py",
    "dtypes": "tests/test_ops_arithmetic.py tests/test_ops_elementwise.py",
    "einops": "tests/test_einops.py",
    "einsum": "tests/test_einsum.py",
    "errors": "tests/test_errors.py",
    "fft": "tests/test_ops_fft.py",
    "indexing": "tests/test_ops_indexing.py tests/test_ops_scatter.py",  # unravel_index is tested with scatter
    "inplace": "tests/test_ops_arithmetic.py",
    "joining": "tests/test_ops_joining.py",
    "matmul": "tests/test_ops_matmul.py",
    "matrix": "tests/test_ops_matrix.py tests/test_linalg.py",
    "nn": "tests/test_nn_functional.py",
    "reduction": "tests/test_ops_reduction.py",
    "scan": "tests/test_ops_scan.py",
    "scatter": "tests/test_ops_scatter.py",
    "sorting": "tests/test_ops_sorting.py",
    "statistics": "tests/test_ops_statistics.py",
    "tiling": "tests/test_ops_tiling.py",
    "views": "tests/test_ops_views.py",
}
_ENGINE_TESTS = "tests/test_autograd_engine.py tests/test_autograd_function.py tests/test_checkers.py"

# target -> (modules, test command, per-module test commands where one module needs other tests)
TARGETS: dict[str, tuple[list[str], str, dict[str, str]]] = {
    "rules": (_modules("src/shapetorch/_rules"), f"{PYTEST} tests/test_rules.py",
              {f"src/shapetorch/_rules/{m}.py": f"{PYTEST} tests/test_rules.py {t}" for m, t in _RULE_TESTS.items()}),
    "engine": (_modules("src/shapetorch/_engine"), f"{PYTEST} {_ENGINE_TESTS}", {}),
    "gradcheck": (["src/shapetorch/autograd/gradcheck.py"], f"{PYTEST} tests/test_checkers.py tests/test_autograd_tools.py",
                  {}),
    "optim": (["src/shapetorch/optim/algorithms.py", "src/shapetorch/optim/optimizer.py",
               "src/shapetorch/optim/lr_scheduler.py"], f"{PYTEST} tests/test_optim.py tests/test_workflows.py", {}),
    "data": (_modules("src/shapetorch/utils/data"), f"{PYTEST} tests/test_data.py", {}),
    # The recording paths (compiled per-primitive record, multi-output nodes, formal inputs and gradient ties),
    # the array pool, split/chunk/unbind's one node and the plain tensor types: each module with the test files
    # that own it, chosen to run in seconds, since a surviving mutant costs one full run of them.
    "record": (["src/shapetorch/_engine/backward.py", "src/shapetorch/_engine/primitives.py",
                "src/shapetorch/backends/array_pool.py", "src/shapetorch/ops/_common.py",
                "src/shapetorch/ops/joining.py", "src/shapetorch/_tensor.py"],
               f"{PYTEST} tests/test_engine_record.py tests/test_split_node.py",
               {"src/shapetorch/_engine/primitives.py":
                f"{PYTEST} tests/test_engine_record.py tests/test_parameter_fast_paths.py tests/test_record_fast_paths.py",
                "src/shapetorch/backends/array_pool.py": f"{PYTEST} tests/test_array_pool.py",
                "src/shapetorch/ops/_common.py":
                f"{PYTEST} tests/test_double_backward_formal.py tests/test_inplace_graph.py tests/test_engine_record.py",
                "src/shapetorch/ops/joining.py": f"{PYTEST} tests/test_split_node.py tests/test_ops_joining.py",
                "src/shapetorch/_tensor.py":
                f"{PYTEST} tests/test_parameter_fast_paths.py tests/test_tensor_protocols.py tests/test_autograd_engine.py"}),
}


def check_baseline(test_command: str, tree: Path) -> None:
    """The unmutated code must pass the test command: a command that fails anyway (a test file that no
    longer exists, a broken test) would count every mutant as killed and report a perfect, empty rate."""
    if subprocess.run(test_command, shell=True, cwd=tree, check=False, env=tree_env(tree)).returncode != 0:
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


def make_tree(out: Path) -> Path:
    """A scratch copy of the checkout (tracked files and new ones git does not ignore) for cosmic-ray to
    edit: its mutants never touch the checkout, so tests can be written and run here while a run goes on,
    and a run cut short leaves nothing behind. The test command imports shapetorch from the copy
    (PYTHONPATH before the editable install's path)."""
    tree = out / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file() and not rel.startswith(".mutation/"):
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tree / rel)
    return tree


def tree_env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(tree / p) for p in ("src", "mypy_plugin", "stubs"))
    # the derandomized hypothesis profile: the same examples on every run, so a mutant's verdict is the
    # same before and after (the "dev" profile draws new ones, and a rate would wobble between runs)
    env["HYPOTHESIS_PROFILE"] = "ci"
    return env


_BASELINE_PASSED: set[str] = set()


def session_path(out: Path, module: str) -> Path:
    return out / (module.replace("/", "_").removesuffix(".py") + ".sqlite")


def run_module(
    module: str, test_command: str, out: Path, tree: Path, timeout: float, every_operator: bool = False,
    dry_run: bool = False, sample: float = 1.0, resume: bool = False, skip_baseline: bool = False,
) -> dict[str, object]:
    session = session_path(out, module)
    config = session.with_suffix(".toml")
    config.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(module)}\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(test_command)}\n"
        "[cosmic-ray.distributor]\nname = \"local\"\n"
    )
    if not (resume and session.exists()):
        session.unlink(missing_ok=True)
        subprocess.run(["cosmic-ray", "init", str(config), str(session)], cwd=tree, check=True)
        prune(session, module, every_operator, sample)
    count = sqlite3.connect(session).execute("SELECT count(*) FROM mutation_specs").fetchone()[0]
    if dry_run:
        return {"mutants": count, "killed": 0, "survived": 0, "survivors": [], "pending": count}
    pending = sqlite3.connect(session).execute(
        "SELECT count(*) FROM work_items WHERE job_id NOT IN (SELECT job_id FROM work_results)").fetchone()[0]
    if pending and test_command not in _BASELINE_PASSED and not skip_baseline:
        # checked here, once per command and only for a module with mutants to run: a family's tests
        # cost as much as a surviving mutant, and a sampled run draws none from some modules
        check_baseline(test_command, tree)
        _BASELINE_PASSED.add(test_command)
    # exec runs the work items without a result: all of a new session, the rest of a resumed one
    subprocess.run(["cosmic-ray", "exec", str(config), str(session)], cwd=tree, check=True, env=tree_env(tree))
    return summarize(session)


def forget_survivors(session: Path) -> int:
    """Drop the survivors' results so that `exec` runs them again (after new tests): the same mutants,
    so the rate after compares with the rate before."""
    db = sqlite3.connect(session)
    n = db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'").rowcount
    db.commit()
    return n


def summarize(session: Path) -> dict[str, object]:
    """Killed, survived and the survivors' places, read from cosmic-ray's session database. Mutants not
    yet run (a run cut short) count in neither; `pending` says how many."""
    db = sqlite3.connect(session)
    rows = db.execute(
        "SELECT m.module_path, m.start_pos_row, m.operator_name, r.test_outcome FROM mutation_specs m "
        "JOIN work_results r ON r.job_id = m.job_id"
    ).fetchall()
    total = db.execute("SELECT count(*) FROM mutation_specs").fetchone()[0]
    survivors = sorted((f"{path}:{line} {op.split('/')[-1]}" for path, line, op, outcome in rows
                        if outcome == "SURVIVED"), key=lambda s: (s.split(":")[0], int(s.split(":")[1].split()[0])))
    # an incompetent mutant (it breaks the import) fails every test: killed, as a slip of that kind would be
    killed = sum(1 for *_, outcome in rows if outcome in ("KILLED", "INCOMPETENT"))
    return {"mutants": len(rows), "killed": killed, "survived": len(survivors), "survivors": survivors,
            "pending": total - len(rows)}


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
    ap.add_argument("--resume", action="store_true",
                    help="keep the sessions in .mutation/ and run only their mutants without a result")
    ap.add_argument("--rerun-survivors", action="store_true",
                    help="run the survivors of the last run again (after new tests); prints before -> after")
    ap.add_argument("--skip-baseline", action="store_true",
                    help="do not first run the tests on the unmutated code (only right after running them yourself)")
    ap.add_argument("--report", action="store_true", help="print the rates of the sessions in .mutation/, run nothing")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per mutant's test run")
    args = ap.parse_args()
    if shutil.which("cosmic-ray") is None:
        sys.exit('cosmic-ray is not installed: pip install -e ".[mutation]"')
    modules, default_command, per_module = TARGETS[args.target]
    out = ROOT / ".mutation"
    out.mkdir(exist_ok=True)
    chosen = args.module or modules
    if args.report:
        chosen = [m for m in chosen if session_path(out, m).exists()]
    tree = out / "tree"
    if not args.report:
        tree = make_tree(out)
    total = {"mutants": 0, "killed": 0, "survived": 0, "pending": 0}
    before = {"mutants": 0, "killed": 0}
    report: dict[str, object] = {}
    for module in chosen:
        command = f"{PYTEST} {args.tests}" if args.tests else per_module.get(module, default_command)
        session = session_path(out, module)
        if args.report:
            res = summarize(session)
        elif args.rerun_survivors:
            if not session.exists():
                continue
            old = summarize(session)
            before["mutants"] += int(old["mutants"])  # type: ignore[call-overload]
            before["killed"] += int(old["killed"])  # type: ignore[call-overload]
            forget_survivors(session)
            res = run_module(module, command, out, tree, args.timeout, resume=True, skip_baseline=args.skip_baseline)
            print(f"{module}: before {old['killed']}/{old['mutants']}, after {res['killed']}/{res['mutants']}")
        else:
            res = run_module(module, command, out, tree, args.timeout, args.every_operator, args.dry_run,
                             args.sample, args.resume, args.skip_baseline)
        for k in total:
            total[k] += int(res[k])  # type: ignore[call-overload]
        report[module] = res
        rate = 100 * int(res["killed"]) / max(1, int(res["mutants"]))  # type: ignore[call-overload]
        pending = f", {res['pending']} not run" if res.get("pending") else ""
        print(f"{module}: {res['killed']}/{res['mutants']} killed ({rate:.1f}%){pending}")
        for s in res["survivors"]:  # type: ignore[attr-defined]
            print(f"  survived: {s}")
    rate = 100 * total["killed"] / max(1, total["mutants"])
    print(f"{args.target}: {total['killed']}/{total['mutants']} killed ({rate:.1f}%)")
    if args.rerun_survivors:
        was = 100 * before["killed"] / max(1, before["mutants"])
        print(f"{args.target} before: {before['killed']}/{before['mutants']} killed ({was:.1f}%)")
    if not args.dry_run:
        (out / f"{args.target}.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
