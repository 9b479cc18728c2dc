"""The scenario file format (tests/scenarios/README.md): reading and checking
its shape, and finding the Kubernetes objects inside it (``objects:`` and the
``apply:`` steps) so they are validated like any manifest."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kuota.api import errors as e
from kuota.api.errors import FieldError, child, index

STEP_ACTIONS = ("cycles", "settle", "apply", "delete", "finish", "advance")
STEP_KEYS = frozenset((*STEP_ACTIONS, "expect", "about", "name"))
TOP_KEYS = frozenset(("name", "about", "source", "config", "featureGates", "objects", "steps"))


def is_scenario(raw: Any) -> bool:
    """A scenario is a mapping with ``steps`` or ``objects`` and no ``kind``."""
    return isinstance(raw, dict) and "kind" not in raw and ("steps" in raw or "objects" in raw)


def scenario_objects(raw: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for prefix, obj, _ in scenario_timeline(raw):
        if prefix:
            yield prefix, obj


def scenario_timeline(raw: dict[str, Any]) -> Iterator[tuple[str, Any, str]]:
    """The scenario's writes in order: ``(prefix, object, "")`` for the world's
    objects and each step's applies, ``("", None, ref)`` for a deletion."""
    for i, obj in enumerate(raw.get("objects") or ()):
        yield index("objects", i), obj, ""
    steps = raw.get("steps")
    for i, step in enumerate(steps if isinstance(steps, list) else ()):
        if not isinstance(step, dict):
            continue
        if isinstance(step.get("apply"), list):
            for j, obj in enumerate(step["apply"]):
                yield index(child(index("steps", i), "apply"), j), obj, ""
        if isinstance(step.get("delete"), list):
            for ref in step["delete"]:
                if isinstance(ref, str):
                    yield "", None, ref


def scenario_errors(raw: dict[str, Any]) -> tuple[list[FieldError], list[str]]:
    """The shape of the scenario itself (not of the objects in it)."""
    errs: list[FieldError] = []
    warns = [f'unknown field "{k}"' for k in raw if k not in TOP_KEYS]
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        errs.append(e.required("name", "a scenario needs a name"))
    if "objects" in raw and not isinstance(raw["objects"], list):
        errs.append(e.invalid("objects", "object", "must be a list of objects"))
    steps = raw.get("steps", [])
    if not isinstance(steps, list):
        errs.append(e.invalid("steps", "object", "must be a list of steps"))
        steps = []
    for i, step in enumerate(steps):
        sp = index("steps", i)
        if not isinstance(step, dict):
            errs.append(e.invalid(sp, type(step).__name__, "a step must be a mapping"))
            continue
        actions = [a for a in STEP_ACTIONS if a in step]
        if len(actions) > 1:
            errs.append(
                e.invalid(sp, "object", f"a step does one thing; found {', '.join(actions)}")
            )
        if not actions and "expect" not in step:
            errs.append(e.required(sp, f"a step needs one of {', '.join(STEP_ACTIONS)}"))
        warns += [f'unknown field "{child(sp, k)}"' for k in step if k not in STEP_KEYS]
        if "cycles" in step and (
            isinstance(step["cycles"], bool)
            or not isinstance(step["cycles"], int)
            or step["cycles"] < 0
        ):
            errs.append(
                e.invalid(child(sp, "cycles"), step["cycles"], "must be a non-negative integer")
            )
        for list_key in ("apply", "delete", "finish"):
            if list_key in step and not isinstance(step[list_key], list):
                errs.append(e.invalid(child(sp, list_key), "object", "must be a list"))
    config = raw.get("config")
    if config is not None:
        from kuota.api.kueue.config import load_config

        block = dict(config) if isinstance(config, dict) else config
        if isinstance(block, dict) and "featureGates" in raw and "featureGates" not in block:
            block["featureGates"] = raw["featureGates"]
        if not isinstance(block, dict):
            errs.append(e.invalid("config", type(block).__name__, "must be a mapping"))
        else:
            _, cfg_errs = load_config(block, "config")
            errs += cfg_errs
    return errs, warns
