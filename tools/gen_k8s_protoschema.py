"""Generate src/kuota/server/protoschema.py: the protobuf schema of every
built-in kind kuota serves, read from the Go types Kubernetes generates its
``generated.proto`` from (go-to-protobuf reads the same struct tags).

    .venv/bin/python tools/gen_k8s_protoschema.py API_DIR APIMACHINERY_DIR
    .venv/bin/ruff format src/kuota/server/protoschema.py

API_DIR is a checkout of kubernetes/api (core/v1/types.go, apps/v1/types.go,
...), APIMACHINERY_DIR one of kubernetes/apimachinery. The Go types rather
than the .proto files because only they say what Go's JSON encoder does with
a field once protobuf has filled it (pointer or value, omitempty, inline),
which is what kube-apiserver would store; the field numbers are the
``protobuf:"..."`` tags go-to-protobuf reads.

Each message is a tuple of fields ``(number, json name, type, flags)``: type
is a scalar code (s string, b bool, i integer, f double, y bytes, q Quantity,
t Time, T MicroTime, d Duration, o IntOrString, r RawExtension, F FieldsV1)
or another message's name; flags are the FLAG_* bits of protoschema.
"""

from __future__ import annotations

import pathlib
import re
import sys

REPEATED, MAP, POINTER, OMITEMPTY, INLINE = 1, 2, 4, 8, 16

META = "meta/v1"

# The served built-in kinds: (apiVersion, kind) -> Go type.
ROOTS = {
    ("v1", k): f"core/v1.{k}"
    for k in [
        "Namespace",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "Service",
        "Pod",
        "PodTemplate",
        "LimitRange",
        "ResourceQuota",
        "Node",
        "Event",
    ]
}
ROOTS |= {
    ("apps/v1", k): f"apps/v1.{k}"
    for k in ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision"]
}
ROOTS |= {("batch/v1", k): f"batch/v1.{k}" for k in ("Job", "CronJob")}
ROOTS |= {
    ("rbac.authorization.k8s.io/v1", k): f"rbac/v1.{k}"
    for k in ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")
}
ROOTS |= {
    ("scheduling.k8s.io/v1", "PriorityClass"): "scheduling/v1.PriorityClass",
    ("coordination.k8s.io/v1", "Lease"): "coordination/v1.Lease",
    ("node.k8s.io/v1", "RuntimeClass"): "node/v1.RuntimeClass",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "autoscaling/v2.HorizontalPodAutoscaler",
    # ``kubectl autoscale`` creates an autoscaling/v1 HorizontalPodAutoscaler.
    ("autoscaling/v1", "HorizontalPodAutoscaler"): "autoscaling/v1.HorizontalPodAutoscaler",
    ("policy/v1", "PodDisruptionBudget"): "policy/v1.PodDisruptionBudget",
    ("networking.k8s.io/v1", "Ingress"): "networking/v1.Ingress",
    # The body of ``kubectl create token`` (serviceaccounts/NAME/token).
    ("authentication.k8s.io/v1", "TokenRequest"): "authentication/v1.TokenRequest",
    ("events.k8s.io/v1", "Event"): "events/v1.Event",
}
ROOTS |= {
    ("admissionregistration.k8s.io/v1", k): f"admissionregistration/v1.{k}"
    for k in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
}

# Fields left out: newer than the kubectl kuota is judged by (1.32), in a
# form the table cannot say (a map of lists); a body's unknown fields are
# skipped.
SKIP = {("authentication/v1.TokenRequestSpec", "attestations")}

# Types whose JSON form is their own (custom MarshalJSON), not their fields'.
SPECIAL = {
    "meta/v1.Time": "t",
    "meta/v1.MicroTime": "T",
    "meta/v1.Duration": "d",
    "meta/v1.FieldsV1": "F",
    "resource.Quantity": "q",
    "intstr.IntOrString": "o",
    "runtime.RawExtension": "r",
    "types.UID": "s",
    "types.NodeName": "s",
}
SCALARS = {"string": "s", "bool": "b", "float64": "f", "[]byte": "y"}
SCALARS |= {t: "i" for t in ["int", "int32", "int64", "uint", "uint32", "uint64", "uint8"]}

FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([\w.\[\]*]+)\s+`([^`]*)`")
TAG = re.compile(r'(\w+):"([^"]*)"')


def package_of(path: str) -> str:
    path = path.strip('"')
    if path.startswith("k8s.io/api/"):
        return path.removeprefix("k8s.io/api/")
    if path.endswith("/apis/meta/v1"):
        return META
    return path.rsplit("/", 1)[-1]  # resource, intstr, runtime, types (or the stdlib)


def parse(pkg: str, text: str, structs: dict, named: dict) -> None:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    lines = [ln.split("//", 1)[0] if "`" not in ln else ln for ln in text.splitlines()]
    imports: dict[str, str] = {}
    m = re.search(r"^import \((.*?)^\)", "\n".join(lines), flags=re.S | re.M)
    for ln in (m.group(1) if m else "").splitlines():
        parts = ln.split()
        if len(parts) == 2:
            imports[parts[0]] = package_of(parts[1])
        elif len(parts) == 1:
            p = package_of(parts[0])
            imports[p.rsplit("/", 1)[-1]] = p
    imports_by_pkg[pkg] = imports
    i = 0
    while i < len(lines):
        ln = lines[i].strip()
        if s := re.match(r"^type (\w+) struct \{$", ln):
            fields = []
            i += 1
            while lines[i].strip() != "}":
                if f := FIELD.match(lines[i]):
                    fields.append((f.group(1), f.group(2), dict(TAG.findall(f.group(3)))))
                i += 1
            structs[f"{pkg}.{s.group(1)}"] = fields
        elif t := re.match(r"^type (\w+) =?\s*([\w.\[\]*]+)$", ln):
            named[f"{pkg}.{t.group(1)}"] = t.group(2)
        i += 1


imports_by_pkg: dict[str, dict[str, str]] = {}
API = pathlib.Path()


def qualify(pkg: str, name: str) -> str:
    if "." in name:
        alias, n = name.split(".", 1)
        return f"{imports_by_pkg[pkg][alias]}.{n}"
    return f"{pkg}.{name}"


def resolve(pkg: str, go: str, structs: dict, named: dict) -> tuple[str, int]:
    """(type code or message name, REPEATED/MAP/POINTER flags) of a Go type."""
    if go in SCALARS:
        return SCALARS[go], 0
    if go.startswith("*"):
        code, flags = resolve(pkg, go[1:], structs, named)
        return code, flags | POINTER
    if go.startswith("[]"):
        code, flags = resolve(pkg, go[2:], structs, named)
        if flags & (REPEATED | MAP):
            raise ValueError(f"nested collection {go}")
        return code, REPEATED
    if go.startswith("map["):
        key, value = re.match(r"map\[([\w.]+)\](.+)", go).groups()  # type: ignore[union-attr]
        if resolve(pkg, key, structs, named)[0] != "s":
            raise ValueError(f"map key {go}")
        code, flags = resolve(pkg, value, structs, named)
        if flags & (REPEATED | MAP):
            raise ValueError(f"map of collections {go}")
        return code, MAP
    q = qualify(pkg, go)
    owner = q.rsplit(".", 1)[0]
    if owner not in imports_by_pkg and (API / owner / "types.go").exists():
        # A package another refers to (core/v1 to scheduling/v1alpha3, ...).
        parse(owner, (API / owner / "types.go").read_text(), structs, named)
    if q in SPECIAL:
        return SPECIAL[q], 0
    if q in structs:
        return q, 0
    if q in named:
        return resolve(q.rsplit(".", 1)[0], named[q], structs, named)
    raise ValueError(f"unknown type {q}")


def main() -> None:
    global API
    API, machinery = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    structs: dict[str, list] = {}
    named: dict[str, str] = {}
    parse(META, (machinery / "pkg/apis/meta/v1/types.go").read_text(), structs, named)
    for pkg in sorted({v.rsplit(".", 1)[0] for v in ROOTS.values()}):
        parse(pkg, (API / pkg / "types.go").read_text(), structs, named)
    out: dict[str, list[tuple[int, str, str, int]]] = {}
    todo = list(ROOTS.values())
    while todo:
        name = todo.pop()
        if name in out:
            continue
        pkg = name.rsplit(".", 1)[0]
        fields = []
        for go_name, go_type, tags in structs[name]:
            if "protobuf" not in tags:
                continue
            json_name, *opts = tags.get("json", "").split(",")
            if json_name == "-" or (name, json_name) in SKIP:
                continue
            number = int(tags["protobuf"].split(",")[1])
            code, flags = resolve(pkg, go_type, structs, named)
            if "omitempty" in opts:
                flags |= OMITEMPTY
            if go_name is None and not json_name:
                flags |= INLINE
            if code not in SCALARS.values() and code not in SPECIAL.values():
                todo.append(code)
            fields.append((number, json_name or go_name or "", code, flags))
        out[name] = fields
    lines = [
        '"""Generated by tools/gen_k8s_protoschema.py from kubernetes/api and',
        "kubernetes/apimachinery's Go types; do not edit. See protobody for the",
        'meaning of each field tuple."""',
        "",
        "# (apiVersion, kind) -> message",
        "KINDS: dict[tuple[str, str], str] = {",
        *(f"    {k!r}: {v!r}," for k, v in sorted(ROOTS.items())),
        "}",
        "",
        "# message -> ((number, json name, type, flags), ...)",
        "MESSAGES: dict[str, tuple[tuple[int, str, str, int], ...]] = {",
    ]
    for name in sorted(out):
        lines.append(f"    {name!r}: (")
        lines += [f"        {f!r}," for f in out[name]]
        lines.append("    ),")
    lines.append("}")
    dest = pathlib.Path(__file__).resolve().parents[1] / "src/kuota/server/protoschema.py"
    dest.write_text("\n".join(lines) + "\n")
    print(f"{dest}: {len(out)} messages, {sum(map(len, out.values()))} fields")


if __name__ == "__main__":
    main()
