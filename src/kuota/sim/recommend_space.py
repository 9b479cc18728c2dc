"""The quota designs ``kuota recommend`` tries: variations of a base design.

What varies, read from the base's manifests (raw documents, so that the
winner is written back as the user wrote the base, field for field):

* the nominal GPU quota of every ClusterQueue and Cohort, per flavor (GPU
  model): the total is drawn from a ladder around the base's (a third of it
  to one and a half times), split in the base's proportions or with seeded
  noise, at least one GPU where the base has any;
* each of those quotas' borrowing and lending limits: the base's scaled
  with the quota, none, or half the quota (a lending limit never above the
  quota, as Kueue's validation requires);
* fair-sharing weights (half, as is, double), when the base's Kueue
  Configuration enables fair sharing (they mean nothing otherwise);
* BizGroupResourceQuota GPU keys (``spec.hard``, budgets included), scaled
  with the total: roots rounded up and other groups down, so that children
  always fit their parent.

Candidate 0 is the base itself. Everything is drawn from one seeded
``random.Random``: the same base, count and seed give the same candidates.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from kuota.api.decode import iter_objects
from kuota.api.quantity import Quantity, QuantityError

__all__ = ["BaseDesign", "Candidate", "base_design", "candidates"]

KUEUE_GROUP = "kueue.x-k8s.io/"
KUOTA_GROUP = "kuota.dev/"
QUOTA_KINDS = ("ClusterQueue", "Cohort")
BIZRQ = "BizGroupResourceQuota"
CONFIG_GROUPS = ("config.kueue.x-k8s.io/", "config.openshift.io/")
LADDER = (0.33, 1.5)  # the totals tried, as a share of the base's
NOISE = 0.4  # sigma of the log-normal noise on each quota's share
WEIGHTS = (0.5, 1.0, 2.0)


@dataclass(frozen=True, slots=True)
class Slot:
    """One GPU quota of a ClusterQueue or Cohort: document, resourceGroup,
    flavor and resource index, in GPU-resource units."""

    doc: int
    path: tuple[int, int, int]
    owner: str  # "ClusterQueue/ls"
    flavor: str
    nominal: int
    borrowing: int | None
    lending: int | None
    limits: bool  # in a cohort (Kueue allows limits only there)


@dataclass
class BaseDesign:
    documents: list[dict[str, Any]]  # every document, List items flattened
    resource: str  # the GPU resource quotas are in
    scale: int  # its units per GPU
    fair_sharing: bool
    slots: list[Slot] = field(default_factory=list)
    weighted: list[int] = field(default_factory=list)  # docs with a fair-sharing weight
    bizrqs: list[int] = field(default_factory=list)

    @property
    def gpus(self) -> float:
        return sum(s.nominal for s in self.slots) / self.scale


@dataclass(frozen=True)
class Candidate:
    name: str
    gpus: float  # nominal GPU quota over every ClusterQueue and Cohort
    summary: str  # what it sets, one line
    documents: tuple[dict[str, Any], ...] = field(repr=False, compare=False)

    def yaml(self, header: str = "") -> str:
        """Every document: the manifests to apply."""
        body = yaml.safe_dump_all(list(self.documents), sort_keys=False, default_flow_style=False)
        return header + body

    def objects_yaml(self) -> str:
        """The objects only: a Kueue Configuration (or OpenShift's) is the base's, shared."""
        docs = [d for d in self.documents if not _is_config(d)]
        return yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False)


def _is_config(doc: dict[str, Any]) -> bool:
    api = str(doc.get("apiVersion", ""))
    return api.startswith(CONFIG_GROUPS) or (
        api == "kueue.openshift.io/v1" and doc.get("kind") == "Kueue"
    )


# ---------------------------------------------------------------------- the base
def _units(value: Any) -> int | None:
    """A quantity's whole units, rounded up as Kueue's ResourceValue (None if absent)."""
    if value is None:
        return None
    try:
        return Quantity.from_value(value).int64_value()
    except (QuantityError, TypeError, ValueError):
        return None


def _flatten(raws: list[Any]) -> Iterator[dict[str, Any]]:
    for raw in raws:
        for _, obj in iter_objects(raw):
            if isinstance(obj, dict):
                yield obj


def base_design(raws: list[Any], resource: str, scale: int, fair_sharing: bool) -> BaseDesign:
    """The base's documents (already checked by loading them as a world)
    and the quotas that may vary."""
    docs = [copy.deepcopy(d) for d in _flatten(raws)]
    base = BaseDesign(docs, resource, scale, fair_sharing)
    for i, d in enumerate(docs):
        api, kind = str(d.get("apiVersion", "")), d.get("kind")
        spec: dict[str, Any] = d["spec"] if isinstance(d.get("spec"), dict) else {}
        name = (d.get("metadata") or {}).get("name", "")
        if api.startswith(KUEUE_GROUP) and kind in QUOTA_KINDS:
            # cohortName (v1beta2), cohort (v1beta1), parentName / parent (Cohorts)
            has_parent = any(spec.get(k) for k in ("cohortName", "cohort", "parentName", "parent"))
            for g, group in enumerate(spec.get("resourceGroups") or ()):
                for f, flavor in enumerate(group.get("flavors") or ()):
                    for r, res in enumerate(flavor.get("resources") or ()):
                        nominal = _units(res.get("nominalQuota"))
                        if res.get("name") == resource and nominal is not None:
                            base.slots.append(
                                Slot(
                                    i,
                                    (g, f, r),
                                    f"{kind}/{name}",
                                    str(flavor.get("name", "")),
                                    nominal,
                                    _units(res.get("borrowingLimit")),
                                    _units(res.get("lendingLimit")),
                                    has_parent,
                                )
                            )
            if fair_sharing:
                base.weighted.append(i)
        if api.startswith(KUOTA_GROUP) and kind == BIZRQ and _gpu_keys(d):
            base.bizrqs.append(i)
    return base


def _gpu_keys(doc: dict[str, Any]) -> list[str]:
    hard = (doc.get("spec") or {}).get("hard") or {}
    return [k for k in hard if "nvidia.com/gpu" in k or "gpu-milli" in k]


# ---------------------------------------------------------------------- candidates
def _split(total: int, shares: list[float], floors: list[int]) -> list[int]:
    """``total`` units in proportion to ``shares`` (largest remainder), each at least its floor."""
    out = list(floors)
    left = total - sum(floors)
    s = sum(shares)
    if left <= 0 or s <= 0:
        return out
    exact = [left * x / s for x in shares]
    whole = [math.floor(x) for x in exact]
    rest = left - sum(whole)
    order = sorted(range(len(shares)), key=lambda k: (-(exact[k] - whole[k]), k))
    for k in order[:rest]:
        whole[k] += 1
    return [a + b for a, b in zip(out, whole, strict=True)]


def _limit(rng: random.Random, base: int | None, nominal_base: int, nominal: int) -> int | None:
    """A borrowing or lending limit for a quota of ``nominal`` units."""
    options: list[int | None] = [None, max(0, nominal // 2)]
    if base is not None:
        scaled = round(base * nominal / nominal_base) if nominal_base else base
        options = [scaled, scaled, *options]  # the base's, scaled, most often
    return rng.choice(options)


def _quantity(units: int) -> str:
    return str(units)


def _apply(
    base: BaseDesign,
    values: list[tuple[int, int | None, int | None]],
    weights: list[float],
    factor: float,
) -> list[dict[str, Any]]:
    docs = [copy.deepcopy(d) for d in base.documents]
    for slot, (nominal, borrowing, lending) in zip(base.slots, values, strict=True):
        g, f, r = slot.path
        res = docs[slot.doc]["spec"]["resourceGroups"][g]["flavors"][f]["resources"][r]
        res["nominalQuota"] = _quantity(nominal)
        for key, v in (("borrowingLimit", borrowing), ("lendingLimit", lending)):
            if v is None:
                res.pop(key, None)
            else:
                res[key] = _quantity(v)
    for i, w in zip(base.weighted, weights, strict=True):
        spec = docs[i]["spec"]
        fs = spec.get("fairSharing") if isinstance(spec.get("fairSharing"), dict) else {}
        spec["fairSharing"] = {**fs, "weight": _num(w)}
    for i in base.bizrqs:
        spec = docs[i]["spec"]
        child = bool(spec.get("parentBizGroup"))
        for k in _gpu_keys(docs[i]):
            units = _units(spec["hard"][k])
            if units is None:
                continue
            scaled = units * factor
            spec["hard"][k] = _quantity(math.floor(scaled) if child else math.ceil(scaled))
    return docs


def _num(w: float) -> str:
    return str(int(w)) if w == int(w) else f"{w:g}"


def _base_weight(doc: dict[str, Any]) -> float:
    fs = (doc.get("spec") or {}).get("fairSharing") or {}
    try:
        return float(Quantity.from_value(fs.get("weight", 1)).milli_value()) / 1000
    except (QuantityError, TypeError, ValueError):
        return 1.0


def _summary(
    base: BaseDesign, values: list[tuple[int, int | None, int | None]], weights: list[float]
) -> str:
    parts = []
    for slot, (nominal, borrowing, lending) in zip(base.slots, values, strict=True):
        owner = slot.owner.split("/", 1)[1]
        flavors = {s.flavor for s in base.slots if s.owner == slot.owner}
        label = f"{owner}/{slot.flavor}" if len(flavors) > 1 else owner
        text = f"{label} {_num(nominal / base.scale)}"
        limits = []
        if borrowing is not None:
            limits.append(f"borrow<={_num(borrowing / base.scale)}")
        if lending is not None:
            limits.append(f"lend<={_num(lending / base.scale)}")
        if limits:
            text += f" ({', '.join(limits)})"
        parts.append(text)
    for i, w in zip(base.weighted, weights, strict=True):
        if w != _base_weight(base.documents[i]):
            name = (base.documents[i].get("metadata") or {}).get("name", "")
            parts.append(f"{name} weight {_num(w)}")
    return "; ".join(parts)


def candidates(base: BaseDesign, count: int, seed: int) -> list[Candidate]:
    """``count`` distinct designs, the base first, then the others by seed."""
    rng = random.Random(seed)
    unit = base.scale
    base_values = [(s.nominal, s.borrowing, s.lending) for s in base.slots]
    base_weights = [_base_weight(base.documents[i]) for i in base.weighted]
    out = [
        Candidate(
            "base", base.gpus, _summary(base, base_values, base_weights), tuple(base.documents)
        )
    ]
    seen = {_key(base_values, base_weights)}
    total0 = sum(s.nominal for s in base.slots)
    lo, hi = LADDER
    others = max(count - 1, 0)
    # An even ladder of totals, each tried once, in a seeded order.
    ladder = [lo + (hi - lo) * k / max(others - 1, 1) for k in range(others)]
    rng.shuffle(ladder)
    tries = 0
    while len(out) < count and tries < 50 * max(count, 1):
        factor = ladder[(len(out) - 1) % len(ladder)] if ladder else 1.0
        if tries >= others:  # repeats: draw the total afresh
            factor = rng.uniform(lo, hi)
        tries += 1
        floors = [1 if s.nominal > 0 else 0 for s in base.slots]  # in GPUs
        total = max(sum(floors), round(total0 * factor / unit))
        noisy = len(out) % 2 == 0
        shares = [s.nominal * (math.exp(rng.gauss(0, NOISE)) if noisy else 1.0) for s in base.slots]
        nominals = [n * unit for n in _split(total, shares, floors)]
        values: list[tuple[int, int | None, int | None]] = []
        for s, n in zip(base.slots, nominals, strict=True):
            if not s.limits:
                values.append((n, None, None))
                continue
            borrowing = _limit(rng, s.borrowing, s.nominal, n)
            lending = _limit(rng, s.lending, s.nominal, n)
            values.append((n, borrowing, min(lending, n) if lending is not None else None))
        weights = [w * rng.choice(WEIGHTS) for w in base_weights]
        key = _key(values, weights)
        if key in seen:
            continue
        seen.add(key)
        real = sum(nominals) / total0 if total0 else 1.0
        docs = _apply(base, values, weights, real)
        out.append(
            Candidate(
                f"c{len(out):02d}",
                sum(nominals) / unit,
                _summary(base, values, weights),
                tuple(docs),
            )
        )
    return out


def _key(values: list[tuple[int, int | None, int | None]], weights: list[float]) -> tuple[Any, ...]:
    return (tuple(values), tuple(weights))
