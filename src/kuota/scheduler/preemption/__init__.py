"""Who yields: choosing the victims that let a workload fit.

Classic preemption (withinClusterQueue, reclaimWithinCohort,
borrowWithinCohort with its priority threshold, hierarchical reclaim) picks
Kueue's minimal set in Kueue's order (``preemptor``); fair-sharing preemption
compares dominant resource shares with the configured strategies
(``fairsharing``). Restated from Kueue's pkg/scheduler/preemption
(preemption.go, classical/, fairsharing/, common/).
"""
