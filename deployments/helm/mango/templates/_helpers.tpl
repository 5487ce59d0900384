{{- define "mango.fullname" -}}{{ .Release.Name }}-mango{{- end -}}
{{- define "mango.labels" -}}
app.kubernetes.io/name: mango
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}
{{- define "mango.selector" -}}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}
{{- /* The control-plane image (api, files, orchestrator, supervisor, migrate) and the Work-item sandbox image;
  each tag defaults to the chart's appVersion. */ -}}
{{- define "mango.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}
{{- define "mango.sandboxImage" -}}{{ .Values.sandboxImage.repository }}:{{ .Values.sandboxImage.tag | default .Chart.AppVersion }}{{- end -}}
{{- define "mango.databaseSecret" -}}{{ default (printf "%s-database" (include "mango.fullname" .)) .Values.database.existingSecret }}{{- end -}}
{{- define "mango.objectStoreSecret" -}}{{ default (printf "%s-object-store" (include "mango.fullname" .)) .Values.objectStore.existingSecret }}{{- end -}}
{{- define "mango.modelSecret" -}}{{ default (printf "%s-model" (include "mango.fullname" .)) .Values.model.existingSecret }}{{- end -}}
{{- /* The migrate Job's database credentials: migrations.database.* (the schema owner role) when set, else
  database.*. A Secret created from a URL value is a hook of its own (mango.migrateDatabaseSecret). */ -}}
{{- define "mango.migrateDatabaseSecret" -}}
{{- if .Values.migrations.database.existingSecret -}}{{ .Values.migrations.database.existingSecret }}
{{- else if .Values.migrations.database.url -}}{{ include "mango.fullname" . }}-migrate-database
{{- else if .Values.database.existingSecret -}}{{ .Values.database.existingSecret }}
{{- else -}}{{ include "mango.fullname" . }}-migrate-database
{{- end -}}
{{- end -}}
{{- define "mango.databaseEnv" -}}
- name: MANGO_DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ include "mango.databaseSecret" . }}, key: url }
- name: MANGO_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end -}}
{{- define "mango.metricsEnv" -}}
{{- if .Values.metrics.enabled }}
- { name: MANGO_METRICS_HOST, value: "0.0.0.0" }
- { name: MANGO_METRICS_PORT, value: {{ .Values.metrics.port | quote }} }
{{- end }}
{{- end -}}
{{- define "mango.metricsContainerPort" -}}
{{- if .Values.metrics.enabled }}, { name: metrics, containerPort: {{ .Values.metrics.port }} }{{ end }}
{{- end -}}

{{- /* Checksums of the configuration the chart renders (its Secrets and ConfigMaps) in every pod template:
  a changed value changes the annotation, so `helm upgrade` rolls the pods. Secrets named by
  *.existingSecret are the operator's and are not tracked (docs/install-helm.md). */ -}}
{{- define "mango.checksums" -}}
checksum/secrets: {{ include (print .Template.BasePath "/secrets.yaml") . | sha256sum }}
checksum/config: {{ include (print .Template.BasePath "/config.yaml") . | sha256sum }}
{{- end -}}

{{- /* The pod template's metadata: labels, checksums, the operator's annotations and labels.
  Call with (dict "root" $ "name" "<component>" "c" <component values>). */ -}}
{{- define "mango.podMetadata" -}}
labels:
  {{- include "mango.labels" .root | nindent 2 }}
  app.kubernetes.io/component: {{ .name }}
  {{- with .root.Values.podLabels }}{{ toYaml . | nindent 2 }}{{ end }}
  {{- with .c.podLabels }}{{ toYaml . | nindent 2 }}{{ end }}
annotations:
  {{- include "mango.checksums" .root | nindent 2 }}
  {{- with .root.Values.podAnnotations }}{{ toYaml . | nindent 2 }}{{ end }}
  {{- with .c.podAnnotations }}{{ toYaml . | nindent 2 }}{{ end }}
{{- end -}}

{{- /* Pod-level settings every pod shares: Pod Security `restricted` (non-root numeric user, RuntimeDefault
  seccomp), no service account token (no Mango process calls the Kubernetes API), pull secrets and
  scheduling (the component's value wins over the chart-wide one). */ -}}
{{- define "mango.podSpec" -}}
{{- $v := .root.Values -}}
automountServiceAccountToken: false
{{- with (default $v.serviceAccountName .c.serviceAccountName) }}
serviceAccountName: {{ . }}
{{- end }}
securityContext: {{- toYaml (mergeOverwrite (deepCopy $v.podSecurityContext) (.c.podSecurityContext | default dict)) | nindent 2 }}
{{- with $v.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $v.priorityClassName .c.priorityClassName) }}
priorityClassName: {{ . }}
{{- end }}
{{- with (default $v.nodeSelector .c.nodeSelector) }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $v.tolerations .c.tolerations) }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $v.affinity .c.affinity) }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with (default $v.topologySpreadConstraints .c.topologySpreadConstraints) }}
topologySpreadConstraints:
  {{- range . }}
  - {{- toYaml (merge (dict) . (dict "labelSelector" (dict "matchLabels" (fromYaml (include "mango.selector" $))))) | nindent 4 }}
  {{- end }}
{{- end }}
{{- end -}}

{{- /* Container-level settings every container shares: image, restricted securityContext, resources,
  the operator's extra environment. */ -}}
{{- define "mango.containerCommon" -}}
image: {{ include "mango.image" .root }}
imagePullPolicy: {{ .root.Values.image.pullPolicy }}
securityContext: {{- toYaml (mergeOverwrite (deepCopy .root.Values.containerSecurityContext) (.c.containerSecurityContext | default dict)) | nindent 2 }}
resources: {{- toYaml .c.resources | nindent 2 }}
{{- $envFrom := concat (.root.Values.extraEnvFrom | default list) (.c.extraEnvFrom | default list) }}
{{- with $envFrom }}
envFrom: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- /* The operator's extra env entries (chart-wide, then the component's): appended after the chart's own. */ -}}
{{- define "mango.extraEnv" -}}
{{- with (concat (.root.Values.extraEnv | default list) (.c.extraEnv | default list)) }}
{{- toYaml . }}
{{- end }}
{{- end -}}

{{- /* The component's probes (values: <component>.startupProbe / livenessProbe / readinessProbe; null drops one). */ -}}
{{- define "mango.probes" -}}
{{- with .c.startupProbe }}
startupProbe: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .c.livenessProbe }}
livenessProbe: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .c.readinessProbe }}
readinessProbe: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- /* Bounded temporary storage on a read-only root filesystem: /tmp is the only writable path each process
  needs, an emptyDir with a sizeLimit (the kubelet evicts a pod that exceeds it); every container carries
  an ephemeral-storage limit (values: <component>.resources). Then the operator's extra mounts. */ -}}
{{- define "mango.volumeMounts" -}}
- { name: tmp, mountPath: /tmp }
{{- with (concat (.root.Values.extraVolumeMounts | default list) (.c.extraVolumeMounts | default list)) }}
{{ toYaml . }}
{{- end }}
{{- end -}}
{{- define "mango.volumes" -}}
- { name: tmp, emptyDir: { sizeLimit: {{ .root.Values.temporaryStorage.sizeLimit | quote }} } }
{{- with (concat (.root.Values.extraVolumes | default list) (.c.extraVolumes | default list)) }}
{{ toYaml . }}
{{- end }}
{{- end -}}
