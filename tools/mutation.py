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
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST = "python -m pytest -x -q -p no:cacheprovider -W ignore"

TARGETS: dict[str, tuple[list[str], str]] = {
    "rules": (sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/shapetorch/_rules").glob("*.py")),
              f"{PYTEST} tests/test_rules.py tests/test_einsum.py tests/test_einops.py tests/test_ops_shape.py"),
    "engine": (sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/shapetorch/_engine").glob("*.py")),
               f"{PYTEST} tests/test_autograd_engine.py tests/test_autograd_function.py tests/test_checkers.py"),
    "gradcheck": (["src/shapetorch/autograd/gradcheck.py"], f"{PYTEST} tests/test_checkers.py tests/test_autograd_tools.py"),
    "optim": (["src/shapetorch/optim/algorithms.py", "src/shapetorch/optim/optimizer.py",
               "src/shapetorch/optim/lr_scheduler.py"], f"{PYTEST} tests/test_optim.py tests/test_workflows.py"),
    "data": (sorted(str(p.relative_to(ROOT)) for p in (ROOT / "src/shapetorch/utils/data").glob("*.py")),
             f"{PYTEST} tests/test_data.py"),
}


def run_module(module: str, test_command: str, out: Path, timeout: float) -> dict[str, object]:
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
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per mutant's test run")
    args = ap.parse_args()
    if shutil.which("cosmic-ray") is None:
        sys.exit('cosmic-ray is not installed: pip install -e ".[mutation]"')
    modules, test_command = TARGETS[args.target]
    out = ROOT / ".mutation"
    out.mkdir(exist_ok=True)
    total = {"mutants": 0, "killed": 0, "survived": 0}
    for module in args.module or modules:
        res = run_module(module, test_command, out, args.timeout)
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
