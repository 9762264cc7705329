"""The Helm chart rendered by a real helm under every scenario, checked against Kubernetes' schemas.

Scenarios are the value files in tests/helm/values; each manifest is validated offline with
kubernetes-validate (strict: unknown fields fail), and the wiring between objects (selectors, port
names, mounted secret files, the Triton address) is checked across manifests, because a chart can
be schema-valid and still point a Service at nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from service.settings import load_settings
from tests.helm.conftest import CHART, NAMESPACE, RELEASE, SCENARIOS, VALUES_DIR, Helm, Rendered

pytestmark = pytest.mark.helm

# A Kubernetes minor the installed kubernetes-validate ships schemas for; the chart's kubeVersion
# floor is 1.27, and 1.30 is the oldest release still widely supported by managed clusters.
K8S_VERSION = "1.30.0"
FULLNAME = f"{RELEASE}"  # release name equals the chart name, so the helper does not repeat it
# CRDs are not in the upstream Kubernetes schemas kubernetes-validate ships; they get a shape check.
CRD_KINDS = {"ServiceMonitor"}


def values(name: str) -> list[Path]:
    return [VALUES_DIR / f"{name}.yaml"]


def configmap_data(r: Rendered) -> dict[str, str]:
    return r.one("ConfigMap", FULLNAME)["data"]


def container(deploy: dict, name: str) -> dict:
    (c,) = [c for c in deploy["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    return c


def service_deployment(r: Rendered) -> dict:
    return r.one("Deployment", FULLNAME)


def check_service_monitor_shape(doc: dict) -> None:
    assert doc["apiVersion"] == "monitoring.coreos.com/v1"
    assert set(doc) == {"apiVersion", "kind", "metadata", "spec"}
    spec = doc["spec"]
    assert set(spec) <= {"namespaceSelector", "selector", "endpoints", "jobLabel"}
    assert spec["selector"]["matchLabels"]
    for ep in spec["endpoints"]:
        assert set(ep) <= {"port", "path", "interval", "scrapeTimeout", "scheme"}
        assert isinstance(ep["port"], str)


def test_kubernetes_validate_is_strict() -> None:
    """The validator must reject what the API server rejects, or the checks below prove nothing."""
    bad = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "x"},
        "spec": {"ports": [{"port": 80, "grpcPort": 1}]},
    }
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, K8S_VERSION, strict=True)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_manifest_matches_the_kubernetes_schemas(
    rendered: dict[str, Rendered], scenario: str
) -> None:
    docs = rendered[scenario].docs
    assert docs
    for doc in docs:
        assert doc["metadata"]["namespace"] == NAMESPACE
        assert len(doc["metadata"]["name"]) <= 63
        if doc["kind"] in CRD_KINDS:
            check_service_monitor_shape(doc)
            continue
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


@pytest.mark.parametrize("scenario", ["defaults", *SCENARIOS])
def test_helm_lint_strict(helm: Helm, scenario: str) -> None:
    args = ["lint", "--strict", str(CHART), "--namespace", NAMESPACE]
    if scenario != "defaults":
        args += ["-f", str(VALUES_DIR / f"{scenario}.yaml")]
    proc = helm.run(*args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[WARNING]" not in proc.stdout and "[ERROR]" not in proc.stdout


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_no_secret_is_ever_rendered(rendered: dict[str, Rendered], scenario: str) -> None:
    r = rendered[scenario]
    assert r.of_kind("Secret") == []
    data = configmap_data(r)
    assert not any("postgresql://" in v or "BEGIN " in v for v in data.values())


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_selectors_and_ports_point_at_the_right_pods(
    rendered: dict[str, Rendered], scenario: str
) -> None:
    r = rendered[scenario]
    deployments = r.of_kind("Deployment")
    for svc in r.of_kind("Service"):
        selector = svc["spec"]["selector"]
        targets = [
            d
            for d in deployments
            if selector.items() <= d["spec"]["template"]["metadata"]["labels"].items()
        ]
        assert len(targets) == 1, f"{svc['metadata']['name']} selects {len(targets)} deployments"
        port_names = {
            p["name"]
            for c in targets[0]["spec"]["template"]["spec"]["containers"]
            for p in c["ports"]
        }
        assert {p["targetPort"] for p in svc["spec"]["ports"]} <= port_names
    for deploy in deployments:
        assert deploy["spec"]["selector"]["matchLabels"].items() <= (
            deploy["spec"]["template"]["metadata"]["labels"].items()
        )
    pod_labels = service_deployment(r)["spec"]["template"]["metadata"]["labels"]
    for kind in ("PodDisruptionBudget", "NetworkPolicy"):
        for obj in r.of_kind(kind):
            sel = obj["spec"].get("selector") or obj["spec"]["podSelector"]
            if obj["metadata"]["name"].endswith("-triton"):
                continue
            assert sel["matchLabels"].items() <= pod_labels.items()
    for hpa in r.of_kind("HorizontalPodAutoscaler"):
        assert hpa["spec"]["scaleTargetRef"]["name"] == service_deployment(r)["metadata"]["name"]
    for sm in r.of_kind("ServiceMonitor"):
        svc = r.one("Service", FULLNAME)
        assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
        assert {e["port"] for e in sm["spec"]["endpoints"]} <= {
            p["name"] for p in svc["spec"]["ports"]
        }


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_configured_file_is_a_mounted_secret_key(
    rendered: dict[str, Rendered], scenario: str
) -> None:
    r = rendered[scenario]
    deploy = service_deployment(r)
    pod = deploy["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    files: dict[str, str] = {}
    for m in container(deploy, "canoe")["volumeMounts"]:
        secret = volumes[m["name"]].get("secret")
        if secret:
            assert m.get("readOnly") is True
            for item in secret["items"]:
                files[f"{m['mountPath']}/{item['path']}"] = secret["secretName"]
    wanted = {k: v for k, v in configmap_data(r).items() if k.endswith("_FILE")}
    for key, path in wanted.items():
        assert path in files, f"{key}={path} is not a mounted secret file"
    assert len(files) >= len(set(wanted.values()))


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_service_pod_is_locked_down(rendered: dict[str, Rendered], scenario: str) -> None:
    deploy = service_deployment(rendered[scenario])
    pod = deploy["spec"]["template"]["spec"]
    c = container(deploy, "canoe")
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001
    assert pod["automountServiceAccountToken"] is False
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert {"cpu", "memory"} <= c["resources"]["requests"].keys()
    assert {"cpu", "memory"} <= c["resources"]["limits"].keys()
    assert any(m["mountPath"] == "/tmp" for m in c["volumeMounts"])


def test_defaults_single_replica_on_sqlite_with_grpc_probes(
    rendered: dict[str, Rendered],
) -> None:
    r = rendered["defaults"]
    deploy = service_deployment(r)
    assert deploy["spec"]["replicas"] == 1
    assert deploy["spec"]["strategy"]["type"] == "Recreate"
    data = configmap_data(r)
    assert data["CANOE_STORE_DSN"] == "sqlite:////data/canoe.sqlite3"
    assert data["CANOE_BACKEND"] == "embedded"
    assert data["CANOE_GRPC_PORT"] == "50051"
    assert "CANOE_TRITON_URL" not in data
    pvc = r.one("PersistentVolumeClaim")
    volumes = {v["name"]: v for v in deploy["spec"]["template"]["spec"]["volumes"]}
    assert volumes["data"]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    c = container(deploy, "canoe")
    # startup/liveness ask the name that stays SERVING while the process answers; readiness asks
    # the overall status, which drops while the model backend or the store is down
    for probe in ("startupProbe", "livenessProbe"):
        assert c[probe]["grpc"] == {"port": 50051, "service": "liveness"}
    assert c["readinessProbe"]["grpc"] == {"port": 50051, "service": ""}
    assert r.of_kind("HorizontalPodAutoscaler") == []
    assert r.of_kind("ServiceMonitor") == []
    assert [d["metadata"]["name"] for d in r.of_kind("Deployment")] == [FULLNAME]
    svc = r.one("Service")
    assert {p["name"]: p["port"] for p in svc["spec"]["ports"]} == {
        "grpc": 50051,
        "http": 8080,
        "metrics": 9464,
    }
    assert r.one("PodDisruptionBudget")["spec"]["maxUnavailable"] == 1
    assert r.one("ServiceAccount")["automountServiceAccountToken"] is False


def test_cpu_request_is_one_core_per_worker(helm: Helm) -> None:
    for sets, workers in (([], 2), (["workers=4", "resources.limits.cpu=4"], 4)):
        proc = helm.template(sets=sets)
        assert proc.returncode == 0, proc.stderr
        docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
        named = {(d["kind"], d["metadata"]["name"]): d for d in docs}
        cm, deploy = named["ConfigMap", FULLNAME], named["Deployment", FULLNAME]
        assert cm["data"]["CANOE_WORKERS"] == str(workers)
        resources = container(deploy, "canoe")["resources"]
        assert resources["requests"]["cpu"] == str(workers)
        assert resources["requests"]["memory"] == "512Mi"  # the rest as given
        settings = load_settings({"CANOE_WORKERS": cm["data"]["CANOE_WORKERS"]})
        assert settings.server.workers == workers


def egress_ports(policy: dict) -> set[int]:
    return {p["port"] for rule in policy["spec"]["egress"] for p in rule["ports"]}


def test_ha_postgres_with_external_triton(rendered: dict[str, Rendered]) -> None:
    r = rendered["ha-postgres-external-triton"]
    deploy = service_deployment(r)
    assert "replicas" not in deploy["spec"]  # the autoscaler owns the count
    assert deploy["spec"]["strategy"]["type"] == "RollingUpdate"
    hpa = r.one("HorizontalPodAutoscaler")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 10)
    assert r.one("PodDisruptionBudget")["spec"] == {
        "minAvailable": 2,
        "selector": r.one("PodDisruptionBudget")["spec"]["selector"],
    }
    assert r.of_kind("PersistentVolumeClaim") == []
    c = container(deploy, "canoe")
    (dsn,) = [e for e in c["env"] if e["name"] == "CANOE_STORE_DSN"]
    assert dsn["valueFrom"]["secretKeyRef"] == {"name": "canoe-store", "key": "dsn"}
    data = configmap_data(r)
    assert "CANOE_STORE_DSN" not in data
    assert data["CANOE_TRITON_URL"] == "triton.inference.svc.cluster.local:8001"
    assert data["CANOE_TRITON_MODEL_AGENT"] == "medgemma-4b-it"
    assert data["CANOE_TRITON_GUIDED_KEY"] == "structured_outputs"
    assert data["CANOE_MAX_MESSAGE_BYTES"] == "16777216"  # not 1.6777216e+07
    assert (data["CANOE_DELTA"], data["CANOE_BETA"]) == ("0.1", "0.25")
    assert data["CANOE_AUTH_MODE"] == "jwt"
    assert data["CANOE_OTLP_ENDPOINT"].endswith(":4317")
    assert "CANOE_THRESHOLD" not in data  # null keeps the service's documented default
    affinity = deploy["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]
    assert "requiredDuringSchedulingIgnoredDuringExecution" in affinity
    policy = r.one("NetworkPolicy")
    assert egress_ports(policy) == {53, 8001, 5432, 4317, 443}  # 443: the EHRs' SMART endpoints
    (clients, scrapers) = policy["spec"]["ingress"]
    assert {p["port"] for p in clients["ports"]} == {50051, 8080}
    assert clients["from"][0]["podSelector"]["matchLabels"] == {"app": "interface-engine"}
    assert {p["port"] for p in scrapers["ports"]} == {9464}
    sm = r.one("ServiceMonitor")
    assert sm["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    # The review app: every pod signs and verifies sessions with the one key from the Secret.
    (key,) = [e for e in c["env"] if e["name"] == "CANOE_REVIEW_SIGNING_KEY"]
    assert key["valueFrom"]["secretKeyRef"] == {"name": "canoe-review", "key": "signing-key"}
    assert "CANOE_REVIEW_SIGNING_KEY" not in data
    assert data["CANOE_REVIEW_SMART_ISSUERS"] == "clinic-a=https://ehr.clinic-a.example/fhir/r4"
    assert (data["CANOE_REVIEW_LINK_TTL_S"], data["CANOE_REVIEW_SESSION_TTL_S"]) == ("900", "3600")


def test_per_step_models_client_tuning_and_panel_sizes_reach_the_configmap(
    rendered: dict[str, Rendered],
) -> None:
    data = configmap_data(rendered["ha-postgres-external-triton"])
    models = {k: v for k, v in data.items() if k.startswith("CANOE_TRITON_MODEL_")}
    assert models == {
        "CANOE_TRITON_MODEL_AGENT": "medgemma-4b-it",
        "CANOE_TRITON_MODEL_ADJUDICATOR": "llama-3.1-70b-instruct",
        "CANOE_TRITON_MODEL_PANEL": "llama-3.1-70b-instruct",
        "CANOE_TRITON_MODEL_SYNTHESIZE": "medgemma-27b-text-it",
    }  # consult: "" is left out, so the service falls back to the agent model
    assert data["CANOE_TRITON_RETRIES"] == "0"  # 0 is a setting, not an absence
    assert data["CANOE_TRITON_BREAKER_THRESHOLD"] == "3"
    assert data["CANOE_TRITON_BREAKER_COOLDOWN_S"] == "12.5"
    assert data["CANOE_TRITON_TEMPERATURE"] == "0"
    assert data["CANOE_TRITON_QUEUE_TIMEOUT_US"] == "2000000"  # not 2e+06
    sizes = {k: v for k, v in data.items() if k.startswith("CANOE_PANEL_SIZE_")}
    assert sizes == {
        "CANOE_PANEL_SIZE_LOW": "2",
        "CANOE_PANEL_SIZE_HIGH": "4,6",
        "CANOE_PANEL_SIZE_VERY_HIGH": "6,8",
    }  # moderate: "" keeps the service default
    # The service itself must accept what the chart renders, names and values alike.
    settings = load_settings(environ=data)
    assert settings.triton.model_panel == "llama-3.1-70b-instruct"
    assert settings.triton.model_consult == ""
    assert (settings.triton.retries, settings.triton.temperature) == (0, 0.0)
    assert settings.triton.queue_timeout_us == 2_000_000
    assert settings.panel.sizes == (
        ("low", 2, 2),
        ("moderate", 3, 3),
        ("high", 4, 6),
        ("very high", 6, 8),
    )


def test_hardening_limits_reach_the_configmap(rendered: dict[str, Rendered]) -> None:
    data = configmap_data(rendered["ha-postgres-external-triton"])
    assert data["CANOE_MAX_TASKS_PER_REQUEST"] == "50"
    assert data["CANOE_MAX_FEEDBACK_ITEMS"] == "20"
    assert data["CANOE_AUTH_JWT_MAX_LIFETIME_S"] == "900"
    assert data["CANOE_CDS_PREFETCH_DEADLINE_S"] == "7.5"
    assert data["CANOE_CDS_PREFETCH_MAX_PAGES"] == "5"
    s = load_settings(environ=data)
    assert (s.limits.max_tasks_per_request, s.auth.jwt_max_lifetime_s) == (50, 900)
    assert s.limits.max_feedback_items == 20
    assert (s.cds.prefetch_deadline_s, s.cds.prefetch_max_pages) == (7.5, 5)
    defaults = configmap_data(rendered["defaults"])
    assert not {
        k
        for k in defaults
        if "TASKS_PER" in k or "FEEDBACK" in k or "PREFETCH" in k or "LIFETIME" in k
    }


def test_unset_tuning_stays_out_and_panel_sizes_reach_the_embedded_backend(
    rendered: dict[str, Rendered], helm: Helm
) -> None:
    data = configmap_data(rendered["defaults"])
    tuning = [k for k in data if k.startswith(("CANOE_TRITON_", "CANOE_PANEL_SIZE_"))]
    assert tuning == []
    load_settings(environ=data)
    # Panel sizes hold for both backends; Triton client tuning only reaches a Triton backend.
    data = configmap_data(
        helm.render(
            sets=[
                "config.panelSizes.veryHigh=8",
                "triton.client.retries=4",
                "triton.models.perStep.panel=p",
            ]
        )
    )
    assert data["CANOE_PANEL_SIZE_VERY_HIGH"] == "8"
    assert not [k for k in data if k.startswith("CANOE_TRITON_")]
    assert load_settings(environ=data).panel.sizes[-1] == ("very high", 8, 8)


def test_in_cluster_triton_on_gpu_nodes(rendered: dict[str, Rendered]) -> None:
    r = rendered["triton-gpu"]
    triton = r.one("Deployment", "-triton")
    pod = triton["spec"]["template"]["spec"]
    c = container(triton, "triton")
    assert c["image"] == "nvcr.io/nvidia/tritonserver:25.01-vllm-python-py3"
    assert c["args"][:2] == ["tritonserver", "--model-repository=/models"]
    assert c["resources"]["limits"]["nvidia.com/gpu"] == 2
    assert c["resources"]["requests"]["nvidia.com/gpu"] == 2
    # helm merges maps with the defaults: the scenario's GPU model adds to "any GPU node".
    assert pod["nodeSelector"] == {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
    }
    assert {t["key"] for t in pod["tolerations"]} == {"nvidia.com/gpu", "dedicated"}
    assert pod["runtimeClassName"] == "nvidia"
    assert c["readinessProbe"]["httpGet"] == {"path": "/v2/health/ready", "port": "http"}
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"http": 8000, "grpc": 8001, "metrics": 8002}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["models"]["persistentVolumeClaim"] == {
        "claimName": "triton-models",
        "readOnly": True,
    }
    (models,) = [m for m in c["volumeMounts"] if m["name"] == "models"]
    assert (models["mountPath"], models["subPath"]) == ("/models", "repository")
    assert volumes["dshm"]["emptyDir"]["medium"] == "Memory"
    svc = r.one("Service", "-triton")
    assert {p["port"] for p in svc["spec"]["ports"]} == {8000, 8001, 8002}
    data = configmap_data(r)
    assert data["CANOE_TRITON_URL"] == f"{svc['metadata']['name']}:8001"
    assert data["CANOE_TRITON_MODEL_AGENT"] == "medgemma-27b-text-it"
    assert data["CANOE_TRITON_MODEL_ADJUDICATOR"] == "qwen2.5-72b-instruct"
    assert data["CANOE_STORE_DSN"].startswith("sqlite:")
    service_pod_labels = service_deployment(r)["spec"]["template"]["metadata"]["labels"]
    triton_policy = r.one("NetworkPolicy", "-triton")
    (callers, _scrapers) = triton_policy["spec"]["ingress"]
    assert callers["from"][0]["podSelector"]["matchLabels"].items() <= service_pod_labels.items()
    assert egress_ports(triton_policy) == {53}
    service_policy = r.one("NetworkPolicy", FULLNAME)
    assert egress_ports(service_policy) == {53, 8001}


def test_tls_mounts_secrets_and_probes_over_https(rendered: dict[str, Rendered]) -> None:
    r = rendered["tls"]
    data = configmap_data(r)
    assert data["CANOE_TLS_CERT_FILE"] == "/etc/canoe/tls/tls.crt"
    assert data["CANOE_TLS_KEY_FILE"] == "/etc/canoe/tls/tls.key"
    assert data["CANOE_TLS_CLIENT_CA_FILE"] == "/etc/canoe/tls-client-ca/ca.crt"
    assert data["CANOE_AUTH_TOKENS_FILE"] == "/etc/canoe/auth/tokens/tokens"
    deploy = service_deployment(r)
    secrets = {
        v["secret"]["secretName"]
        for v in deploy["spec"]["template"]["spec"]["volumes"]
        if "secret" in v
    }
    assert secrets == {"canoe-tls", "canoe-client-ca", "canoe-tokens"}
    c = container(deploy, "canoe")
    # under TLS the probes ask the HTTP side: /livez while the process answers, /healthz for
    # readiness (an outage takes pods out of rotation instead of restarting them)
    for probe in ("startupProbe", "livenessProbe"):
        assert c[probe]["httpGet"] == {"path": "/livez", "port": "http", "scheme": "HTTPS"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http", "scheme": "HTTPS"}


IMPOSSIBLE = {
    "sqlite-with-replicas": (["replicaCount=3"], "store.type=sqlite is impossible"),
    "sqlite-with-autoscaler": (
        ["autoscaling.enabled=true"],
        "autoscaling.enabled=true with store.type=sqlite",
    ),
    "postgres-without-secret": (["store.type=postgresql"], "needs store.postgresql.existingSecret"),
    "triton-without-url": (
        ["config.backend=triton", "triton.models.agent=a", "triton.models.adjudicator=b"],
        "config.backend=triton needs a Triton",
    ),
    "triton-without-models": (
        ["config.backend=triton", "triton.url=t:8001"],
        "triton.models.agent",
    ),
    "triton-url-and-deploy": (
        [
            "config.backend=triton",
            "triton.url=t:8001",
            "triton.deploy.enabled=true",
            "triton.models.agent=a",
            "triton.models.adjudicator=b",
            "triton.deploy.modelRepository.existingClaim=m",
        ],
        "not both",
    ),
    "gpu-triton-unused": (
        ["triton.deploy.enabled=true", "triton.deploy.modelRepository.existingClaim=m"],
        "would hold GPUs that nothing calls",
    ),
    "triton-without-model-repository": (
        [
            "config.backend=triton",
            "triton.deploy.enabled=true",
            "triton.models.agent=a",
            "triton.models.adjudicator=b",
        ],
        "needs triton.deploy.modelRepository.existingClaim",
    ),
    "replicas-without-review-signing-key": (
        ["store.type=postgresql", "store.postgresql.existingSecret=s", "replicaCount=2"],
        "more than one replica needs reviewApp.signingKeySecret",
    ),
    "tls-without-secret": (["tls.enabled=true"], "tls.enabled=true needs tls.existingSecret"),
    "mtls-without-tls": (["tls.clientCA.existingSecret=ca"], "client certificates need TLS"),
    "tokens-without-secret": (["auth.mode=tokens"], "auth.mode=tokens needs"),
    "jwt-without-jwks": (["auth.mode=jwt"], "auth.mode=jwt needs"),
    "jwt-without-audience": (
        ["auth.mode=jwt", "auth.jwt.existingSecret=jwks", "auth.jwt.issuer=https://idp.example"],
        "auth.mode=jwt needs auth.jwt.audience and auth.jwt.issuer",
    ),
    "jwt-without-issuer": (
        ["auth.mode=jwt", "auth.jwt.existingSecret=jwks", "auth.jwt.audience=canoe"],
        "auth.mode=jwt needs auth.jwt.audience and auth.jwt.issuer",
    ),
    "pdb-both-bounds": (["podDisruptionBudget.minAvailable=1"], "not both"),
    "servicemonitor-without-metrics": (
        ["metrics.enabled=false", "metrics.serviceMonitor.enabled=true"],
        "needs metrics.enabled",
    ),
    "panel-size-extended-below-base": (
        ["config.panelSizes.high=5\\,4"],
        'config.panelSizes.high="5,4" has extended 4 below base 5',
    ),
    "cpu-request-set-by-hand": (
        ["resources.requests.cpu=500m"],
        "the CPU request follows workers",
    ),
    "cpu-limit-below-workers": (
        ["workers=3", "resources.limits.cpu=2500m"],
        "resources.limits.cpu=2500m is below workers=3 cores",
    ),
    "panel-sizes-shrink-with-complexity": (
        ["config.panelSizes.moderate=4", "config.panelSizes.veryHigh=3"],
        'config.panelSizes.veryHigh="3" is smaller than config.panelSizes.moderate',
    ),
}


@pytest.mark.parametrize("case", sorted(IMPOSSIBLE))
def test_impossible_combinations_fail_with_their_message(helm: Helm, case: str) -> None:
    sets, message = IMPOSSIBLE[case]
    proc = helm.template(sets=sets)
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "sets",
    [
        ["unknownKey=1"],
        ["image.unknown=1"],
        ["triton.deploy.resources.limits.gpu=1"],
        ["config.backend=onnx"],
        ["store.type=mysql"],
        ["replicaCount=0"],
        ["ports.grpc=70000"],
        ["triton.models.perStep.triage=m"],  # not a step kind
        ["triton.models.perStep.panel=1"],
        ["triton.client.retries=-1"],
        ["triton.client.retries=11"],
        ["triton.client.breakerThreshold=0"],
        ["triton.client.temperature=3"],
        ["triton.client.queueTimeoutMicroseconds=-5"],
        ["triton.client.backoff=1"],
        ["config.panelSizes.low=0"],
        ["config.panelSizes.high=four"],
        ["config.panelSizes.high=4\\,5\\,6"],
        ["config.panelSizes.extreme=9"],
        ["reviewApp.linkTtlSeconds=5"],
        ["reviewApp.smartIssuers[0].tenant=a"],  # an issuer needs its iss
        ["workers=0"],
        ["workers=two"],
    ],
)
def test_schema_rejects_what_the_chart_does_not_know(helm: Helm, sets: list[str]) -> None:
    proc = helm.template(sets=sets)
    assert proc.returncode != 0
    assert "values don't meet the specifications of the schema" in proc.stderr, proc.stderr


@pytest.mark.parametrize("scenario", ["triton-gpu", "triton-vllm"])
@pytest.mark.parametrize(
    "extra",
    [[], ["--set", "fullnameOverride=" + "f" * 40 + "-" + "g" * 22]],
    ids=["longest-release-name", "longest-fullname-override"],
)
def test_long_names_are_cut_to_63(helm: Helm, extra: list[str], scenario: str) -> None:
    longest_release = "a-release-name-as-long-as-helm-allows-fifty-three-ch"  # helm caps at 53
    proc = helm.run(
        "template",
        longest_release,
        str(CHART),
        "--namespace",
        NAMESPACE,
        "-f",
        str(VALUES_DIR / f"{scenario}.yaml"),
        *extra,
    )
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    names = [d["metadata"]["name"] for d in docs]
    assert names and all(len(n) <= 63 and not n.endswith("-") for n in names), names
    # Truncation must not make two objects of a kind collide (the two ConfigMaps with vLLM models),
    # nor the service's and Triton's objects.
    assert len({(d["kind"], d["metadata"]["name"]) for d in docs}) == len(docs)
    assert any(n.endswith("-triton") for n in names) and any(
        not n.endswith("-triton") for n in names
    )


def render_notes(helm: Helm, tmp_path: Path, sets: list[str]) -> str:
    """NOTES.txt through helm's own engine: `helm template` skips it and install needs a cluster,
    so a copy of the chart wraps it in a named template and renders that into a ConfigMap."""
    chart = tmp_path / "canoe"
    shutil.copytree(CHART, chart)
    notes = (chart / "templates" / "NOTES.txt").read_text(encoding="utf-8")
    (chart / "templates" / "_notes_under_test.tpl").write_text(
        '{{- define "canoe.notesUnderTest" -}}\n' + notes + "\n{{- end }}\n", encoding="utf-8"
    )
    (chart / "templates" / "notes-under-test.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n"
        '  notes: {{ include "canoe.notesUnderTest" . | toJson }}\n',
        encoding="utf-8",
    )
    args = [
        "template",
        RELEASE,
        str(chart),
        "--namespace",
        NAMESPACE,
        "--show-only",
        "templates/notes-under-test.yaml",
    ]
    for s in sets:
        args += ["--set", s]
    proc = helm.run(*args)
    assert proc.returncode == 0, proc.stderr
    return str(yaml.safe_load(proc.stdout)["data"]["notes"])


def test_notes_tell_how_to_call_the_service(helm: Helm, tmp_path: Path) -> None:
    plain = render_notes(helm, tmp_path / "plain", [])
    assert f"{FULLNAME}.{NAMESPACE}.svc:50051" in plain
    assert "grpcurl -plaintext localhost:50051 grpc.health.v1.Health/Check" in plain
    assert "/cds-services" in plain
    secured = render_notes(
        helm,
        tmp_path / "tls",
        [
            "tls.enabled=true",
            "tls.existingSecret=s",
            "tls.clientCA.existingSecret=ca",
            "auth.mode=tokens",
            "auth.tokens.existingSecret=t",
        ],
    )
    assert "-cert client.crt -key client.key" in secured
    assert "authorization: Bearer" in secured
    assert "-plaintext" not in secured
    # Under mutual TLS every grpcurl line presents the client certificate, `list` included.
    grpcurl = [line for line in secured.splitlines() if line.strip().startswith("grpcurl ")]
    assert len(grpcurl) == 3
    assert all("-cacert ca.crt -cert client.crt -key client.key" in line for line in grpcurl)
    (generate,) = [line for line in grpcurl if "GeneratePlan" in line]
    assert '\\"bundle_json\\":\\"$(base64 -w0 bundle.json)\\"' in generate
    assert "canoe.v1.CarePlanService/GeneratePlan" in generate
    (listing,) = [line for line in grpcurl if line.rstrip().endswith(" list")]
    assert listing  # the reflection line


def test_notes_warn_while_cds_hooks_cannot_work(helm: Helm, tmp_path: Path) -> None:
    default = render_notes(helm, tmp_path / "default", [])
    assert "WARNING: the CDS Hooks side" in default
    assert "cdsHooks.jwksSecret is empty" in default
    assert "cdsHooks.baseUrl is empty" in default
    assert "needs a JWT" in default
    only_jwks = render_notes(helm, tmp_path / "jwks", ["cdsHooks.jwksSecret=ehr-jwks"])
    assert "cdsHooks.jwksSecret is empty" not in only_jwks
    assert "cdsHooks.baseUrl is empty" in only_jwks
    both = render_notes(
        helm,
        tmp_path / "both",
        ["cdsHooks.jwksSecret=ehr-jwks", "cdsHooks.baseUrl=https://canoe.example.org"],
    )
    assert "WARNING" not in both
    assert "/cds-services" in both


def _schema_objects(node: Any, path: str = "$") -> list[tuple[str, dict]]:
    found: list[tuple[str, dict]] = []
    if isinstance(node, dict):
        t = node.get("type")
        if t == "object" or (isinstance(t, list) and "object" in t):
            found.append((path, node))
        for key, child in node.items():
            found += _schema_objects(child, f"{path}.{key}")
    elif isinstance(node, list):
        for i, child in enumerate(node):
            found += _schema_objects(child, f"{path}[{i}]")
    return found


def test_schema_closes_every_object() -> None:
    import json

    schema = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
    objects = _schema_objects(schema)
    assert len(objects) > 40
    open_ = [p for p, o in objects if o.get("additionalProperties") is not False]
    assert open_ == []


def test_values_yaml_matches_its_schema() -> None:
    import json

    import jsonschema

    schema = json.loads((CHART / "values.schema.json").read_text(encoding="utf-8"))
    for path in [CHART / "values.yaml", *sorted(VALUES_DIR.glob("*.yaml"))]:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        jsonschema.validate(doc, schema)


def test_every_value_has_a_comment() -> None:
    lines = (CHART / "values.yaml").read_text(encoding="utf-8").splitlines()
    uncommented = []
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key_line = stripped.removeprefix("- ").lstrip()
        if ":" not in key_line or key_line.startswith("#"):
            continue  # a scalar list item, described by its list's comment
        prev = lines[i - 1].strip() if i else ""
        if not (prev.startswith("#") or prev.startswith("- #")):
            uncommented.append(f"{i + 1}: {line}")
    assert uncommented == []


def test_without_dns_egress_the_policies_deny_all_but_triton(helm: Helm) -> None:
    r = helm.render(values("triton-gpu"), sets=["networkPolicy.dns.enabled=false"])
    for policy in r.of_kind("NetworkPolicy"):
        kubernetes_validate.validate(policy, K8S_VERSION, strict=True)
    assert egress_ports(r.one("NetworkPolicy", FULLNAME)) == {8001}
    assert r.one("NetworkPolicy", "-triton")["spec"]["egress"] == []
    r = helm.render(sets=["networkPolicy.dns.enabled=false"])
    assert r.one("NetworkPolicy")["spec"]["egress"] == []


def test_config_change_rolls_the_pods(helm: Helm) -> None:
    def checksum(r: Rendered) -> str:
        return service_deployment(r)["spec"]["template"]["metadata"]["annotations"][
            "checksum/config"
        ]

    assert checksum(helm.render()) != checksum(helm.render(sets=["config.logLevel=debug"]))


def test_the_fhir_base_reaches_the_service_and_is_checked(helm: Helm) -> None:
    assert "CANOE_FHIR_BASE" not in configmap_data(helm.render())
    base = "https://fhir.hospital.test/canoe"
    data = configmap_data(helm.render(sets=[f"fhirBase={base}"]))
    assert data["CANOE_FHIR_BASE"] == base
    from service.settings import load_settings

    assert load_settings(environ={"CANOE_FHIR_BASE": data["CANOE_FHIR_BASE"]}).fhir.base == base
    refused = helm.template(sets=["fhirBase=canoe.example.org/fhir"])
    assert refused.returncode != 0 and "fhirBase" in refused.stderr


def test_pods_listen_on_their_address_and_unauthenticated_grpc_is_said_explicitly(
    helm: Helm,
) -> None:
    from service.errors import InputError
    from service.server import check_exposure

    default = configmap_data(helm.render())
    assert default["CANOE_GRPC_HOST"] == "0.0.0.0"
    assert default["CANOE_ALLOW_UNAUTHENTICATED"] == "true"
    check_exposure(load_settings(environ=default))  # the default install starts

    closed = configmap_data(helm.render(sets=["auth.allowUnauthenticated=false"]))
    assert closed["CANOE_ALLOW_UNAUTHENTICATED"] == "false"
    with pytest.raises(InputError, match=r"refusing to listen on 0\.0\.0\.0"):
        check_exposure(load_settings(environ=closed))


def test_jwt_with_any_audience_only_when_asked_and_passed_on(helm: Helm) -> None:
    sets = ["auth.mode=jwt", "auth.jwt.existingSecret=jwks", "auth.jwt.allowAnyAudience=true"]
    data = configmap_data(helm.render(sets=sets))
    assert data["CANOE_AUTH_ALLOW_ANY_AUDIENCE"] == "true"
    assert "CANOE_AUTH_AUDIENCE" not in data and "CANOE_AUTH_ISSUER" not in data
    allowed = {"CANOE_AUTH_ALLOW_ANY_AUDIENCE": data["CANOE_AUTH_ALLOW_ANY_AUDIENCE"]}
    assert load_settings(environ=allowed).auth.allow_any_audience is True
    strict = [*sets[:2], "auth.jwt.audience=canoe", "auth.jwt.issuer=https://idp.example"]
    assert "CANOE_AUTH_ALLOW_ANY_AUDIENCE" not in configmap_data(helm.render(sets=strict))


def test_plan_memory_budget_is_a_chart_value(helm: Helm) -> None:
    data = configmap_data(helm.render(sets=["config.maxPlanMemoryMb=1024"]))
    assert data["CANOE_MAX_PLAN_MEMORY_MB"] == "1024"
    assert (
        load_settings(environ={"CANOE_MAX_PLAN_MEMORY_MB": "1024"}).limits.max_plan_memory_mb
        == 1024
    )
    assert "CANOE_MAX_PLAN_MEMORY_MB" not in configmap_data(helm.render())
    refused = helm.template(sets=["config.maxPlanMemoryMb=8"])
    assert refused.returncode != 0 and "maxPlanMemoryMb" in refused.stderr
