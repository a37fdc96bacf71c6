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
DEMO_DOWNSTREAM_URL: the downstream Service, asking for `downstream.latencyMs`.
*/}}
{{- define "liveness-lab.downstreamUrl" -}}
{{- printf "http://%s:%s/api/work?latencyMs=%d" (include "liveness-lab.componentName" (dict "root" . "component" "downstream")) (include "liveness-lab.httpPort" .) (int .Values.downstream.latencyMs) }}
{{- end }}

{{/*
The enabled variants with their effective settings, as YAML to read back with `fromYaml`. A variant is on
when `allVariants` or its own `enabled` is true; its probes are its overrides deep-merged over `probes`, its
resources are its own or the shared ones, its JAVA_TOOL_OPTIONS the shared ones followed by its own.
This is the one place that decides what a variant is: every template ranges over it.
*/}}
{{- define "liveness-lab.variants" -}}
{{- $variants := dict }}
{{- range $name, $variant := .Values.variants }}
{{- if or $.Values.allVariants $variant.enabled }}
{{- $probes := mergeOverwrite (deepCopy $.Values.probes) (deepCopy ($variant.probes | default dict)) }}
{{- $javaToolOptions := trim (printf "%s %s" $.Values.javaToolOptions ($variant.javaToolOptions | default "")) }}
{{- $_ := set $variants $name (dict
      "mode" $variant.mode
      "replicas" $variant.replicas
      "nodePort" $variant.nodePort
      "resources" ($variant.resources | default $.Values.resources)
      "extraEnv" ($variant.extraEnv | default dict)
      "javaToolOptions" $javaToolOptions
      "probes" $probes) }}
{{- end }}
{{- end }}
{{- toYaml $variants }}
{{- end }}

{{/*
The downstream's effective settings, in the same shape as one entry of "liveness-lab.variants".
*/}}
{{- define "liveness-lab.downstream" -}}
{{- toYaml (dict
      "mode" "reactive"
      "replicas" .Values.downstream.replicas
      "resources" (.Values.downstream.resources | default .Values.resources)
      "extraEnv" (.Values.downstream.extraEnv | default dict)
      "javaToolOptions" .Values.javaToolOptions
      "probes" .Values.probes) }}
{{- end }}

{{/*
Checks JSON Schema cannot express, with messages naming the field; included once, from deployment.yaml.
- timeoutSeconds below periodSeconds for every probe, shared and per variant (a cross-field comparison,
  which Helm's JSON Schema validator has no keyword for);
- one nodePort per enabled variant (and Locust): uniqueness across map values is beyond JSON Schema too;
- a grace period longer than the preStop sleep, else SIGKILL comes before SIGTERM;
- a pinned image tag, a management port apart from 8080 and variant names that fit in object names, here
  rather than in the schema because its messages for `not` and `propertyNames` do not say what is wrong.
*/}}
{{- define "liveness-lab.validate" -}}
{{- if eq .Values.image.tag "latest" }}
{{- fail "image.tag is \"latest\": pin a version (SERVICE_VERSION in scripts/versions.env)" }}
{{- end }}
{{- range $name, $variant := .Values.variants }}
{{- if not (regexMatch "^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$" $name) }}
{{- fail (printf "variants.%s: a variant name must be a lowercase DNS label of at most 20 characters (it names the Deployment, the Service and the component label)" $name) }}
{{- end }}
{{- end }}
{{- range $kind := list "liveness" "readiness" "startup" }}
{{- $probe := get $.Values.probes $kind }}
{{- if ge (int $probe.timeoutSeconds) (int $probe.periodSeconds) }}
{{- fail (printf "probes.%s.timeoutSeconds (%d) must be below probes.%s.periodSeconds (%d): a probe must end before the next one starts" $kind (int $probe.timeoutSeconds) $kind (int $probe.periodSeconds)) }}
{{- end }}
{{- end }}
{{- if eq (int .Values.probes.managementPort) (int (include "liveness-lab.httpPort" .)) }}
{{- fail (printf "probes.managementPort (%d) must differ from the HTTP port %s" (int .Values.probes.managementPort) (include "liveness-lab.httpPort" .)) }}
{{- end }}
{{- $ports := dict }}
{{- range $name, $variant := include "liveness-lab.variants" . | fromYaml }}
{{- range $kind := list "liveness" "readiness" "startup" }}
{{- $probe := get $variant.probes $kind }}
{{- if ge (int $probe.timeoutSeconds) (int $probe.periodSeconds) }}
{{- fail (printf "variants.%s.probes.%s.timeoutSeconds (%d) must be below its periodSeconds (%d), after merging over probes.%s" $name $kind (int $probe.timeoutSeconds) (int $probe.periodSeconds) $kind) }}
{{- end }}
{{- end }}
{{- if eq (int $variant.probes.managementPort) (int (include "liveness-lab.httpPort" $)) }}
{{- fail (printf "variants.%s.probes.managementPort (%d) must differ from the HTTP port %s, after merging over probes.managementPort" $name (int $variant.probes.managementPort) (include "liveness-lab.httpPort" $)) }}
{{- end }}
{{- $port := toString (int $variant.nodePort) }}
{{- if hasKey $ports $port }}
{{- fail (printf "variants.%s.nodePort (%s) is already used by %s: each enabled variant needs its own nodePort" $name $port (get $ports $port)) }}
{{- end }}
{{- $_ := set $ports $port (printf "variants.%s.nodePort" $name) }}
{{- end }}
{{- if .Values.locust.enabled }}
{{- $port := toString (int .Values.locust.nodePort) }}
{{- if hasKey $ports $port }}
{{- fail (printf "locust.nodePort (%s) is already used by %s: the Locust web UI needs its own nodePort" $port (get $ports $port)) }}
{{- end }}
{{- end }}
{{- if le (int .Values.shutdown.terminationGracePeriodSeconds) (int .Values.shutdown.preStopSleepSeconds) }}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%d) must exceed shutdown.preStopSleepSeconds (%d), or the pod is killed before it sees SIGTERM" (int .Values.shutdown.terminationGracePeriodSeconds) (int .Values.shutdown.preStopSleepSeconds)) }}
{{- end }}
{{- end }}

{{/*
One probe. Arguments: dict "probe" SETTINGS "path" DEFAULT-PATH "port" PORT-NAME.
*/}}
{{- define "liveness-lab.probe" -}}
httpGet:
  path: {{ .probe.path | default .path }}
  port: {{ .port }}
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
One Deployment of the service image: a variant or the downstream. Arguments: dict "root" $ "component"
NAME "spec" EFFECTIVE-SETTINGS (an entry of "liveness-lab.variants", or "liveness-lab.downstream").
*/}}
{{- define "liveness-lab.deployment" -}}
{{- $root := .root }}
{{- $spec := .spec }}
{{- $probes := $spec.probes }}
{{- $management := eq $probes.target "management" }}
{{- $probePort := ternary "management" "http" $management }}
{{- $livenessPath := ternary "/actuator/health/liveness" "/livez" $management }}
{{- $readinessPath := ternary "/actuator/health/readiness" "/readyz" $management }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "liveness-lab.componentName" . }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "liveness-lab.labels" . | nindent 4 }}
spec:
  replicas: {{ int $spec.replicas }}
  revisionHistoryLimit: 3
  selector:
    matchLabels:
      {{- include "liveness-lab.selectorLabels" . | nindent 6 }}
  strategy:
    # Surge first, never go below the wanted count: with the preStop sleep, a rolling update of the
    # reactive variant under load loses no request.
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  template:
    metadata:
      labels:
        {{- include "liveness-lab.labels" . | nindent 8 }}
    spec:
      restartPolicy: Always
      # The service never talks to the Kubernetes API.
      automountServiceAccountToken: false
      # No <SERVICE>_PORT variables: they would only clutter the environment Spring reads.
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ int $root.Values.shutdown.terminationGracePeriodSeconds }}
      securityContext:
        {{- include "liveness-lab.podSecurityContext" $root | nindent 8 }}
      containers:
        - name: service
          image: {{ include "liveness-lab.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: {{ include "liveness-lab.httpPort" $root }}
              protocol: TCP
            {{- if $management }}
            - name: management
              containerPort: {{ int $probes.managementPort }}
              protocol: TCP
            {{- end }}
          env:
            - name: APP_MODE
              value: {{ $spec.mode | quote }}
            - name: DEMO_LATENCY_MS
              value: {{ int $root.Values.latency.defaultMs | quote }}
            - name: DEMO_LATENCY_MAX_MS
              value: {{ int $root.Values.latency.maxMs | quote }}
            {{- if and $root.Values.downstream.enabled (ne .component "downstream") }}
            - name: DEMO_DOWNSTREAM_URL
              value: {{ include "liveness-lab.downstreamUrl" $root | quote }}
            {{- end }}
            {{- if $management }}
            - name: MANAGEMENT_SERVER_PORT
              value: {{ int $probes.managementPort | quote }}
            {{- end }}
            - name: JAVA_TOOL_OPTIONS
              value: {{ $spec.javaToolOptions | quote }}
            {{- range $name, $value := $spec.extraEnv }}
            - name: {{ $name }}
              value: {{ $value | toString | quote }}
            {{- end }}
          # Startup first (the JVM may take a while on 2 busy cores), then liveness and readiness.
          startupProbe:
            {{- include "liveness-lab.probe" (dict "probe" $probes.startup "path" ($probes.liveness.path | default $livenessPath) "port" $probePort) | nindent 12 }}
          livenessProbe:
            {{- include "liveness-lab.probe" (dict "probe" $probes.liveness "path" $livenessPath "port" $probePort) | nindent 12 }}
          readinessProbe:
            {{- include "liveness-lab.probe" (dict "probe" $probes.readiness "path" $readinessPath "port" $probePort) | nindent 12 }}
          lifecycle:
            preStop:
              # The kubelet's own sleep action: the image needs no `sleep` binary.
              sleep:
                seconds: {{ int $root.Values.shutdown.preStopSleepSeconds }}
          resources:
            {{- toYaml $spec.resources | nindent 12 }}
          securityContext:
            {{- include "liveness-lab.containerSecurityContext" $root | nindent 12 }}
          volumeMounts:
            # The root filesystem is read-only; the JVM needs a writable /tmp.
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
{{- end }}

{{/*
The Locust image, pinned.
*/}}
{{- define "liveness-lab.locustImage" -}}
{{- printf "%s:%s" .Values.locust.image.repository .Values.locust.image.tag }}
{{- end }}

{{/*
The Locust container's settings shared by master and workers: where the variants answer (their Services,
from inside the cluster) and the defaults of a swarm. Arguments: the root context.
*/}}
{{- define "liveness-lab.locustEnv" -}}
- name: LIVENESS_LAB_TARGET
  value: cluster
- name: LIVENESS_LAB_RELEASE
  value: {{ include "liveness-lab.fullname" . | quote }}
- name: LIVENESS_LAB_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: LIVENESS_LAB_LATENCY_MS
  value: {{ int .Values.locust.latencyMs | quote }}
- name: LIVENESS_LAB_RATE_PER_USER
  value: {{ .Values.locust.ratePerUser | toString | quote }}
- name: LIVENESS_LAB_REQUEST_TIMEOUT_S
  value: {{ int .Values.locust.requestTimeoutSeconds | quote }}
{{- end }}
