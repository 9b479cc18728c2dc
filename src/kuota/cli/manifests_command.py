"""``kuota manifests``: what to apply to a cluster to run kuota there as
Kueue runs (kuota.clustermode.manifests), as one YAML stream."""

from __future__ import annotations

import click
import yaml


@click.command()
@click.option(
    "--openshift", is_flag=True, help="The Red Hat build's differences (managed namespaces, SCC)."
)
@click.option(
    "--service-monitor",
    is_flag=True,
    help="Add a Prometheus Operator ServiceMonitor (needs its CRD on the cluster).",
)
@click.option(
    "--image",
    default=None,
    help="The controller's image (default: localhost/kuota:latest, built from the Containerfile).",
)
@click.option("--replicas", default=2, show_default=True, type=click.IntRange(min=1))
def manifests(openshift: bool, service_monitor: bool, image: str | None, replicas: int) -> None:
    """Print what to apply to a cluster to run kuota there in Kueue's place.

    kuota manifests | kubectl apply --server-side -f -"""
    from kuota.api.decode import to_wire
    from kuota.clustermode.manifests import DEFAULT_IMAGE, Options, objects
    from kuota.server.auth.bootstrap import kueue_roles

    opts = Options(
        openshift=openshift,
        service_monitor=service_monitor,
        image=image or DEFAULT_IMAGE,
        replicas=replicas,
    )
    docs = objects(opts, [to_wire(r) for r in kueue_roles()])
    click.echo(yaml.safe_dump_all(docs, sort_keys=False), nl=False)
