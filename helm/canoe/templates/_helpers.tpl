{{/*
Names, labels and the value checks shared by every template. Names are cut to 63 characters
because Kubernetes rejects longer DNS labels; every helper is prefixed with the chart name so a
parent chart's helpers never collide with these.
*/}}

{{- define "canoe.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "canoe.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The in-cluster Triton's name: the full name cut short enough to keep the suffix. */}}
{{- define "canoe.triton.fullname" -}}
{{- printf "%s-triton" (include "canoe.fullname" . | trunc 56 | trimSuffix "-") }}
{{- end }}

{{- define "canoe.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "canoe.labels" -}}
helm.sh/chart: {{ include "canoe.chart" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: {{ include "canoe.name" . }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "canoe.selectorLabels" -}}
app.kubernetes.io/name: {{ include "canoe.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: service
{{- end }}

{{- define "canoe.triton.selectorLabels" -}}
app.kubernetes.io/name: {{ include "canoe.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: triton
{{- end }}

{{- define "canoe.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "canoe.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "canoe.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* gRPC address of Triton as the service dials it: the in-cluster Service or the external URL. */}}
{{- define "canoe.tritonUrl" -}}
{{- if .Values.triton.deploy.enabled }}
{{- printf "%s:%d" (include "canoe.triton.fullname" .) (int .Values.triton.deploy.ports.grpc) }}
{{- else }}
{{- .Values.triton.url }}
{{- end }}
{{- end }}

{{/* Port of the external Triton URL (host:port), for the egress rule; 8001 when none is given. */}}
{{- define "canoe.tritonExternalPort" -}}
{{- $m := regexFind ":[0-9]+$" .Values.triton.url }}
{{- if $m }}{{ trimPrefix ":" $m }}{{ else }}8001{{ end }}
{{- end }}

{{/* Port of the OTLP endpoint (scheme://host:port), for the egress rule; 4317 when none is given. */}}
{{- define "canoe.otlpPort" -}}
{{- $m := regexFind ":[0-9]+/?$" .Values.otel.endpoint }}
{{- if $m }}{{ trimPrefix ":" (trimSuffix "/" $m) }}{{ else }}4317{{ end }}
{{- end }}

{{- define "canoe.sqlitePvcName" -}}
{{- default (printf "%s-data" (include "canoe.fullname" . | trunc 58 | trimSuffix "-")) .Values.store.sqlite.persistence.existingClaim }}
{{- end }}

{{/*
Refuses value combinations that would install but never work. Each message names the values to
change, because the person reading it is a platform engineer at install time, not a developer.
*/}}
{{- define "canoe.validateValues" -}}
{{- $v := .Values }}
{{- $sqlite := eq $v.store.type "sqlite" }}
{{- if and $sqlite (gt (int $v.replicaCount) 1) }}
{{- fail (printf "canoe: replicaCount=%d with store.type=sqlite is impossible: SQLite is one file on one volume and serves a single replica. Set store.type=postgresql with store.postgresql.existingSecret, or replicaCount=1." (int $v.replicaCount)) }}
{{- end }}
{{- if and $sqlite $v.autoscaling.enabled (gt (int $v.autoscaling.maxReplicas) 1) }}
{{- fail "canoe: autoscaling.enabled=true with store.type=sqlite is impossible: the autoscaler would add replicas that cannot share the SQLite file. Set store.type=postgresql with store.postgresql.existingSecret, or autoscaling.enabled=false." }}
{{- end }}
{{- if ($v.resources.requests | default dict).cpu }}
{{- fail "canoe: resources.requests.cpu is set, but the CPU request follows workers (one core per worker process); set workers instead." }}
{{- end }}
{{- with ($v.resources.limits | default dict).cpu }}
{{- $limit := toString . }}
{{- $milli := hasSuffix "m" $limit | ternary (trimSuffix "m" $limit | float64) (mulf ($limit | float64) 1000.0) }}
{{- if lt $milli (mulf (float64 $v.workers) 1000.0) }}
{{- fail (printf "canoe: resources.limits.cpu=%s is below workers=%d cores: the workers would be throttled onto fewer cores than they are. Raise the limit or lower workers." $limit (int $v.workers)) }}
{{- end }}
{{- end }}
{{- if and (eq $v.store.type "postgresql") (not $v.store.postgresql.existingSecret) }}
{{- fail "canoe: store.type=postgresql needs store.postgresql.existingSecret, the name of a Secret holding the DSN under store.postgresql.dsnKey; the chart never takes the DSN inline." }}
{{- end }}
{{- if and $v.autoscaling.enabled (gt (int $v.autoscaling.minReplicas) (int $v.autoscaling.maxReplicas)) }}
{{- fail "canoe: autoscaling.minReplicas is larger than autoscaling.maxReplicas." }}
{{- end }}
{{- if eq $v.config.backend "triton" }}
{{- if and (not $v.triton.deploy.enabled) (not $v.triton.url) }}
{{- fail "canoe: config.backend=triton needs a Triton: set triton.url to an external Triton (host:port, gRPC) or triton.deploy.enabled=true to run one on GPU nodes." }}
{{- end }}
{{- if or (not $v.triton.models.agent) (not $v.triton.models.adjudicator) }}
{{- fail "canoe: config.backend=triton needs triton.models.agent and triton.models.adjudicator, the Triton model names the service calls." }}
{{- end }}
{{- end }}
{{- if and $v.triton.deploy.enabled $v.triton.url }}
{{- fail "canoe: triton.url and triton.deploy.enabled=true are both set; use the in-cluster Triton (empty triton.url) or the external one (triton.deploy.enabled=false), not both." }}
{{- end }}
{{- if and $v.triton.deploy.enabled (ne $v.config.backend "triton") }}
{{- fail "canoe: triton.deploy.enabled=true with config.backend=embedded would hold GPUs that nothing calls; set config.backend=triton or triton.deploy.enabled=false." }}
{{- end }}
{{- if $v.triton.deploy.enabled }}
{{- include "canoe.vllm.validate" . }}
{{- end }}
{{- if and $v.tls.enabled (not $v.tls.existingSecret) }}
{{- fail "canoe: tls.enabled=true needs tls.existingSecret, the name of a kubernetes.io/tls Secret with tls.crt and tls.key; the chart never takes key material inline." }}
{{- end }}
{{- if and $v.tls.clientCA.existingSecret (not $v.tls.enabled) }}
{{- fail "canoe: tls.clientCA.existingSecret (mTLS) is set but tls.enabled=false; client certificates need TLS. Set tls.enabled=true with tls.existingSecret." }}
{{- end }}
{{- if and (eq $v.auth.mode "tokens") (not $v.auth.tokens.existingSecret) }}
{{- fail "canoe: auth.mode=tokens needs auth.tokens.existingSecret, the Secret holding the bearer tokens file." }}
{{- end }}
{{- if and (eq $v.auth.mode "jwt") (not $v.auth.jwt.existingSecret) }}
{{- fail "canoe: auth.mode=jwt needs auth.jwt.existingSecret, the Secret holding the JWKS the tokens are checked against." }}
{{- end }}
{{- if and (eq $v.auth.mode "jwt") (or (not $v.auth.jwt.audience) (not $v.auth.jwt.issuer)) (not $v.auth.jwt.allowAnyAudience) }}
{{- fail "canoe: auth.mode=jwt needs auth.jwt.audience and auth.jwt.issuer: without them a token minted for any service by any issuer whose key is in the JWKS is accepted. Set both, or auth.jwt.allowAnyAudience=true to accept that knowingly (logged at start-up)." }}
{{- end }}
{{- if and $v.metrics.serviceMonitor.enabled (not $v.metrics.enabled) }}
{{- fail "canoe: metrics.serviceMonitor.enabled=true needs metrics.enabled=true, or the ServiceMonitor has no port to scrape." }}
{{- end }}
{{- $pdb := $v.podDisruptionBudget }}
{{- if and $pdb.enabled (not (kindIs "invalid" $pdb.maxUnavailable)) (not (kindIs "invalid" $pdb.minAvailable)) }}
{{- fail "canoe: podDisruptionBudget takes maxUnavailable or minAvailable, not both; set the other to null." }}
{{- end }}
{{- if and $pdb.enabled (kindIs "invalid" $pdb.maxUnavailable) (kindIs "invalid" $pdb.minAvailable) }}
{{- fail "canoe: podDisruptionBudget.enabled=true needs maxUnavailable or minAvailable." }}
{{- end }}
{{- /* Panel sizes: the service refuses these at start-up (CrashLoopBackOff); say so at install.
       Only the levels that are set are compared, since the chart does not copy the service's
       defaults; the service still checks a set level against a defaulted one. */}}
{{- $prev := list 1 1 "" }}
{{- range $level := list "low" "moderate" "high" "veryHigh" }}
{{- $val := get $v.config.panelSizes $level }}
{{- if and (not (kindIs "invalid" $val)) (ne (toString $val) "") }}
{{- $parts := splitList "," (toString $val) }}
{{- $base := atoi (trim (first $parts)) }}
{{- $ext := atoi (trim (last $parts)) }}
{{- if lt $ext $base }}
{{- fail (printf "canoe: config.panelSizes.%s=%q has extended %d below base %d; write \"base,extended\" with base <= extended." $level (toString $val) $ext $base) }}
{{- end }}
{{- if or (lt $base (index $prev 0)) (lt $ext (index $prev 1)) }}
{{- fail (printf "canoe: config.panelSizes.%s=%q is smaller than config.panelSizes.%s; panel sizes must not shrink as case complexity grows." $level (toString $val) (index $prev 2)) }}
{{- end }}
{{- $prev = list $base $ext $level }}
{{- end }}
{{- end }}
{{- if and (or (gt (int $v.replicaCount) 1) $v.autoscaling.enabled) (not $v.reviewApp.signingKeySecret) }}
{{- fail "canoe: more than one replica needs reviewApp.signingKeySecret, a Secret holding the review app's signing key: without it each pod signs review sessions with its own random key and a session opened on one pod is refused by the next." }}
{{- end }}
{{- end }}

{{/* A NetworkPolicy egress rule to some peers on one TCP port; no peers means any destination. */}}
{{- define "canoe.egressRule" -}}
- ports:
    - protocol: TCP
      port: {{ .port }}
  {{- with .peers }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{/* Egress to the cluster DNS, which every pod that resolves a Service name needs. */}}
{{- define "canoe.dnsEgressRule" -}}
- to:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: {{ .Values.networkPolicy.dns.namespace }}
      podSelector:
        matchLabels:
          {{- toYaml .Values.networkPolicy.dns.podLabels | nindent 10 }}
  ports:
    - protocol: UDP
      port: 53
    - protocol: TCP
      port: 53
{{- end }}

{{/* A number as the service parses it: whole numbers without the 1e+06 notation YAML floats get. */}}
{{- define "canoe.num" -}}
{{- if and (kindIs "float64" .) (eq (float64 .) (floor .)) }}{{ int64 . }}{{ else }}{{ . }}{{ end }}
{{- end }}

{{/* Egress of the service pods: DNS, then Triton, the store and the collector when configured. */}}
{{- define "canoe.serviceEgressRules" -}}
{{- $v := .Values }}
{{- $np := $v.networkPolicy }}
{{- if $np.dns.enabled }}
{{- include "canoe.dnsEgressRule" . | nindent 0 }}
{{- end }}
{{- if eq $v.config.backend "triton" }}
{{- if $v.triton.deploy.enabled }}
- ports:
    - protocol: TCP
      port: {{ $v.triton.deploy.ports.grpc }}
  to:
    - podSelector:
        matchLabels:
          {{- include "canoe.triton.selectorLabels" . | nindent 10 }}
{{- else }}
{{- include "canoe.egressRule" (dict "port" (include "canoe.tritonExternalPort" . | int) "peers" $v.triton.networkPeers) | nindent 0 }}
{{- end }}
{{- end }}
{{- if eq $v.store.type "postgresql" }}
{{- include "canoe.egressRule" (dict "port" $v.store.postgresql.port "peers" $v.store.postgresql.networkPeers) | nindent 0 }}
{{- end }}
{{- if $v.otel.endpoint }}
{{- include "canoe.egressRule" (dict "port" (include "canoe.otlpPort" . | int) "peers" $v.otel.networkPeers) | nindent 0 }}
{{- end }}
{{- if $v.reviewApp.smartIssuers }}
{{- include "canoe.egressRule" (dict "port" 443 "peers" $v.reviewApp.networkPeers) | nindent 0 }}
{{- end }}
{{- end }}

{{/* CANOE_REVIEW_SMART_ISSUERS from reviewApp.smartIssuers: "tenant=iss,tenant=iss". */}}
{{- define "canoe.reviewIssuers" -}}
{{- $out := list }}
{{- range . }}
{{- $out = append $out (printf "%s=%s" .tenant .iss) }}
{{- end }}
{{- join "," $out }}
{{- end }}

{{/*
The service container's resources: as given, with the CPU request set to one core per worker.
*/}}
{{- define "canoe.resources" -}}
{{- $res := deepCopy .Values.resources }}
{{- $requests := $res.requests | default dict }}
{{- $_ := set $requests "cpu" (toString (int .Values.workers)) }}
{{- $_ := set $res "requests" $requests }}
{{- toYaml $res }}
{{- end }}

{{/* Whether the chart writes the in-cluster Triton's model repository (source chart). */}}
{{- define "canoe.vllm.managed" -}}
{{- if and .Values.triton.deploy.enabled (eq .Values.triton.deploy.modelRepository.source "chart") }}true{{ end }}
{{- end }}

{{/* Whether Triton downloads the weights from the Hugging Face Hub (no weights claim). */}}
{{- define "canoe.vllm.downloads" -}}
{{- if and (include "canoe.vllm.managed" .) (not .Values.triton.deploy.vllm.weights.existingClaim) }}true{{ end }}
{{- end }}

{{/* Name of the ConfigMap holding the chart-written model configurations (kept to 63 characters). */}}
{{- define "canoe.vllm.configMapName" -}}
{{- printf "%s-triton-models" (include "canoe.fullname" . | trunc 49 | trimSuffix "-") }}
{{- end }}

{{/* The vLLM engine arguments values name one by one, in the order they are documented. */}}
{{- define "canoe.vllm.engineArgKeys" -}}
enable_prefix_caching disable_log_requests gpu_memory_utilization max_model_len max_num_seqs tensor_parallel_size dtype quantization enforce_eager guided_decoding_backend
{{- end }}

{{/*
One model's model.json, as JSON: its `model`, then each named engine argument from the model's
engineArgs when it has the key (false and 0 included) else from the shared engineArgs, null left
out; then the shared extraEngineArgs and the model's, the model's winning on a shared name.
Called with (dict "root" $ "model" $model).
*/}}
{{- define "canoe.vllm.modelJson" -}}
{{- $vllm := .root.Values.triton.deploy.vllm }}
{{- $m := .model }}
{{- $shared := $vllm.engineArgs | default dict }}
{{- $own := $m.engineArgs | default dict }}
{{- $out := dict "model" $m.model }}
{{- range $key := splitList " " (include "canoe.vllm.engineArgKeys" .root) }}
{{- $val := index $shared $key }}
{{- if hasKey $own $key }}
{{- $val = index $own $key }}
{{- end }}
{{- if not (kindIs "invalid" $val) }}
{{- $_ := set $out $key $val }}
{{- end }}
{{- end }}
{{- range $arg := concat ($vllm.extraEngineArgs | default list) ($m.extraEngineArgs | default list) }}
{{- $_ := set $out $arg.name $arg.value }}
{{- end }}
{{- toPrettyJson $out }}
{{- end }}

{{/* One model's config.pbtxt for Triton's vLLM backend. The backend fills in the inputs and
outputs itself (text_input, stream, sampling_parameters, exclude_input_in_output -> text_output),
and it refuses to run unless the model is decoupled; vLLM batches, so Triton does not (0). */}}
{{- define "canoe.vllm.configPbtxt" -}}
name: {{ .name | quote }}
backend: "vllm"
max_batch_size: 0
model_transaction_policy {
  decoupled: true
}
# KIND_MODEL: vLLM places the model on the pod's GPUs itself (tensor_parallel_size of them).
instance_group [
  {
    count: 1
    kind: KIND_MODEL
  }
]
{{- end }}

{{/*
Refuses in-cluster Triton values that would install but never serve the service's models: the
repository source against the claims, the service's model names against the chart's vLLM models,
the models' GPU memory and GPU count against the pod's GPUs, and the engine arguments' names.
*/}}
{{- define "canoe.vllm.validate" -}}
{{- $v := .Values }}
{{- $t := $v.triton.deploy }}
{{- $repo := $t.modelRepository }}
{{- if eq $repo.source "claim" }}
{{- if not $repo.existingClaim }}
{{- fail "canoe: triton.deploy.enabled=true needs triton.deploy.modelRepository.existingClaim, the PersistentVolumeClaim holding the Triton model repository, or triton.deploy.modelRepository.source=chart to have the chart write the vLLM models' configuration from triton.deploy.vllm.models." }}
{{- end }}
{{- else }}
{{- $vllm := $t.vllm }}
{{- if $repo.existingClaim }}
{{- fail (printf "canoe: triton.deploy.modelRepository.source=chart writes the model repository itself, yet triton.deploy.modelRepository.existingClaim=%s is set too; put the weights on triton.deploy.vllm.weights.existingClaim and empty modelRepository.existingClaim, or set modelRepository.source=claim to serve that claim's repository as it is." $repo.existingClaim) }}
{{- end }}
{{- if eq $v.triton.protocol "infer" }}
{{- fail "canoe: triton.protocol=infer cannot call the chart's vLLM models: Triton's vLLM backend only runs decoupled, and a decoupled model answers streams only. Set triton.protocol=stream." }}
{{- end }}
{{- $names := list }}
{{- range $i, $m := $vllm.models }}
{{- if has $m.name $names }}
{{- fail (printf "canoe: triton.deploy.vllm.models names %s twice; each model is one directory of the repository, so names must differ." $m.name) }}
{{- end }}
{{- $names = append $names $m.name }}
{{- end }}
{{- $called := dict }}
{{- $_ := set $called "triton.models.agent" $v.triton.models.agent }}
{{- $_ := set $called "triton.models.adjudicator" $v.triton.models.adjudicator }}
{{- range $step, $model := $v.triton.models.perStep }}
{{- if $model }}
{{- $_ := set $called (printf "triton.models.perStep.%s" $step) $model }}
{{- end }}
{{- end }}
{{- range $key := keys $called | sortAlpha }}
{{- $model := get $called $key }}
{{- if not (has $model $names) }}
{{- fail (printf "canoe: %s=%s is not among triton.deploy.vllm.models (%s); the service would call a model Triton does not serve. Add it to triton.deploy.vllm.models or call one of those." $key $model (join ", " $names)) }}
{{- end }}
{{- end }}
{{- $used := values $called }}
{{- range $name := $names }}
{{- if not (has $name $used) }}
{{- fail (printf "canoe: triton.deploy.vllm.models holds %s, which neither triton.models.agent, triton.models.adjudicator nor any perStep model calls; it would hold GPU memory that nothing uses. Remove it or call it." $name) }}
{{- end }}
{{- end }}
{{- $known := splitList " " (include "canoe.vllm.engineArgKeys" .) }}
{{- $gpus := int (index ($t.resources.limits | default dict) "nvidia.com/gpu" | default 0) }}
{{- $memory := 0.0 }}
{{- $downloads := not $vllm.weights.existingClaim }}
{{- $mount := trimSuffix "/" $vllm.weights.mountPath }}
{{- range $m := $vllm.models }}
{{- $seen := list }}
{{- range $arg := $vllm.extraEngineArgs | default list }}
{{- if or (has $arg.name $known) (eq $arg.name "model") (has $arg.name $seen) }}
{{- fail (printf "canoe: triton.deploy.vllm.extraEngineArgs names %s, which engineArgs, the model's own `model` or another extra argument already sets; set it there once." $arg.name) }}
{{- end }}
{{- $seen = append $seen $arg.name }}
{{- end }}
{{- $seenOwn := list }}
{{- range $arg := $m.extraEngineArgs | default list }}
{{- if or (has $arg.name $known) (eq $arg.name "model") (has $arg.name $seenOwn) }}
{{- fail (printf "canoe: the extraEngineArgs of triton.deploy.vllm.models %s name %s, which its engineArgs, its `model` or another of its extra arguments already sets; set it there once." $m.name $arg.name) }}
{{- end }}
{{- $seenOwn = append $seenOwn $arg.name }}
{{- end }}
{{- $cfg := include "canoe.vllm.modelJson" (dict "root" $ "model" $m) | fromJson }}
{{- $memory = addf $memory (get $cfg "gpu_memory_utilization" | default 0.9) }}
{{- $tp := int (get $cfg "tensor_parallel_size" | default 1) }}
{{- if gt $tp $gpus }}
{{- fail (printf "canoe: triton.deploy.vllm.models %s has tensor_parallel_size %d, but the Triton pod gets %d GPU(s) (triton.deploy.resources.limits nvidia.com/gpu); raise the GPUs or lower tensor_parallel_size." $m.name $tp $gpus) }}
{{- end }}
{{- $local := hasPrefix "/" $m.model }}
{{- if and $downloads $local }}
{{- fail (printf "canoe: triton.deploy.vllm.models %s loads %s, a path, but no weights claim is mounted (triton.deploy.vllm.weights.existingClaim is empty); give a Hugging Face model id, or mount the weights." $m.name $m.model) }}
{{- end }}
{{- if and (not $downloads) (not (hasPrefix (printf "%s/" $mount) $m.model)) }}
{{- fail (printf "canoe: triton.deploy.vllm.models %s loads %s, but with triton.deploy.vllm.weights.existingClaim the Hub is off (HF_HUB_OFFLINE=1) and the weights are under %s; give the model's directory there, for example %s/%s." $m.name $m.model $mount $mount $m.name) }}
{{- end }}
{{- end }}
{{- if gt $memory 1.0 }}
{{- fail (printf "canoe: the gpu_memory_utilization of triton.deploy.vllm.models add up to %.2f (a model without one takes vLLM's 0.9); every model sits on the pod's first GPU, so they must add up to at most 1. Lower them." $memory) }}
{{- end }}
{{- end }}
{{- end }}
