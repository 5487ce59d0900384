{{- define "mango.fullname" -}}{{ .Release.Name }}-mango{{- end -}}
{{- define "mango.labels" -}}
app.kubernetes.io/name: mango
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
{{- define "mango.image" -}}{{ .Values.image.repository }}:{{ .Values.image.tag }}{{- end -}}
{{- define "mango.databaseSecret" -}}{{ default (printf "%s-database" (include "mango.fullname" .)) .Values.database.existingSecret }}{{- end -}}
{{- define "mango.objectStoreSecret" -}}{{ default (printf "%s-object-store" (include "mango.fullname" .)) .Values.objectStore.existingSecret }}{{- end -}}
{{- define "mango.modelSecret" -}}{{ default (printf "%s-model" (include "mango.fullname" .)) .Values.model.existingSecret }}{{- end -}}
{{- define "mango.databaseEnv" -}}
- name: MANGO_DATABASE_URL
  valueFrom:
    secretKeyRef: { name: {{ include "mango.databaseSecret" . }}, key: url }
- name: MANGO_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end -}}
{{- define "mango.httpProbes" -}}
livenessProbe:
  httpGet: { path: /healthz, port: http }
  periodSeconds: 10
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 5
  timeoutSeconds: 3
{{- end -}}
{{- define "mango.securityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 1000
  runAsGroup: 1000
  allowPrivilegeEscalation: false
  capabilities: { drop: [ALL] }
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
