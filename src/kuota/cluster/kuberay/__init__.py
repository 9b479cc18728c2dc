"""KubeRay's operator in the embedded cluster: its RayCluster, RayJob and
RayService controllers (KubeRay installs no defaulting webhook; its checks
run in these controllers, ``kuota.api.ray.kuberay_rules``)."""
