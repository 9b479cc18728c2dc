"""Hashes of ``kuota simulate``'s decisions, to hold a speed-up to the same
decisions as before it: the whole openb trace on its three example designs,
the whole dlrm month on its two, and N random designs (the generator of
tests/sim/test_fastreplay.py, another seed). Each hash covers the decision
log in the order the decisions were made (stricter than the tests' per
instant comparison) and the JSON report but for its replay path.

    python bench/decision_hashes.py [--random 200] [--json FILE]
    python bench/decision_hashes.py --check FILE   # exit 1 on any difference

Run it on each build (PYTHONPATH=build/mypyc for the compiled one) before
and after a change; ``kuota --version`` names the build in the output.
bench/decision_hashes.json holds the hashes of the last recorded run (paths
in the reports are written relative to the checkout, so any checkout gives
the same ones): ``--check bench/decision_hashes.json`` after a change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.sim.test_fastreplay import _random_design, _random_trace  # noqa: E402

from kuota import build  # noqa: E402
from kuota.cli.world import load_world  # noqa: E402
from kuota.sim.decision_log import DecisionLog  # noqa: E402
from kuota.sim.mapping import Mapping, load_mapping  # noqa: E402
from kuota.sim.report import design_json  # noqa: E402
from kuota.sim.simulate import Design, prepare, run_plan  # noqa: E402
from kuota.sim.trace import read_trace  # noqa: E402

EXAMPLES = REPO / "examples" / "traces"
TRACES = REPO.parent / "shared" / "traces"


def _design(path: Path) -> Design:
    w = load_world([str(path)])
    assert not w.problems and w.config is not None, w.problems
    return Design(path.stem, str(path), w.objects, w.config, w.openshift, w.scheduler)


def decision_hash(trace: Path, design: Path, mapping: Mapping) -> str:
    t = read_trace(str(trace), None)
    log: DecisionLog = []
    try:
        result = run_plan(prepare(t, _design(design), mapping), log=log)
    except Exception as err:  # a design the checks refuse: the refusal is the result
        if type(err).__name__ not in ("InputError", "DesignError"):
            raise
        text = str(err).replace(str(trace.parent), "DIR")  # (a temporary directory)
        return "refused:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    report = design_json(result)
    path = report.pop("replay")
    text = json.dumps([log, report], sort_keys=True, default=str)
    # The report names the design's and mapping's files: the same hash from
    # any checkout (and any temporary directory).
    text = text.replace(str(trace.parent), "DIR").replace(str(REPO), "REPO")
    h = hashlib.sha256(text.encode())
    return f"{path}:{h.hexdigest()[:16]}:{len(log)}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=200)
    ap.add_argument("--seed", type=int, default=3030)
    ap.add_argument("--skip-traces", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--check", type=Path, help="compare with an earlier --json")
    a = ap.parse_args()
    out: dict[str, str] = {}
    if not a.skip_traces:
        openb = TRACES / "alibaba-gpu-2023-openb.csv"
        for d in ("qos-cohort", "shared-pool"):
            out[f"openb/{d}"] = decision_hash(openb, EXAMPLES / "openb" / f"{d}.yaml", Mapping())
        milli = load_mapping(EXAMPLES / "openb" / "milli.mapping.yaml")
        d = EXAMPLES / "openb" / "shared-pool-milli.yaml"
        out["openb/shared-pool-milli"] = decision_hash(openb, d, milli)
        dm = load_mapping(EXAMPLES / "dlrm" / "mapping.yaml")
        for d in ("per-app-quota", "shared-fleet"):
            out[f"dlrm/{d}"] = decision_hash(
                TRACES / "alibaba-gpu-2025-dlrm.csv", EXAMPLES / "dlrm" / f"{d}.yaml", dm
            )
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for i in range(a.random):
            models = i % 3 == 2
            trace, world, mp = t / f"t{i}.csv", t / f"d{i}.yaml", t / f"m{i}.yaml"
            _random_trace(rng, trace, models)
            teams = _random_design(rng, world, models)
            lines = ["requests: [gpus]", "teams:"]
            for team, pc in teams.items():
                pcs = f", priorityClass: {pc}" if pc else ""
                lines.append(f"  {team}: {{namespace: {team}, queue: {team}{pcs}}}")
            mp.write_text("\n".join(lines) + "\n")
            out[f"random/{i}"] = decision_hash(trace, world, load_mapping(mp))
    print(f"build: {build()}")
    for k, v in out.items():
        if not k.startswith("random/"):
            print(f"{k}: {v}")
    rnd = hashlib.sha256(
        json.dumps([v for k, v in out.items() if k.startswith("random/")]).encode()
    )
    print(f"random x{a.random}: {rnd.hexdigest()[:16]}")
    if a.json is not None:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    if a.check is not None:
        old = json.loads(a.check.read_text())
        diff = [k for k in out if old.get(k) != out[k]]
        for k in diff:
            print(f"DIFFERS {k}: {old.get(k)} -> {out[k]}")
        print(f"{len(out) - len(diff)} of {len(out)} equal to {a.check}")
        sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
