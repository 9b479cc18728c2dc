"""ray.io: KubeRay's RayCluster, RayJob and RayService."""
