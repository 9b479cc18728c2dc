"""The mapping: defaults, the file's keys, GPU requests per policy, and
errors naming line and column."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from kuota.sim.mapping import Mapping, gpu_request, k8s_name, load_mapping
from kuota.sim.trace import InputError


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("LS", "ls"),
        ("app_0", "app-0"),
        ("Burstable", "burstable"),
        ("Team A/B.c", "team-a-b-c"),
        ("_x_", "x"),
        ("___", ""),
        ("a" * 80, "a" * 63),
    ],
)
def test_k8s_name(text: str, name: str) -> None:
    assert k8s_name(text) == name


def test_defaults() -> None:
    m = Mapping()
    t = m.team("Burstable")
    assert (t.namespace, t.queue, t.priority_class, t.where) == (
        "burstable",
        "burstable",
        None,
        None,
    )
    assert m.flavor("V100M16") == ("v100m16", None)
    assert m.flavor("") == (None, None)  # any flavor
    assert (m.gpu_resource, m.gpu_scale) == ("nvidia.com/gpu", 1)
    assert "round-up" in m.describe()


def test_gpu_requests_per_policy() -> None:
    up, milli = Mapping(), Mapping(fractional="milli")
    assert [gpu_request(Decimal(g), up) for g in ("0.05", "0.46", "1", "2", "1.5")] == [
        1,
        1,
        1,
        2,
        2,
    ]
    assert [gpu_request(Decimal(g), milli) for g in ("0.05", "0.46", "1", "0.0005")] == [
        50,
        460,
        1000,
        1,
    ]
    assert (milli.gpu_resource, milli.gpu_scale) == ("kuota.dev/gpu-milli", 1000)


def test_file(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text(
        "fractionalGpus: milli\n"
        "milliResource: example.com/gpu-milli\n"
        "requests: [gpus, memory]\n"
        "teams:\n"
        "  LS: {namespace: openb, queue: ls, priorityClass: high}\n"
        "  BE: openb/be\n"
        '  "*": {namespace: other}\n'
        "gpuModels:\n"
        "  V100M16: v100\n"
        '  "": a100\n'
    )
    m = load_mapping(p)
    assert (m.fractional, m.gpu_resource, m.requests) == (
        "milli",
        "example.com/gpu-milli",
        ("gpus", "memory"),
    )
    ls = m.team("LS")
    assert (ls.key, ls.priority_class, ls.where) == ("openb/ls", "high", (str(p), 5, 3))
    assert m.team("BE").key == "openb/be"
    assert m.team("Guaranteed").key == "other/guaranteed"
    assert m.flavor("V100M16") == ("v100", (str(p), 9, 3))
    assert m.flavor("")[0] == "a100"
    assert m.flavor("T4") == ("t4", None)


@pytest.mark.parametrize(
    ("text", "line", "col", "reason"),
    [
        ("bogus: 1\n", 1, 1, 'unknown key "bogus"'),
        ("fractionalGpus: half\n", 1, 17, '"half" is not one of round-up, milli'),
        ("milliResource: gpu\n", 1, 16, "not an extended resource name"),
        ("requests: [gpus, disks]\n", 1, 18, '"disks" is not one of'),
        ("teams:\n  LS: ls\n", 2, 7, 'teams.LS: "ls" is not namespace/queue'),
        ("teams:\n  LS: {queue: Q_1}\n", 2, 7, 'queue "Q_1" is not a Kubernetes name'),
        ("teams:\n  LS: {team: x}\n", 2, 8, 'unknown key "team"'),
        ("teams: [a]\n", 1, 8, "teams: expected a mapping"),
        ("gpuModels:\n  T4: T_4\n", 2, 7, '"T_4" is not a flavor name'),
        ("teams:\n  LS: a/b\n  LS: a/c\n", 3, 3, 'key "LS" appears twice'),
        ("teams: {a: [\n", 2, 1, "not YAML"),
    ],
)
def test_bad_mapping_names_line_and_column(
    tmp_path: Path, text: str, line: int, col: int, reason: str
) -> None:
    p = tmp_path / "m.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        load_mapping(p)
    err = exc.value
    assert (err.file, err.line, err.col) == (str(p), line, col), str(err)
    assert reason in err.reason


def test_empty_mapping_is_the_default(tmp_path: Path) -> None:
    p = tmp_path / "m.yaml"
    p.write_text("# nothing\n")
    assert load_mapping(p).team("LS").key == "ls/ls"
