"""The admission core (``admission_core.AdmissionCore``): Kueue's cache and
its workload, ClusterQueue, LocalQueue, priority-class, flavor and
admission-check controllers, one concept per module. The modules below the
facade never import it, nor the cycle: each part is given the parts it uses.
"""
