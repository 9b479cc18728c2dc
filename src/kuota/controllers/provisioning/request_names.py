"""The names Kueue gives a check's ProvisioningRequests and their
PodTemplates (``provisioning.go``), and the attempt a name carries."""

from __future__ import annotations

import hashlib
import re
from typing import Final

__all__ = ["attempt_of", "limit_object_name", "pod_template_name", "request_name"]

_HASH_LENGTH: Final = 5
_MAX_PREFIX: Final = 252 - _HASH_LENGTH  # 253, less the '-' and the hash


def limit_object_name(full: str) -> str:
    """``limitObjectName``: long names cut, with a piece of their SHA-1 appended."""
    if len(full) <= _MAX_PREFIX:
        return full
    digest = hashlib.sha1(full.encode()).hexdigest()
    return f"{full[:_MAX_PREFIX]}-{digest[:_HASH_LENGTH]}"


def request_name(workload: str, check: str, attempt: int) -> str:
    return limit_object_name(f"{workload}-{check}-{attempt}")


def pod_template_name(request: str, pod_set: str) -> str:
    return limit_object_name(f"ppt-{request}-{pod_set}")


def attempt_of(name: str, workload: str, check: str) -> int | None:
    """The attempt number of a request of this workload and check (None: the
    name is not one of theirs)."""
    prefix = limit_object_name(f"{workload}-{check}-")
    m = re.fullmatch(re.escape(prefix) + r"([0-9]+)", name)
    return int(m.group(1)) if m else None
