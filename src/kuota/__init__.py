"""kuota: Kueue-compatible queueing, quota and gang admission for AI/ML workloads."""

__version__ = "0.1.0"
