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

{{- /* Bounded temporary storage: every pod's /tmp is an emptyDir with a sizeLimit (the kubelet evicts a pod
  that exceeds it), and every container carries an ephemeral-storage limit (values: <component>.resources). */ -}}
{{- define "mango.tmpMount" -}}
volumeMounts: [{ name: tmp, mountPath: /tmp }]
{{- end -}}
{{- define "mango.tmpVolume" -}}
{ name: tmp, emptyDir: { sizeLimit: {{ .Values.temporaryStorage.sizeLimit | quote }} } }
{{- end -}}
