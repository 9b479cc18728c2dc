"""Kueue's ProvisioningRequest admission check (``pkg/controller/admissionchecks/provisioning``):
the AdmissionCheck's Active condition and, for each workload holding quota,
the ProvisioningRequests and their PodTemplates, and the check's state read
back from the autoscaler's answer."""

from kuota.controllers.provisioning.check_activity import ProvisioningCheckActivity
from kuota.controllers.provisioning.provisioning_controller import ProvisioningController

__all__ = ["ProvisioningCheckActivity", "ProvisioningController", "provisioning_controllers"]


def provisioning_controllers() -> list[object]:
    """The two controllers Kueue runs for the check (always on since v0.14's GA)."""
    return [ProvisioningCheckActivity(), ProvisioningController()]
