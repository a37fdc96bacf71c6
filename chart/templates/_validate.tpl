{{/*
Checks JSON Schema cannot express, with messages naming the field; included once, from deployment.yaml.
- a pinned image tag and variant names that fit in object names, here rather than in the schema because
  its messages for `not` and `propertyNames` do not say what is wrong;
- each variant's mode one of serviceModes: the image's modes in one value, not copied into the schema;
- the probes (liveness-lab.validateProbes), of the shared block and of each enabled variant after its
  overrides;
- one nodePort per enabled variant (and Locust) when nodePorts.enabled: uniqueness across map values is
  beyond JSON Schema;
- a grace period longer than the preStop sleep, the drain and one request of `latencyMs` together, else
  SIGKILL comes before SIGTERM, or cuts off the drain or a request that arrived at its end;
- latencyMs and cpuMs within latencyMaxMs: the service refuses to start otherwise (and with latencyMs
  over it Locust's requests would all be 400s). The cap lives in one value; a schema `maximum` would be a second copy of it;
- extraEnv names the API server accepts (liveness-lab.validateEnv), here because a schema
  `propertyNames` message does not name the key.
Quantities, object-name overrides, image references and port ranges are checked by values.schema.json,
whose messages name the field as a path.
*/}}
{{- define "liveness-lab.validate" -}}
{{- if eq .Values.image.tag "latest" }}
{{- fail "image.tag is \"latest\": pin a version (SERVICE_VERSION in scripts/versions.env)" }}
{{- end }}
{{- include "liveness-lab.validateProbes" (dict "root" . "field" "probes" "probes" .Values.probes) }}
{{- $ports := dict }}
{{- range $name, $variant := .Values.variants }}
{{- if not (regexMatch "^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$" $name) }}
{{- fail (printf "variants.%s: a variant name must be a lowercase DNS label of at most 20 characters (it names the Deployment, the Service and the component label)" $name) }}
{{- end }}
{{- if not (hasKey $.Values.serviceModes $variant.mode) }}
{{- fail (printf "variants.%s.mode (%s) is not a mode of the service image: one of %s (serviceModes)" $name $variant.mode (join ", " (keys $.Values.serviceModes | sortAlpha))) }}
{{- end }}
{{- if include "liveness-lab.enabled" (dict "root" $ "variant" $variant) }}
{{- include "liveness-lab.validateProbes" (dict "root" $ "field" (printf "variants.%s.probes" $name) "probes" (include "liveness-lab.variantProbes" (dict "root" $ "variant" $variant) | fromJson)) }}
{{- if $.Values.nodePorts.enabled }}
{{- include "liveness-lab.claimNodePort" (dict "ports" $ports "field" (printf "variants.%s.nodePort" $name) "port" $variant.nodePort "why" "each enabled variant needs its own nodePort") }}
{{- end }}
{{- include "liveness-lab.validateEnv" (dict "field" (printf "variants.%s.extraEnv" $name) "env" $variant.extraEnv) }}
{{- end }}
{{- end }}
{{- if .Values.downstream.enabled }}
{{- include "liveness-lab.validateEnv" (dict "field" "downstream.extraEnv" "env" .Values.downstream.extraEnv) }}
{{- end }}
{{- if and .Values.locust.enabled .Values.nodePorts.enabled }}
{{- include "liveness-lab.claimNodePort" (dict "ports" $ports "field" "locust.nodePort" "port" .Values.locust.nodePort "why" "the Locust web UI needs its own nodePort") }}
{{- end }}
{{- if gt (int .Values.latencyMs) (int .Values.latencyMaxMs) }}
{{- fail (printf "latencyMs (%d) must not exceed latencyMaxMs (%d): the service refuses to start with a default over its cap" (int .Values.latencyMs) (int .Values.latencyMaxMs)) }}
{{- end }}
{{- if gt (int .Values.cpuMs) (int .Values.latencyMaxMs) }}
{{- fail (printf "cpuMs (%d) must not exceed latencyMaxMs (%d): the service refuses to start with it over its cap" (int .Values.cpuMs) (int .Values.latencyMaxMs)) }}
{{- end }}
{{- $shutdown := .Values.shutdown }}
{{- $requestSeconds := div (add (int .Values.latencyMs) 999) 1000 }}
{{- $needed := add (int $shutdown.preStopSleepSeconds) (int $shutdown.drainSeconds) $requestSeconds }}
{{- if le (int $shutdown.terminationGracePeriodSeconds) (int $needed) }}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%d) must exceed shutdown.preStopSleepSeconds (%d) + shutdown.drainSeconds (%d) + latencyMs (%d s) = %d, or SIGKILL cuts off the drain or a request that arrived at its end" (int $shutdown.terminationGracePeriodSeconds) (int $shutdown.preStopSleepSeconds) (int $shutdown.drainSeconds) (int $requestSeconds) (int $needed)) }}
{{- end }}
{{- end }}

{{/*
One probes block, shared or a variant's effective one: each probe's timeout below its period (a comparison
of two fields, which Helm's JSON Schema validator has no keyword for) and a management port apart from the
HTTP port. Arguments: dict "root" $ "field" PATH-IN-THE-VALUES "probes" SETTINGS.
*/}}
{{- define "liveness-lab.validateProbes" -}}
{{- $field := .field }}
{{- $merged := ternary "" ", after merging over the shared probes" (eq $field "probes") }}
{{- range $kind := list "liveness" "readiness" "startup" }}
{{- $probe := get $.probes $kind }}
{{- if ge (int $probe.timeoutSeconds) (int $probe.periodSeconds) }}
{{- fail (printf "%s.%s.timeoutSeconds (%d) must be below %s.%s.periodSeconds (%d)%s: a probe must end before the next one starts" $field $kind (int $probe.timeoutSeconds) $field $kind (int $probe.periodSeconds) $merged) }}
{{- end }}
{{- end }}
{{- if eq (int .probes.managementPort) (int (include "liveness-lab.httpPort" .root)) }}
{{- fail (printf "%s.managementPort (%d) must differ from the HTTP port %s%s" $field (int .probes.managementPort) (include "liveness-lab.httpPort" .root) $merged) }}
{{- end }}
{{- end }}

{{/*
Records that FIELD uses nodePort PORT in PORTS (a dict port -> field), and fails when another field has it.
Arguments: dict "ports" PORTS "field" PATH-IN-THE-VALUES "port" PORT "why" REASON.
*/}}
{{- define "liveness-lab.claimNodePort" -}}
{{- $port := toString (int .port) }}
{{- if hasKey .ports $port }}
{{- fail (printf "%s (%s) is already used by %s: %s" .field $port (get .ports $port) .why) }}
{{- end }}
{{- $_ := set .ports $port .field }}
{{- end }}

{{/*
Each name of an extraEnv map is one the API server accepts for an environment variable (letters, digits,
_ - and ., not starting with a digit), so a typo fails here, naming the key, not at install time.
Arguments: dict "field" PATH-IN-THE-VALUES "env" MAP.
*/}}
{{- define "liveness-lab.validateEnv" -}}
{{- range $name, $_ := .env | default dict }}
{{- if not (regexMatch "^[-._a-zA-Z][-._a-zA-Z0-9]*$" $name) }}
{{- fail (printf "%s.%s: %q is not an environment variable name (letters, digits, _ - and ., not starting with a digit)" $.field $name $name) }}
{{- end }}
{{- end }}
{{- end }}
