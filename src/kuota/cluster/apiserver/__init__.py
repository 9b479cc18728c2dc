"""The API server's part of the embedded cluster, as store hooks: admission
plugins (``pod_admission``: Priority, DefaultTolerationSeconds and
OpenShift's project node selector; ``limitrange``: LimitRanger and the QoS
class; ``apps_validation``; ``node_registration``) and the pod registry's
create strategy (``pod_strategy``)."""
