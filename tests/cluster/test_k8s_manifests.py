"""deploy/k8s/ against Kubernetes' own schemas (kubernetes-validate, strict: an unknown field is
an error), and held to the server they run: probes on its routes, time to drain, real settings."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from corrige.server.settings import Settings

kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate (the dev extra)")

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
VERSION = "1.33"  # the oldest Kubernetes the manifests are for (the preStop sleep action)


def manifests() -> dict[str, dict]:
    docs = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            docs[doc["kind"]] = doc
    return docs


@pytest.mark.parametrize("path", sorted(K8S.glob("*.yaml")), ids=lambda p: p.name)
def test_manifest_is_valid_kubernetes(path: Path) -> None:
    for doc in yaml.safe_load_all(path.read_text()):
        kubernetes_validate.validate(doc, VERSION, strict=True)


def test_the_checker_refuses_an_unknown_field() -> None:
    deployment = manifests()["Deployment"]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}  # a typo
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSION, strict=True)


def test_probes_drain_and_settings_match_the_server() -> None:
    docs = manifests()
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["startupProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    env = {e["name"]: e["value"] for e in container["env"]}
    grace = float(env["CORRIGE_DRAIN_GRACE_S"])
    pre_stop = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert pod["terminationGracePeriodSeconds"] >= pre_stop + grace + 5  # + uvicorn's 5 s for open connections
    known = {f"CORRIGE_{name.upper()}" for name in Settings.model_fields}
    assert set(env) | set(docs["ConfigMap"]["data"]) <= known
    selector = docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert docs["Service"]["spec"]["selector"] == selector
    assert docs["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == selector
    assert docs["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]["name"] == docs["Deployment"]["metadata"]["name"]
