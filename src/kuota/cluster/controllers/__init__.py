"""The built-in controllers kube-controller-manager and the kubelet run in
the embedded cluster, each a ``ClusterController`` (``controller_base``) of
the manager: workloads (``job_controller``, ``cronjob_controller``,
``daemonset_controller``, ``replicaset_controller``, ``deployment_*``,
``statefulset_controller``, ``ttl_after_finished``), nodes
(``node_lifecycle``, ``taint_eviction``, ``nodeops``), the kubelet
(``kubelet``) and graceful termination of evicted pods (``eviction``)."""
