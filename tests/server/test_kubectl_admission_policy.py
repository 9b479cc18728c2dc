"""The real kubectl against ``kuota serve`` with Kueue's sample
ValidatingAdmissionPolicies (copies of kubernetes-sigs/kueue's
site/static/examples/sample-*-policy*.yaml, commit ff69552e): applied,
listed, and enforced on writes as kube-apiserver enforces them, with its
Status (422 Invalid, ``The jobs "x" is invalid: : ValidatingAdmissionPolicy
'<policy>' with binding '<binding>' denied request: <message>``)."""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import needs_kubectl

pytestmark = needs_kubectl

DATA = Path(__file__).resolve().parents[1] / "data" / "vap"
# (shared with the other admission-policy test)
WORLD = (DATA.parent / "vap-world.yaml").read_text()
JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  namespace: {ns}
  labels: {labels}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x{resources}}}]
"""
REQ = ', resources: {requests: {cpu: "1"}}'


def _job(name: str, ns: str = "team", labels: str = "{}", resources: str = REQ) -> str:
    return JOB.format(name=name, ns=ns, labels=labels, resources=resources)


def test_kueue_sample_policies_are_enforced(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    s = serve(str(world))
    for f in sorted(DATA.glob("*.yaml")):
        s.ok("apply", "-f", str(f))
    names = s.ok("get", "validatingadmissionpolicies", "-o", "name").split()
    assert names == [
        "validatingadmissionpolicy.admissionregistration.k8s.io/sample-enforce-requests-policy",
        "validatingadmissionpolicy.admissionregistration.k8s.io/sample-validating-admission-policy",
    ]
    rows = [r.split() for r in s.ok("get", "validatingadmissionpolicybindings").splitlines()]
    assert rows[0] == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    assert rows[1][:3] == [
        "sample-enforce-requests-policy-binding",
        "sample-enforce-requests-policy",
        "<unset>",
    ]
    rows = [r.split() for r in s.ok("get", "validatingadmissionpolicies").splitlines()]
    assert rows[0] == ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"]
    assert rows[1][:3] == ["sample-enforce-requests-policy", "1", "<unset>"]

    # A Job without the queue-name label in a labelled namespace: refused.
    r = s.kubectl("apply", "-f", "-", input=_job("nolabel"))
    assert r.returncode == 1
    err = " ".join(r.stderr.split())
    assert (
        'The jobs "nolabel" is invalid: : ValidatingAdmissionPolicy '
        "'sample-validating-admission-policy' with binding "
        "'sample-validating-admission-policy-binding' denied request: The label "
        "'kueue.x-k8s.io/queue-name' is either missing or does not have a value set."
    ) in err, err
    # One without requests or limits: the other sample refuses it.
    r = s.kubectl(
        "apply",
        "-f",
        "-",
        input=_job("noreq", labels="{kueue.x-k8s.io/queue-name: lq}", resources=""),
    )
    assert r.returncode == 1
    err = " ".join(r.stderr.split())
    assert (
        "ValidatingAdmissionPolicy 'sample-enforce-requests-policy' with binding "
        "'sample-enforce-requests-policy-binding' denied request: Every container in the "
        "job/deployment must specify resource requests or limits."
    ) in err, err
    # A Job as the policies want it is admitted, and Kueue runs it (its own
    # updates of the Job pass the same policies).
    assert "job.batch/good created" in s.ok(
        "apply", "-f", "-", input=_job("good", labels="{kueue.x-k8s.io/queue-name: lq}")
    )
    # A namespace without the label is not bound: anything goes.
    assert "job.batch/free created" in s.ok(
        "apply", "-f", "-", input=_job("free", ns="free", resources="")
    )
    wls = s.json("get", "workloads", "-n", "team")["items"]
    assert len(wls) == 1

    # Deleting the binding lifts the policy.
    s.ok("delete", "validatingadmissionpolicybinding", "sample-validating-admission-policy-binding")
    assert "job.batch/nolabel created" in s.ok("apply", "-f", "-", input=_job("nolabel"))


WARN_BINDING = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: queue-name-warn}
spec:
  policyName: sample-validating-admission-policy
  validationActions: [Warn, Audit]
  matchResources:
    namespaceSelector: {matchLabels: {kueue-managed: "true"}}
"""


def test_a_warn_binding_admits_and_kubectl_prints_the_warning(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """validationActions [Warn, Audit]: the Job is stored, and kube-apiserver's
    warning (a ``Warning: 299 - "..."`` header) is what kubectl prints
    (validating/dispatcher.go); the Audit action's annotation goes to the
    server's log (kuota keeps no audit log)."""
    world = tmp_path / "world.yaml"
    world.write_text(WORLD)
    s = serve(str(world))
    s.ok("apply", "-f", str(DATA / "sample-validating-policy.yaml"))
    s.ok("apply", "-f", "-", input=WARN_BINDING)
    r = s.kubectl("apply", "-f", "-", input=_job("nolabel"))
    assert r.returncode == 0, r.stderr
    assert "job.batch/nolabel created" in r.stdout
    assert (
        "Warning: Validation failed for ValidatingAdmissionPolicy "
        "'sample-validating-admission-policy' with binding 'queue-name-warn': The label "
        "'kueue.x-k8s.io/queue-name' is either missing or does not have a value set."
    ) in r.stderr, r.stderr
    assert s.json("get", "job", "nolabel", "-n", "team")["metadata"]["name"] == "nolabel"
    log = "".join(s.lines)
    assert "validation.policy.admission.k8s.io/validation_failure" in log, log
    # A Job the policy admits draws no warning.
    r = s.kubectl("apply", "-f", "-", input=_job("good", labels="{kueue.x-k8s.io/queue-name: lq}"))
    assert r.returncode == 0 and "Warning" not in r.stderr, r.stderr
