{{/*
The chart's name, truncated to 63 characters (the DNS label limit).
*/}}
{{- define "liveness-lab.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The name prefix of every object: the release name when it already contains the chart name (the usual
`helm install liveness-lab ...` gives `liveness-lab`), else `<release>-<chart>`.
*/}}
{{- define "liveness-lab.fullname" -}}
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

{{/*
Chart name and version for the helm.sh/chart label.
*/}}
{{- define "liveness-lab.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Name of one component's objects, `<fullname>-<component>`; components are the variants and `downstream`.
Arguments: dict "root" $ "component" NAME.
*/}}
{{- define "liveness-lab.componentName" -}}
{{- printf "%s-%s" (include "liveness-lab.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels: name + instance (+ component), the only labels a selector may use, since they never change
across upgrades. Arguments: dict "root" $ ["component" NAME].
*/}}
{{- define "liveness-lab.selectorLabels" -}}
app.kubernetes.io/name: {{ include "liveness-lab.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{/*
Standard labels of every object. Arguments: dict "root" $ ["component" NAME].
*/}}
{{- define "liveness-lab.labels" -}}
helm.sh/chart: {{ include "liveness-lab.chart" .root }}
{{ include "liveness-lab.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Values.image.tag | quote }}
app.kubernetes.io/part-of: liveness-lab
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/*
The service image, pinned.
*/}}
{{- define "liveness-lab.image" -}}
{{- printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end }}

{{/*
The service's HTTP port: fixed by the image (Spring Boot's server.port), so not a value.
*/}}
{{- define "liveness-lab.httpPort" -}}
8080
{{- end }}

{{/*
DEMO_DOWNSTREAM_URL: the downstream Service's /api/work. No latencyMs here: the service adds each
request's own latency to the URL (Waiter#downstreamUri), so a configured one would never be used.
*/}}
{{- define "liveness-lab.downstreamUrl" -}}
{{- printf "http://%s:%s/api/work" (include "liveness-lab.componentName" (dict "root" . "component" "downstream")) (include "liveness-lab.httpPort" .) }}
{{- end }}

{{/*
"true" when a variant is deployed: `allVariants`, or its own `enabled` with its mode on a chosen `stack`;
empty otherwise, so it reads as a condition (`if include ...`). The one place that decides which variants
are on. Arguments: dict "root" $ "variant" VALUES-OF-ONE-VARIANT.
*/}}
{{- define "liveness-lab.enabled" -}}
{{- $stack := include "liveness-lab.stack" (dict "root" .root "mode" .variant.mode) }}
{{- if or .root.Values.allVariants (and .variant.enabled (has .root.Values.stack (list $stack "both"))) }}true{{ end }}
{{- end }}

{{/*
The stack a mode runs on, `webflux` or `servlet` (serviceModes). Arguments: dict "root" $ "mode" MODE.
*/}}
{{- define "liveness-lab.stack" -}}
{{- get .root.Values.serviceModes .mode }}
{{- end }}

{{/*
A variant's pod count: its own `replicas` when set (0 included), else the shared `replicas`.
Arguments: dict "root" $ "variant" VALUES-OF-ONE-VARIANT.
*/}}
{{- define "liveness-lab.replicas" -}}
{{- int (ternary .variant.replicas .root.Values.replicas (hasKey .variant "replicas")) }}
{{- end }}

{{/*
A variant's probe settings: its own `probes` deep-merged over the shared `probes` block, as JSON for
`fromJson` (a template returns text), so the Deployment and the checks read the same merge.
Arguments: dict "root" $ "variant" VALUES-OF-ONE-VARIANT.
*/}}
{{- define "liveness-lab.variantProbes" -}}
{{- mergeOverwrite (deepCopy .root.Values.probes) (deepCopy (.variant.probes | default dict)) | toJson }}
{{- end }}

{{/*
One probe: an HTTP GET, or a TCP connect when its `type` is tcpSocket (only the liveness probe has a
`type`). Arguments: dict "probe" SETTINGS "path" DEFAULT-PATH "port" PORT-NAME.
*/}}
{{- define "liveness-lab.probe" -}}
{{- if eq (.probe.type | default "httpGet") "tcpSocket" -}}
tcpSocket:
  port: {{ .port }}
{{- else -}}
httpGet:
  path: {{ .probe.path | default .path }}
  port: {{ .port }}
{{- end }}
periodSeconds: {{ int .probe.periodSeconds }}
timeoutSeconds: {{ int .probe.timeoutSeconds }}
failureThreshold: {{ int .probe.failureThreshold }}
{{- end }}

{{/*
Container security context meeting the restricted Pod Security Standard. The image's user is 10001.
*/}}
{{- define "liveness-lab.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop:
    - ALL
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
Pod security context meeting the restricted Pod Security Standard.
*/}}
{{- define "liveness-lab.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/*
The Locust image, pinned.
*/}}
{{- define "liveness-lab.locustImage" -}}
{{- printf "%s:%s" .Values.locust.image.repository .Values.locust.image.tag }}
{{- end }}

{{/*
The Locust container's settings shared by master and workers: the deployed variants and where they
answer (their Services, from inside the cluster; locust/liveness_lab/base/variants.py reads the JSON and the
locustfile makes one user class of each) and the defaults of a swarm. Arguments: the root context.
*/}}
{{- define "liveness-lab.locustEnv" -}}
{{- $variants := list }}
{{- range $name, $variant := .Values.variants }}
{{- if include "liveness-lab.enabled" (dict "root" $ "variant" $variant) }}
{{- $url := printf "http://%s:%s" (include "liveness-lab.componentName" (dict "root" $ "component" $name)) (include "liveness-lab.httpPort" $) }}
{{- $variants = append $variants (dict "name" $name "mode" $variant.mode "stack" (include "liveness-lab.stack" (dict "root" $ "mode" $variant.mode)) "nodePort" (int $variant.nodePort) "url" $url) }}
{{- end }}
{{- end }}
- name: LIVENESS_LAB_VARIANTS
  value: {{ toJson $variants | quote }}
- name: LIVENESS_LAB_TARGET
  value: cluster
- name: LIVENESS_LAB_RELEASE
  value: {{ include "liveness-lab.fullname" . | quote }}
- name: LIVENESS_LAB_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: LIVENESS_LAB_LATENCY_MS
  value: {{ int .Values.latencyMs | quote }}
- name: LIVENESS_LAB_RATE_PER_USER
  value: {{ .Values.locust.ratePerUser | toString | quote }}
- name: LIVENESS_LAB_REQUEST_TIMEOUT_S
  value: {{ int .Values.locust.requestTimeoutSeconds | quote }}
{{- end }}

{{/*
The pod spec's imagePullSecrets from `imagePullSecrets` (a list of Secret names), or nothing when it is
empty. Every pod of the chart includes it, the `helm test` pods too. Arguments: the root context.
*/}}
{{- define "liveness-lab.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets -}}
imagePullSecrets:
{{- range . }}
  - name: {{ . | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The type of the Services users reach from outside the cluster (the variants', Locust's web UI):
NodePort when `nodePorts.enabled`, else ClusterIP. Arguments: the root context.
*/}}
{{- define "liveness-lab.exposedServiceType" -}}
{{- ternary "NodePort" "ClusterIP" .Values.nodePorts.enabled }}
{{- end }}

{{/*
The pod spec's topologySpreadConstraints for one component's pods, or nothing when
`topologySpread.enabled` is off: its replicas spread over `topologySpread.topologyKey`, counting only the
pods of the same revision (pod-template-hash), so a rolling update's new pods spread among themselves.
Arguments: dict "root" $ "component" NAME.
*/}}
{{- define "liveness-lab.topologySpread" -}}
{{- $spread := .root.Values.topologySpread }}
{{- if $spread.enabled -}}
topologySpreadConstraints:
  - maxSkew: {{ int $spread.maxSkew }}
    topologyKey: {{ $spread.topologyKey }}
    whenUnsatisfiable: {{ $spread.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "liveness-lab.selectorLabels" . | nindent 8 }}
    matchLabelKeys:
      - pod-template-hash
{{- end }}
{{- end }}

{{/*
The name of the Locust master's cluster-wide grant to read the kubelets' probe counter
(locust.kubeletProbeMetrics): the namespace and the release's Locust name, as a ClusterRole is not
namespaced and two releases in two namespaces may share a release name.
*/}}
{{- define "liveness-lab.kubeletProbesName" -}}
{{- printf "%s-%s-kubelet-probes" .Release.Namespace (include "liveness-lab.componentName" (dict "root" . "component" "locust")) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The Secret holding the web UI's token, `<fullname>-ui` (locust/liveness_lab/base/ui_token.py names it the same).
*/}}
{{- define "liveness-lab.uiSecretName" -}}
{{- include "liveness-lab.componentName" (dict "root" . "component" "ui") }}
{{- end }}

{{/*
The web UI's token, base64 as a Secret's data holds it: the Secret's own when it exists (`lookup`: kept
across upgrades), else 32 new random letters and digits. `lookup` finds nothing without a cluster (`helm
template`, `--dry-run` without `=server`), so each such rendering has a new one: scripts/lib/cluster.sh
renders with `--dry-run=server` when it compares the release with the chart. Decided once per rendering
and kept in the rendering's values, so the Secret and the master's checksum annotation agree (a second
randAlphaNum would not). Arguments: the root context.
*/}}
{{- define "liveness-lab.uiToken" -}}
{{- if not (hasKey .Values.locust "_uiToken") }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "liveness-lab.uiSecretName" .) | default dict }}
{{- $_ := set .Values.locust "_uiToken" (dig "data" "token" "" $existing | default (randAlphaNum 32 | b64enc)) }}
{{- end }}
{{- get .Values.locust "_uiToken" }}
{{- end }}

{{/*
The Locust master's port for its workers: Locust's default (--master-bind-port on the master,
--master-port on the workers, neither set), the Service's port, and what a worker's liveness probe looks
for in /proc/net/tcp.
*/}}
{{- define "liveness-lab.locustMasterPort" -}}
5557
{{- end }}
