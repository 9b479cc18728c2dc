"""A cluster-scoped object whose manifest names a namespace, as Kueue's own
site/static/examples/visibility/cluster-role-and-binding.yaml does (its
ClusterRoleBinding says ``namespace: default``). kube-apiserver accepts it:
on create, ``rest.BeforeCreate`` clears the namespace of a cluster-scoped
object (``EnsureObjectNamespaceMatchesRequestNamespace``) before validation,
so ``kubectl apply -f`` of that file works. kuota once refused it with
``metadata.namespace: Forbidden: not allowed on this type``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

EXAMPLE = Path(__file__).parent / "kueue_examples" / "visibility-cluster-role-and-binding.yaml"


def test_kueue_visibility_example_is_accepted_with_namespace_cleared() -> None:
    result = CliRunner().invoke(main, ["validate", "--json", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    text = json.dumps(report)
    assert "not allowed on this type" not in text
    # The binding is read as the cluster-scoped object it is: no namespace.
    assert "ClusterRoleBinding/default/" not in text


def test_namespaced_object_keeps_its_namespace(tmp_path: Path) -> None:
    # The clearing is for cluster-scoped kinds only: a LocalQueue's namespace
    # must still be validated (a bad one refused, naming the field).
    bad = tmp_path / "lq.yaml"
    bad.write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: q, namespace: Not_A_Label}\nspec: {clusterQueue: cq}\n"
    )
    result = CliRunner().invoke(main, ["validate", str(bad)])
    assert result.exit_code == 1, result.output
    assert "metadata.namespace" in result.output
