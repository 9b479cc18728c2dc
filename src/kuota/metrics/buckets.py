"""Kueue's histogram buckets (``pkg/metrics/metrics.go``)."""

from __future__ import annotations

from typing import Final

# 1, 2.5, 5, 10, ... 10240 s: 1 then 2.5·2^k.
E14: Final = (1.0, *(2.5 * 2**k for k in range(13)))
# E14 + 20480, 40960 s.
E16: Final = (*E14, 20480.0, 40960.0)
