"""The fast replay (the admission core alone) decides as the full one (the
embedded control plane): the same admissions, preemptions and finishes at
the same instants, and the same report, on slices of both shipped traces
with their example designs and on 50 random designs (seeded)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main
from kuota.cli.world import load_world
from kuota.sim.decision_log import DecisionLog, by_instant
from kuota.sim.mapping import Mapping, load_mapping
from kuota.sim.report import DesignResult, design_json
from kuota.sim.simulate import Design, prepare, replay_path, run_plan
from kuota.sim.trace import read_trace

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = ROOT / "examples" / "traces"
DATA = ROOT / "tests" / "data" / "sim"


def _design(paths: list[Path]) -> Design:
    w = load_world([str(p) for p in paths])
    assert not w.problems, w.problems
    assert w.config is not None
    return Design(paths[0].stem, str(paths[0]), w.objects, w.config, w.openshift, w.scheduler)


def both(trace: Path, design: Design, mapping: Mapping) -> tuple[DesignResult, DecisionLog]:
    """Replay on both paths; assert they agree; return the fast result and log."""
    t = read_trace(str(trace), None)
    plan = prepare(t, design, mapping)
    assert replay_path(plan) == "fast"
    fast_log: DecisionLog = []
    fast = run_plan(plan, log=fast_log)
    if fast.stopped == "repeating":
        # Workloads preempting each other at one instant for ever: the full
        # replay would spin to its manager's step limit.
        return fast, fast_log
    full_log: DecisionLog = []
    full = run_plan(prepare(t, design, mapping), full=True, log=full_log)
    assert fast.replay == "fast" and full.replay.startswith("full")
    assert by_instant(fast_log) == by_instant(full_log)
    jf, jg = design_json(fast), design_json(full)
    jf.pop("replay"), jg.pop("replay")
    assert jf == jg
    return fast, fast_log


@pytest.mark.parametrize(
    ("trace", "designs", "mapping"),
    [
        ("openb-slice.csv", ["qos-cohort.yaml", "shared-pool.yaml"], None),
        ("openb-slice.csv", ["shared-pool-milli.yaml"], "milli.mapping.yaml"),
        ("dlrm-slice.csv", ["per-app-quota.yaml", "shared-fleet.yaml"], "mapping.yaml"),
    ],
)
def test_shipped_designs_on_trace_slices(trace: str, designs: list[str], mapping: str) -> None:
    folder = EXAMPLES / trace.split("-")[0]
    m = load_mapping(str(folder / mapping)) if mapping else Mapping()
    for name in designs:
        result, log = both(DATA / trace, _design([folder / name]), m)
        assert result.overall.finished == result.overall.jobs
        assert any(e == "admit" for _, e, _ in log)


def test_preemption_and_pods_ready_on_a_tiny_trace(tmp_path: Path) -> None:
    """Reclaim by preemption, a zero-length job, jobs running past Kueue's
    default pods-ready timeout (5 minutes: their pods are ready at once)."""
    trace = tmp_path / "t.csv"
    trace.write_text(
        "job_id,submit_s,duration_s,team,user,gpus,gpu_model,cpus,memory_mib,pods,status\n"
        "a1,0,1000,team-a,,2,,4,8192,1,x\n"
        "b1,10,500,team-b,,1,,2,4096,1,x\n"
        "a2,20,300,team-a,,1,,2,4096,1,x\n"
        "a3,30,0,team-a,,1,,2,4096,2,x\n"
        "b3,30,700,team-b,,1,,2,4096,1,x\n"
    )
    _, log = both(trace, _design([DATA / "tiny-cohort.yaml"]), Mapping())
    assert ("preempt:InCohortReclamation") in {e for _, e, _ in log}
    assert (10.0, "preempt:InCohortReclamation", "a1") in log


# ------------------------------------------------------------------ random designs
TEAMS = ("team-a", "team-b", "team-c")


def _random_trace(rng: random.Random, path: Path, models: bool) -> None:
    rows = ["job_id,submit_s,duration_s,team,user,gpus,gpu_model,cpus,memory_mib,pods,status"]
    t = 0
    for i in range(36):
        t += rng.choice((0, 0, 5, 30, 60, 200))
        model = rng.choice(("T4", "V100", "")) if models else ""
        gpus = rng.choice(("1", "2", "4", "0.5"))
        pods = rng.choice((1, 1, 1, 2))
        dur = rng.choice((0, 50, 120, 400, 900))
        rows.append(f"j{i},{t},{dur},{rng.choice(TEAMS)},,{gpus},{model},2,4096,{pods},x")
    path.write_text("\n".join(rows) + "\n")


def _random_design(rng: random.Random, path: Path, models: bool) -> dict[str, str]:
    """A world of random quotas, cohorts, limits, preemption policies, fair
    sharing and priorities; returns the mapping's teams (priority classes)."""
    docs = []
    if rng.random() < 0.3:
        docs.append(
            "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
            "fairSharing: {enable: true}"
        )
    flavors = ["t4", "v100"] if models else ["gpu"]
    for f in flavors:
        label = f"{{nodeLabels: {{nvidia.com/gpu.product: {f.upper()}}}}}" if models else "{}"
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
            f"metadata: {{name: {f}}}\nspec: {label}"
        )
    classes = {"low": 10, "high": 100}
    for name, value in classes.items():
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
            f"metadata: {{name: {name}}}\nvalue: {value}"
        )
    cohort = rng.random() < 0.8
    shared = rng.random() < 0.2  # two teams in one ClusterQueue
    cqs = ["cq-a", "cq-a" if shared else "cq-b", "cq-c"]
    for cq in sorted(set(cqs)):
        within = rng.choice(("Never", "LowerPriority", "LowerOrNewerEqualPriority"))
        reclaim = rng.choice(("Never", "LowerPriority", "Any"))
        resources = []
        for f in flavors:
            q = rng.choice((0, 1, 2, 4, 6))
            extra = ""
            if cohort and rng.random() < 0.4:
                extra += f", borrowingLimit: '{rng.choice((0, 1, 3))}'"
            if cohort and rng.random() < 0.3:
                extra += f", lendingLimit: '{rng.choice((0, min(1, q), q))}'"
            resources.append(
                f"    - name: {f}\n      resources:\n"
                f"      - {{name: nvidia.com/gpu, nominalQuota: '{q}'{extra}}}"
            )
        bwc = ""
        if reclaim != "Never" and rng.random() < 0.3:
            bwc = "\n    borrowWithinCohort: {policy: LowerPriority}"
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {cq}}}\n"
            "spec:\n"
            + ("  cohortName: shared\n" if cohort else "")
            + "  namespaceSelector: {}\n"
            + f"  queueingStrategy: {rng.choice(('BestEffortFIFO', 'StrictFIFO'))}\n"
            + f"  preemption:\n    withinClusterQueue: {within}\n"
            + f"    reclaimWithinCohort: {reclaim}{bwc}\n"
            + "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
            + "\n".join(resources)
        )
    teams: dict[str, str] = {}
    for team, cq in zip(TEAMS, cqs, strict=True):
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
            f"metadata: {{namespace: {team}, name: {team}}}\nspec: {{clusterQueue: {cq}}}"
        )
        teams[team] = rng.choice(("", "low", "high"))
    path.write_text("\n---\n".join(docs) + "\n")
    return teams


def test_fifty_random_designs(tmp_path: Path) -> None:
    rng = random.Random(30)
    preempted = admitted = spinning = 0
    for i in range(50):
        models = i % 3 == 2
        trace, world = tmp_path / f"t{i}.csv", tmp_path / f"d{i}.yaml"
        _random_trace(rng, trace, models)
        teams = _random_design(rng, world, models)
        lines = ["requests: [gpus]", "teams:"]
        for team, pc in teams.items():
            entry = f"{{namespace: {team}, queue: {team}" + (
                f", priorityClass: {pc}}}" if pc else "}"
            )
            lines.append(f"  {team}: {entry}")
        (tmp_path / f"m{i}.yaml").write_text("\n".join(lines) + "\n")
        m = load_mapping(str(tmp_path / f"m{i}.yaml"))
        try:
            result, log = both(trace, _design([world]), m)
        except AssertionError as err:
            raise AssertionError(f"design {i} ({world.read_text()}): {err}") from err
        except Exception as err:  # a design the checks refuse (no quota for a team)
            if type(err).__name__ not in ("InputError", "DesignError"):
                raise
            continue
        if result.stopped == "repeating":
            spinning += 1
            continue
        admitted += sum(1 for _, e, _ in log if e == "admit")
        preempted += sum(1 for _, e, _ in log if e.startswith("preempt"))
    # The designs exercise what they are meant to.
    assert admitted > 500 and preempted > 20 and spinning <= 3


# ------------------------------------------------------------------ the command
def test_simulate_says_which_replay_ran_and_full_replay_forces_it(tmp_path: Path) -> None:
    args = ["simulate", "--trace", str(DATA / "tiny.csv"), "--no-progress", "-v"]
    out = tmp_path / "r.json"
    fast = CliRunner().invoke(
        main, [*args, "--world", str(DATA / "tiny-cohort.yaml"), "--json", str(out)]
    )
    assert fast.exit_code == 0, fast.output
    assert "design tiny-cohort: fast replay" in fast.stderr
    assert json.loads(out.read_text())["replay"] == "fast"
    full = CliRunner().invoke(
        main,
        [*args, "--world", str(DATA / "tiny-cohort.yaml"), "--full-replay", "--json", str(out)],
    )
    assert full.exit_code == 0, full.output
    assert "design tiny-cohort: full replay (asked for (--full-replay))" in full.stderr
    assert json.loads(out.read_text())["replay"] == "full"
    # A design with its own nodes places pods on them: the full replay.
    nodes = CliRunner().invoke(
        main,
        [*args, "--world", str(DATA / "tiny-pool.yaml"), "--world", str(DATA / "tiny-node.yaml")],
    )
    assert nodes.exit_code == 0, nodes.output
    assert "full replay (its nodes come from the design (1 node): pods are placed on them)" in (
        nodes.stderr
    )
