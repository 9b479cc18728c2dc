"""Where a workload goes: one flavor per podSet and resource group.

For each podSet, resource groups are decided in turn; each tries its flavors
in order, rules out those whose labels or taints the podSet cannot use, then
checks quota: fit, fit by borrowing, fit by preempting, or no fit. Flavor
fungibility decides whether to stop at a flavor or look further. Restated
from Kueue's pkg/scheduler/flavorassigner/ (``assigner``: the search;
``assignment``: what it returns; ``matching``: a flavor's labels and taints).
"""
