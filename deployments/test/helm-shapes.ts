import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * The chart's values shapes as operators write them: one values file each in deployments/test/helm-values
 * (defaults, external Secrets, ingress TLS, HPA/PDB and scheduling, NetworkPolicies, extra env/volumes, the
 * supervisor). Every Pod Security, schema and install-order check runs over all of them.
 */
export const ROOT = join(__dirname, '../..');
export const CHART = join(ROOT, 'deployments/helm/mango');
export const VALUES_DIR = join(__dirname, 'helm-values');
export const helm = process.env.MANGO_HELM_BIN ?? 'helm';
// Built by `tools/ci/services.sh install deploytools` from deployments/test/kube-decode (k8s.io/api,
// k8s.io/pod-security-admission).
export const kubeDecode = process.env.MANGO_KUBE_DECODE_BIN ?? 'kube-decode';

export interface ValuesShape {
  file: string;
  /** Secrets / ServiceAccounts the operator creates before `helm install` (the shape names them). */
  external: string[];
  /** Whether the shape runs the in-cluster supervisor (hostPath volumes: outside `restricted`). */
  supervisor: boolean;
}

export const VALUES_SHAPES: ValuesShape[] = [
  { file: 'defaults.yaml', external: [], supervisor: false },
  {
    file: 'external-secrets.yaml',
    external: [
      'Secret/mango-db',
      'Secret/mango-db-owner',
      'Secret/mango-s3',
      'Secret/mango-model',
      'Secret/mango-keyring',
      'ServiceAccount/mango-migrate',
    ],
    supervisor: false,
  },
  { file: 'ingress-tls.yaml', external: ['Secret/regcred'], supervisor: false },
  { file: 'scaling.yaml', external: [], supervisor: false },
  { file: 'network-policy.yaml', external: [], supervisor: false },
  {
    file: 'extras.yaml',
    external: ['Secret/mango-temporal-settings', 'Secret/mango-temporal-tls'],
    supervisor: false,
  },
  { file: 'supervisor.yaml', external: ['Secret/mango-supervisor'], supervisor: true },
  { file: 'supervisor-remote-docker.yaml', external: ['Secret/mango-supervisor'], supervisor: true },
];

export const valuesPath = (file: string) => join(VALUES_DIR, file);
export const readValuesFile = (file: string) => readFileSync(valuesPath(file), 'utf8');

/** `helm template` of the chart with a values file and `--set-json` overrides. */
export function templateFile(file: string | undefined, set: Record<string, unknown> = {}): string {
  const args = ['template', 't', CHART];
  if (file) args.push('-f', valuesPath(file));
  for (const [k, v] of Object.entries(set)) args.push('--set-json', `${k}=${JSON.stringify(v)}`);
  return execFileSync(helm, args, { encoding: 'utf8' });
}

export function parseManifests(text: string): any[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter(Boolean);
}

export const renderFile = (file: string | undefined, set: Record<string, unknown> = {}) =>
  parseManifests(templateFile(file, set));

/** kube-decode over a rendered stream: strict k8s.io/api decoding, plus Pod Security at `level` when given. */
export function kubeDecodeRun(input: string, args: string[] = []) {
  return spawnSync(kubeDecode, ['-crd', 'ServiceMonitor', ...args], { input, encoding: 'utf8' });
}

export function podSpecOf(o: any): any | undefined {
  if (o.kind === 'Pod') return o.spec;
  if (o.kind === 'CronJob') return o.spec?.jobTemplate?.spec?.template?.spec;
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet'].includes(o.kind))
    return o.spec?.template?.spec;
  return undefined;
}
