"""The vLLM models' configuration the chart writes into Triton's model repository.

With triton.deploy.modelRepository.source=chart the chart renders each model's config.pbtxt and
1/model.json into a ConfigMap that an init container copies into an emptyDir repository. These
tests render the chart with a real helm, parse every config.pbtxt with Triton's own ModelConfig
protobuf and every model.json as JSON, and check the pod wiring, the names against what the
service calls, the refusals, and that the bring-your-own mode (source=claim) renders none of it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from service.settings import load_settings
from tests.helm.conftest import VALUES_DIR, Helm, Rendered
from tests.helm.test_chart import (
    K8S_VERSION,
    configmap_data,
    container,
    egress_ports,
    render_notes,
)

pytestmark = pytest.mark.helm

SCENARIO = [VALUES_DIR / "triton-vllm.yaml"]
BYO = [VALUES_DIR / "triton-gpu.yaml"]
# The least a chart-managed install needs: the rest are the chart's defaults.
MINIMAL = [
    "config.backend=triton",
    "triton.deploy.enabled=true",
    "triton.deploy.modelRepository.source=chart",
    "triton.models.agent=medgemma-4b-it",
    "triton.models.adjudicator=medgemma-27b-text-it",
]


def two_models(first: dict | None = None, second: dict | None = None, root: str = "google") -> dict:
    """Values for the whole models list (helm replaces a list, it never edits the default one):
    the two default models as the chart ships them, each updated with its changes."""
    models = [
        {"name": name, "model": f"{root}/{name}", "engineArgs": {"gpu_memory_utilization": memory}}
        for name, memory in (("medgemma-4b-it", 0.2), ("medgemma-27b-text-it", 0.7))
    ]
    for model, change in zip(models, (first or {}, second or {}), strict=True):
        engine = {**model["engineArgs"], **change.get("engineArgs", {})}
        model.update(change)
        model["engineArgs"] = engine
    return {"triton": {"deploy": {"vllm": {"models": models}}}}


def values_file(tmp_path: Path, values: dict | None) -> list[Path]:
    """A values file holding `values` (none when there are none)."""
    if values is None:
        return []
    path = tmp_path / f"values-{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return [path]


WEIGHTS_CLAIM = [
    *MINIMAL,
    "triton.deploy.vllm.weights.existingClaim=model-weights",
    "triton.deploy.vllm.weights.subPath=hf",
]


def models_configmap(r: Rendered) -> dict[str, str]:
    return r.one("ConfigMap", "-triton-models")["data"]


def model_jsons(r: Rendered) -> dict[str, dict]:
    """Each model's model.json, parsed: a syntax error fails the test here."""
    return {
        key.removesuffix(".model.json"): json.loads(text)
        for key, text in models_configmap(r).items()
        if key.endswith(".model.json")
    }


def model_configs(r: Rendered) -> dict[str, model_config_pb2.ModelConfig]:
    """Each config.pbtxt parsed by Triton's own ModelConfig message: an unknown field fails."""
    out = {}
    for key, text in models_configmap(r).items():
        if key.endswith(".config.pbtxt"):
            out[key.removesuffix(".config.pbtxt")] = text_format.Parse(
                text, model_config_pb2.ModelConfig()
            )
    return out


def triton_pod(r: Rendered) -> dict:
    pod: dict = r.one("Deployment", "-triton")["spec"]["template"]
    return pod


def triton_env(r: Rendered) -> dict[str, dict]:
    c = container(r.one("Deployment", "-triton"), "triton")
    return {e["name"]: e for e in c["env"]}


@pytest.fixture(scope="module")
def managed(helm: Helm) -> Rendered:
    return helm.render(SCENARIO)


def test_every_model_json_is_json_with_prefix_caching_on_by_default(helm: Helm) -> None:
    # The chart's defaults alone, not the scenario: prefix caching must not need asking for.
    jsons = model_jsons(helm.render(sets=MINIMAL))
    assert set(jsons) == {"medgemma-4b-it", "medgemma-27b-text-it"}
    for cfg in jsons.values():
        assert cfg["enable_prefix_caching"] is True
        assert cfg["disable_log_requests"] is True  # prompts carry the patient record
        assert isinstance(cfg["max_model_len"], int)  # 16384, not 16384.0 or 1.6384e+04
    assert jsons["medgemma-4b-it"]["model"] == "google/medgemma-4b-it"
    assert jsons["medgemma-27b-text-it"]["model"] == "google/medgemma-27b-text-it"
    assert sum(cfg["gpu_memory_utilization"] for cfg in jsons.values()) <= 1
    # null engine arguments are left out, so vLLM's own defaults hold.
    assert not {"dtype", "quantization", "guided_decoding_backend"} & {
        k for cfg in jsons.values() for k in cfg
    }


def test_shared_and_per_model_engine_args_merge_key_by_key(
    managed: Rendered, helm: Helm, tmp_path: Path
) -> None:
    jsons = model_jsons(managed)
    for cfg in jsons.values():
        assert cfg["max_num_seqs"] == 32  # shared engineArgs from the scenario
        assert cfg["seed"] == 0  # a shared extra argument; 0 is a value, not an absence
        assert cfg["enable_prefix_caching"] is True
    assert jsons["medgemma-4b-it"]["gpu_memory_utilization"] == 0.2
    assert jsons["medgemma-27b-text-it"]["gpu_memory_utilization"] == 0.7
    # A model's own false beats the shared true; its own extra argument beats a shared one.
    first = {
        "engineArgs": {"enable_prefix_caching": False, "gpu_memory_utilization": 0.25},
        "extraEngineArgs": [{"name": "kv_cache_dtype", "value": "fp8"}],
    }
    jsons = model_jsons(
        helm.render(
            values_file(tmp_path, two_models(first=first)),
            sets=[
                *MINIMAL,
                "triton.deploy.vllm.extraEngineArgs[0].name=kv_cache_dtype",
                "triton.deploy.vllm.extraEngineArgs[0].value=auto",
            ],
        )
    )
    small, large = jsons["medgemma-4b-it"], jsons["medgemma-27b-text-it"]
    assert small["enable_prefix_caching"] is False
    assert large["enable_prefix_caching"] is True
    assert (small["kv_cache_dtype"], large["kv_cache_dtype"]) == ("fp8", "auto")
    assert (small["gpu_memory_utilization"], large["gpu_memory_utilization"]) == (0.25, 0.7)


def test_every_config_pbtxt_is_a_decoupled_vllm_model(managed: Rendered) -> None:
    configs = model_configs(managed)
    assert set(configs) == set(model_jsons(managed))
    for name, cfg in configs.items():
        assert cfg.name == name
        assert cfg.backend == "vllm"
        assert cfg.max_batch_size == 0
        assert cfg.model_transaction_policy.decoupled is True
        (group,) = cfg.instance_group
        assert group.kind == model_config_pb2.ModelInstanceGroup.KIND_MODEL


def test_the_triton_models_are_the_ones_the_service_calls(managed: Rendered, helm: Helm) -> None:
    service = load_settings(environ=configmap_data(managed)).triton
    served = set(model_configs(managed))
    assert {service.model_agent, service.model_adjudicator} == served
    # The chart's default models are the service's own default model names, so a chart-managed
    # install and a service left at its defaults agree without anyone spelling the names out.
    defaults = load_settings(environ={}).triton
    assert set(model_jsons(helm.render(sets=MINIMAL))) == {
        defaults.model_agent,
        defaults.model_adjudicator,
    }


def test_the_init_container_writes_every_model_into_an_emptydir_repository(
    managed: Rendered,
) -> None:
    pod = triton_pod(managed)
    spec = pod["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert "emptyDir" in volumes["models"]
    config = volumes["model-config"]["configMap"]
    assert config["name"] == managed.one("ConfigMap", "-triton-models")["metadata"]["name"]
    paths = {i["key"]: i["path"] for i in config["items"]}
    assert set(paths) == set(models_configmap(managed))  # every file reaches the repository
    for name in model_jsons(managed):
        assert paths[f"{name}.config.pbtxt"] == f"{name}/config.pbtxt"
        assert paths[f"{name}.model.json"] == f"{name}/1/model.json"
    (init,) = spec["initContainers"]
    script = init["command"][-1]
    copies = [line.split()[2].strip("'") for line in script.splitlines() if line.strip()]
    assert copies == [f"/model-config/{n}" for n in model_jsons(managed)]
    assert {m["name"]: m["mountPath"] for m in init["volumeMounts"]} == {
        "model-config": "/model-config",
        "models": "/models",
    }
    assert init["securityContext"]["readOnlyRootFilesystem"] is True
    triton = container(managed.one("Deployment", "-triton"), "triton")
    (repo,) = [m for m in triton["volumeMounts"] if m["name"] == "models"]
    assert repo == {"name": "models", "mountPath": "/models", "readOnly": True}
    assert "--model-repository=/models" in triton["args"]
    assert "checksum/models" in pod["metadata"]["annotations"]


def test_hub_downloads_get_a_token_a_cache_claim_and_https_egress(managed: Rendered) -> None:
    env = triton_env(managed)
    assert env["HF_HOME"]["value"] == "/cache/huggingface"
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "hf-token", "key": "token"}
    assert "HF_HUB_OFFLINE" not in env
    spec = triton_pod(managed)["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["hf-cache"]["persistentVolumeClaim"] == {"claimName": "hf-cache"}
    mounts = [
        m["mountPath"]
        for m in container(managed.one("Deployment", "-triton"), "triton")["volumeMounts"]
    ]
    assert mounts.index("/cache") < mounts.index("/cache/huggingface")
    policy = managed.one("NetworkPolicy", "-triton")
    assert egress_ports(policy) == {53, 443}
    (https,) = [r for r in policy["spec"]["egress"] if r["ports"][0]["port"] == 443]
    assert https["to"][0]["ipBlock"]["cidr"] == "0.0.0.0/0"


def test_weights_from_a_claim_never_ask_the_hub(helm: Helm, tmp_path: Path) -> None:
    r = helm.render(values_file(tmp_path, two_models(root="/weights")), sets=WEIGHTS_CLAIM)
    for doc in r.docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    env = triton_env(r)
    assert env["HF_HUB_OFFLINE"]["value"] == "1"
    assert "HF_TOKEN" not in env
    spec = triton_pod(r)["spec"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["weights"]["persistentVolumeClaim"] == {
        "claimName": "model-weights",
        "readOnly": True,
    }
    (weights,) = [
        m
        for m in container(r.one("Deployment", "-triton"), "triton")["volumeMounts"]
        if m["name"] == "weights"
    ]
    assert weights == {
        "name": "weights",
        "mountPath": "/weights",
        "readOnly": True,
        "subPath": "hf",
    }
    assert model_jsons(r)["medgemma-4b-it"]["model"] == "/weights/medgemma-4b-it"
    assert egress_ports(r.one("NetworkPolicy", "-triton")) == {53}


def test_bring_your_own_repository_renders_none_of_it(helm: Helm) -> None:
    # The vLLM values are customised here, yet source=claim (the default) must ignore them all.
    r = helm.render(BYO, sets=["triton.deploy.vllm.engineArgs.max_num_seqs=4"])
    assert [c["metadata"]["name"] for c in r.of_kind("ConfigMap")] == ["canoe"]
    pod = triton_pod(r)
    assert "initContainers" not in pod["spec"]
    assert "checksum/models" not in pod["metadata"].get("annotations", {})
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert set(volumes) == {"models", "dshm", "cache", "tmp"}
    assert volumes["models"]["persistentVolumeClaim"]["claimName"] == "triton-models"
    assert not {k for k in triton_env(r) if k.startswith("HF_")}
    assert egress_ports(r.one("NetworkPolicy", "-triton")) == {53}
    # And the embedded backend renders no Triton at all.
    assert helm.render().of_kind("ConfigMap") == [helm.render().one("ConfigMap", "canoe")]


def test_a_changed_engine_argument_restarts_triton(helm: Helm) -> None:
    def checksum(sets: list[str]) -> str:
        annotations = triton_pod(helm.render(sets=sets))["metadata"]["annotations"]
        return str(annotations["checksum/models"])

    base = checksum(MINIMAL)
    assert base == checksum(MINIMAL)
    assert base != checksum([*MINIMAL, "triton.deploy.vllm.engineArgs.max_num_seqs=16"])


REFUSED: dict[str, tuple[list[str], dict | None, str]] = {
    "chart-with-repository-claim": (
        ["triton.deploy.modelRepository.existingClaim=m"],
        None,
        "modelRepository.source=chart writes the model repository itself",
    ),
    "agent-not-served": (
        ["triton.models.agent=llama-3.1-8b"],
        None,
        "triton.models.agent=llama-3.1-8b is not among triton.deploy.vllm.models",
    ),
    "per-step-model-not-served": (
        ["triton.models.perStep.panel=qwen2.5-72b"],
        None,
        "triton.models.perStep.panel=qwen2.5-72b is not among",
    ),
    "model-nobody-calls": (
        ["triton.models.adjudicator=medgemma-4b-it"],
        None,
        "holds medgemma-27b-text-it, which neither",
    ),
    "gpu-memory-over-one-gpu": (
        [],
        two_models(second={"engineArgs": {"gpu_memory_utilization": 0.9}}),
        "add up to 1.10",
    ),
    "unset-gpu-memory-counts-as-vllm-default": (
        [],
        two_models(first={"engineArgs": {"gpu_memory_utilization": None}}),
        "add up to 1.60",
    ),
    "tensor-parallel-over-the-pods-gpus": (
        ["triton.deploy.vllm.engineArgs.tensor_parallel_size=2"],
        None,
        "tensor_parallel_size 2, but the Triton pod gets 1 GPU(s)",
    ),
    "infer-protocol-on-decoupled-models": (
        ["triton.protocol=infer"],
        None,
        "triton.protocol=infer cannot call the chart's vLLM models",
    ),
    "path-without-weights-claim": (
        [],
        two_models(first={"model": "/weights/medgemma-4b-it"}),
        "a path, but no weights claim is mounted",
    ),
    "hub-id-with-weights-claim": (
        ["triton.deploy.vllm.weights.existingClaim=w"],
        None,
        "the Hub is off (HF_HUB_OFFLINE=1) and the weights are under /weights",
    ),
    "extra-arg-repeats-a-named-one": (
        [
            "triton.deploy.vllm.extraEngineArgs[0].name=enable_prefix_caching",
            "triton.deploy.vllm.extraEngineArgs[0].value=false",
        ],
        None,
        "extraEngineArgs names enable_prefix_caching",
    ),
    "extra-arg-sets-the-model": (
        [],
        two_models(first={"extraEngineArgs": [{"name": "model", "value": "x"}]}),
        "triton.deploy.vllm.models medgemma-4b-it name model",
    ),
    "duplicate-model-names": (
        [],
        two_models(second={"name": "medgemma-4b-it"}),
        "names medgemma-4b-it twice",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_impossible_vllm_combinations_fail_with_their_message(
    helm: Helm, tmp_path: Path, case: str
) -> None:
    sets, models, message = REFUSED[case]
    proc = helm.template(values_file(tmp_path, models), sets=[*MINIMAL, *sets])
    assert proc.returncode != 0
    assert message in proc.stderr, proc.stderr


def test_a_repository_claim_is_still_required_without_chart_source(helm: Helm) -> None:
    sets = [s for s in MINIMAL if "source=" not in s]
    proc = helm.template(sets=sets)
    assert proc.returncode != 0
    assert "or triton.deploy.modelRepository.source=chart" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("sets", "models"),
    [
        (["triton.deploy.modelRepository.source=s3"], None),
        (["triton.deploy.vllm.engineArgs.enable_prefix_cache=true"], None),  # misspelt
        (["triton.deploy.vllm.engineArgs.max_model_len=0"], None),
        (["triton.deploy.vllm.engineArgs.dtype=int4"], None),
        (["triton.deploy.vllm.huggingFace.token=hf_x"], None),  # tokens only from a Secret
        (["triton.deploy.vllm.weights.mountPath=relative"], None),
        # A models list valid but for the one change:
        ([], two_models(first={"engineArgs": {"gpu_memory_utilization": 1.5}})),
        ([], two_models(second={"name": "google/medgemma"})),  # not a directory name
        ([], two_models(first={"extraEngineArgs": [{"name": "seed"}]})),  # no value
        ([], two_models(first={"tokenizer": "x"})),
    ],
)
def test_schema_rejects_unknown_or_wrong_vllm_values(
    helm: Helm, tmp_path: Path, sets: list[str], models: dict | None
) -> None:
    proc = helm.template(values_file(tmp_path, models), sets=[*MINIMAL, *sets])
    assert proc.returncode != 0
    assert "values don't meet the specifications of the schema" in proc.stderr, proc.stderr


def _configmap_volume(root: Path, data: dict[str, str], items: list[dict]) -> None:
    """What the kubelet mounts for a ConfigMap volume with items: the files under a timestamped
    directory, `..data` linking to it, and each top-level path linking into `..data`."""
    stamp = root / "..2026_01_01_00_00_00.000000000"
    for item in items:
        target = stamp / item["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(data[item["key"]], encoding="utf-8")
    (root / "..data").symlink_to(stamp.name)
    for top in {item["path"].split("/")[0] for item in items}:
        (root / top).symlink_to(f"..data/{top}")


def test_the_init_script_builds_a_repository_triton_can_read(
    managed: Rendered, tmp_path: Path
) -> None:
    """Runs the rendered init script over a ConfigMap volume laid out as the kubelet lays it out,
    then reads the repository the way Triton does: one directory per model, nothing hidden."""
    spec = triton_pod(managed)["spec"]
    (volume,) = [v for v in spec["volumes"] if v["name"] == "model-config"]
    source, repo = tmp_path / "model-config", tmp_path / "models"
    source.mkdir()
    repo.mkdir()
    _configmap_volume(source, models_configmap(managed), volume["configMap"]["items"])
    (init,) = spec["initContainers"]
    script = (
        init["command"][-1].replace("/model-config/", f"{source}/").replace("/models/", f"{repo}/")
    )
    proc = subprocess.run([*init["command"][:-1], script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in repo.iterdir())
    assert names == sorted(model_jsons(managed))  # no ..data or other hidden entries
    for name in names:
        assert sorted(str(p.relative_to(repo / name)) for p in (repo / name).rglob("*")) == [
            "1",
            "1/model.json",
            "config.pbtxt",
        ]
        assert not (repo / name).is_symlink()
        cfg = text_format.Parse(
            (repo / name / "config.pbtxt").read_text(encoding="utf-8"),
            model_config_pb2.ModelConfig(),
        )
        assert cfg.name == name and cfg.backend == "vllm"
        engine = json.loads((repo / name / "1" / "model.json").read_text(encoding="utf-8"))
        assert engine["enable_prefix_caching"] is True


def test_notes_say_who_configures_the_models(helm: Helm, tmp_path: Path) -> None:
    managed = render_notes(helm, tmp_path / "managed", MINIMAL)
    assert "configured by this chart (ConfigMap canoe-triton-models)" in managed
    assert "downloaded from the Hugging Face Hub" in managed
    byo = render_notes(
        helm,
        tmp_path / "byo",
        [s for s in MINIMAL if "source=" not in s]
        + ["triton.deploy.modelRepository.existingClaim=repo"],
    )
    assert "configured by this chart" not in byo
