"""One scheduling cycle: flavor assignment, fit, borrowing, preemption, admission."""
