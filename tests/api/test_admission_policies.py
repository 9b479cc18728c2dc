"""ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1)
in the CLI: Kueue's sample policies (copies of kubernetes-sigs/kueue's
site/static/examples/sample-*-policy*.yaml, commit ff69552e) are accepted by
``kuota validate`` and enforced in ``kuota run`` as Kueue's docs say
(site/content/en/docs/tasks/manage/enforce_job_management/
setup_job_admission_policy.md): in a namespace labelled
``kueue-managed: "true"`` a Job without the queue-name label, or with a
container without requests or limits, is refused with kube-apiserver's
message; elsewhere nothing is. A policy kube-apiserver would refuse is
refused with its field paths."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "vap"
# (shared with the other admission-policy test)
WORLD = (DATA.parent / "vap-world.yaml").read_text()
JOB = """
---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: {ns}, labels: {labels}}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x{resources}}}]
"""
REQ = ', resources: {requests: {cpu: "1"}}'
QUEUED = "{kueue.x-k8s.io/queue-name: lq}"


def _kuota(*args: str) -> tuple[int, str]:
    p = subprocess.run(
        [sys.executable, "-m", "kuota", *args], capture_output=True, text=True, timeout=120
    )
    return p.returncode, " ".join((p.stdout + p.stderr).split())


def test_validate_accepts_kueues_sample_policies() -> None:
    code, out = _kuota("validate", str(DATA))
    assert code == 0, out
    assert "4 objects in 4 files: 4 valid, 0 invalid" in out


def test_run_enforces_kueues_sample_policies(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(DATA, world)
    jobs = (
        JOB.format(name="queued", ns="team", labels=QUEUED, resources=REQ)
        + JOB.format(name="unlabelled", ns="team", labels="{}", resources=REQ)
        + JOB.format(name="norequests", ns="team", labels=QUEUED, resources="")
        + JOB.format(name="elsewhere", ns="free", labels="{}", resources="")
    )
    (world / "world.yaml").write_text(WORLD + jobs)
    code, out = _kuota("run", str(world), "--until", "5m")
    assert code == 1, out  # (objects of the world were refused)
    assert "2 objects of the world refused when created (not run)" in out
    assert (
        'Job/team/unlabelled: jobs.batch "unlabelled" is forbidden: ValidatingAdmissionPolicy '
        "'sample-validating-admission-policy' with binding "
        "'sample-validating-admission-policy-binding' denied request: The label "
        "'kueue.x-k8s.io/queue-name' is either missing or does not have a value set."
    ) in out
    assert (
        'Job/team/norequests: jobs.batch "norequests" is forbidden: ValidatingAdmissionPolicy '
        "'sample-enforce-requests-policy' with binding 'sample-enforce-requests-policy-binding' "
        "denied request: Every container in the job/deployment must specify resource requests "
        "or limits."
    ) in out
    assert "1 admission of 1 workload" in out  # the queued Job, and Kueue's updates of it
    assert "free/elsewhere" in out  # not bound there: runs, unmanaged


def test_policies_kube_apiserver_refuses_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(
        """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bad}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE, PATCH], resources: [jobs]}
  validations:
  - {expression: "object.spec.parallelism >", reason: Teapot}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bad}
spec:
  validationActions: [Deny, Warn, Deny]
"""
    )
    code, out = _kuota("validate", str(f))
    assert code == 1, out
    for line in (
        'spec.matchConstraints.resourceRules[0].operations[1]: Unsupported value: "PATCH"',
        'spec.validations[0].expression: Invalid value: "object.spec.parallelism >": '
        "compilation failed: ERROR: <input>:1:26: Syntax error",
        'spec.validations[0].reason: Unsupported value: "Teapot"',
        "spec.policyName: Required value",
        'spec.validationActions[2]: Duplicate value: "Deny"',
        'must not contain both "Deny" and "Warn"',
    ):
        assert line in out, line


JOBSET_WORLD = """
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
integrations:
  frameworks: [batch/job, jobset.x-k8s.io/jobset]
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: team, labels: {kueue.x-k8s.io/queue-name: lq}}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]
"""


def _jobset_run(tmp_path: Path, policy: str) -> tuple[str, str]:
    world = tmp_path / "world"
    world.mkdir(parents=True)
    shutil.copy(DATA / "sample-validating-policy-binding.yaml", world)
    (world / "sample-validating-policy.yaml").write_text(policy)
    (world / "world.yaml").write_text(WORLD + JOBSET_WORLD)
    state = tmp_path / "state"
    code, out = _kuota("run", str(world), "--until", "10m", "--state", str(state))
    assert code == 0, out
    _, jobs = _kuota("get", "jobs", "-n", "team", "--state", str(state))
    _, events = _kuota("get", "events", "-n", "team", "--state", str(state), "-o", "json")
    return jobs, events


def test_the_jobset_exclusion_is_evaluated_as_written(tmp_path: Path) -> None:
    """The sample's ``exclude-jobset-owned`` condition compares an owner
    reference's apiVersion (``jobset.x-k8s.io/v1alpha2``) with the group
    alone, so it never holds: as on a cluster, the JobSet's child Jobs
    (which carry no queue-name label: JobSet copies its template's labels,
    not its own) are refused. Compared by group, they are created."""
    sample = (DATA / "sample-validating-policy.yaml").read_text()
    jobs, events = _jobset_run(tmp_path / "as-shipped", sample)
    assert "No resources found" in jobs
    assert (
        'job \\"js-workers-0\\" creation failed with error: jobs.batch \\"js-workers-0\\" is '
        "forbidden: ValidatingAdmissionPolicy 'sample-validating-admission-policy'"
    ) in events
    fixed = sample.replace(
        "o.apiVersion=='jobset.x-k8s.io'", "o.apiVersion.startsWith('jobset.x-k8s.io/')"
    )
    assert fixed != sample
    jobs, events = _jobset_run(tmp_path / "fixed", fixed)
    assert "js-workers-0" in jobs and "js-workers-1" in jobs
    assert "JobCreationFailed" not in events


PARAM_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: parallelism-limit}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
  variables:
  - {name: limit, expression: "int(params.data.maxParallelism)"}
  validations:
  - expression: "!has(object.spec.parallelism) || object.spec.parallelism <= variables.limit"
    messageExpression: "'parallelism ' + string(object.spec.parallelism) + ' is over ' + string(variables.limit)"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: parallelism-limit}
spec:
  policyName: parallelism-limit
  validationActions: [Deny]
  paramRef: {name: limits, parameterNotFoundAction: Deny}
"""
PARAMS = """
---
{apiVersion: v1, kind: ConfigMap, metadata: {name: limits, namespace: team}, data: {maxParallelism: "2"}}
"""


def _parallel(name: str, ns: str, n: int) -> str:
    return f"""
---
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: {ns}}}
spec:
  parallelism: {n}
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: x}}]
"""


def test_a_policy_reads_its_params_from_the_binding_paramref(tmp_path: Path) -> None:
    """paramKind + paramRef (by name, in the request's namespace for a
    namespaced kind), variables and messageExpression, and
    parameterNotFoundAction Deny where the namespace has no such ConfigMap."""
    world = tmp_path / "world"
    world.mkdir()
    (world / "a-policy.yaml").write_text(PARAM_POLICY)
    (world / "b-world.yaml").write_text(
        WORLD
        + PARAMS
        + _parallel("narrow", "team", 2)
        + _parallel("wide", "team", 3)
        + _parallel("elsewhere", "free", 1)
    )
    code, out = _kuota("run", str(world), "--until", "1m")
    assert code == 1, out
    assert "2 objects of the world refused when created (not run)" in out
    assert (
        'Job/team/wide: jobs.batch "wide" is forbidden: ValidatingAdmissionPolicy '
        "'parallelism-limit' with binding 'parallelism-limit' denied request: "
        "parallelism 3 is over 2"
    ) in out
    assert (
        'Job/free/elsewhere: jobs.batch "elsewhere" is forbidden: ValidatingAdmissionPolicy '
        "'parallelism-limit' with binding 'parallelism-limit' denied request: failed to "
        "configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction"
    ) in out
    assert "Job/team/narrow" not in out


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
AUDIT_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: parallelism-audit}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}
  auditAnnotations:
  - key: parallelism
    valueExpression: "has(object.spec.parallelism) ? 'parallelism ' + string(object.spec.parallelism) : ''"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: parallelism-audit}
spec: {policyName: parallelism-audit, validationActions: [Audit]}
"""


def test_warn_and_audit_actions_admit_and_say_so(tmp_path: Path) -> None:
    """A binding's Warn action admits with kube-apiserver's warning
    (validating/dispatcher.go: ``Validation failed for
    ValidatingAdmissionPolicy '<p>' with binding '<b>': <message>``), which
    ``kuota run`` prints as kubectl does; Audit adds the request's
    ``validation.policy.admission.k8s.io/validation_failure`` annotation and
    a policy's auditAnnotations ``<policy>/<key>`` (blank: none), printed as
    the audit log would keep them."""
    world = tmp_path / "world"
    world.mkdir()
    # (in file order: the policies before the Jobs)
    shutil.copy(DATA / "sample-validating-policy.yaml", world / "a-policy.yaml")
    (world / "a-binding.yaml").write_text(WARN_BINDING)
    (world / "b-audit.yaml").write_text(AUDIT_POLICY)
    (world / "c-world.yaml").write_text(
        WORLD
        + JOB.format(name="unlabelled", ns="team", labels="{}", resources=REQ)
        + _parallel("wide", "team", 3).replace("metadata: {", "metadata: {labels: " + QUEUED + ", ")
    )
    code, out = _kuota("run", str(world), "--until", "5m")
    assert code == 0, out  # nothing refused
    assert (
        "Job/team/unlabelled: Warning: Validation failed for ValidatingAdmissionPolicy "
        "'sample-validating-admission-policy' with binding 'queue-name-warn': The label "
        "'kueue.x-k8s.io/queue-name' is either missing or does not have a value set."
    ) in out
    assert (
        "Job/team/unlabelled: audit annotation validation.policy.admission.k8s.io/"
        'validation_failure: [{"message":"The label \'kueue.x-k8s.io/queue-name\' is either '
        'missing or does not have a value set.","policy":"sample-validating-admission-policy",'
        '"binding":"queue-name-warn","expressionIndex":0,"validationActions":["Warn","Audit"]}]'
    ) in out
    assert "Job/team/wide: audit annotation parallelism-audit/parallelism: parallelism 3" in out
    assert "Job/team/wide: Warning" not in out
    assert "Job/team/unlabelled: audit annotation parallelism-audit" not in out  # (blank)
    assert "team/unlabelled" in out  # created: it runs, unmanaged


def test_an_audit_annotation_of_the_wrong_type_denies_under_fail(tmp_path: Path) -> None:
    """An auditAnnotation whose valueExpression is neither string nor null
    denies under failurePolicy Fail with kube-apiserver's message."""
    world = tmp_path / "world"
    world.mkdir()
    (world / "a-policy.yaml").write_text(
        AUDIT_POLICY.replace(
            "has(object.spec.parallelism) ? 'parallelism ' + string(object.spec.parallelism) : ''",
            "size(object.metadata.name)",
        )
    )
    (world / "b-world.yaml").write_text(WORLD + _parallel("wide", "team", 3))
    code, out = _kuota("run", str(world), "--until", "1m")
    assert code == 1, out
    assert (
        'Job/team/wide: jobs.batch "wide" is forbidden: ValidatingAdmissionPolicy '
        "'parallelism-audit' with binding 'parallelism-audit' denied request: valueExpression "
        "'size(object.metadata.name)' resulted in unsupported return type: int. Return type "
        "must be either string or null."
    ) in out
