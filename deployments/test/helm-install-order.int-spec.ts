import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { VALUES_SHAPES, kubeDecodeRun, renderFile, templateFile } from './helm-shapes';

/**
 * Helm's install order, checked without a cluster. `helm template` renders the chart for every values shape
 * an operator can choose; the test then replays what `helm install` / `helm upgrade` does with the objects
 * (helm.sh/helm/v3 pkg/action/hooks.go execHook):
 *   1. pre-install (pre-upgrade) hooks, ordered by hook weight and then by Helm's kind install order, each
 *      created and (Jobs/Pods) waited for before the next one;
 *   2. only after every hook of the phase succeeded, the hooks with `hook-succeeded` are deleted;
 *   3. the release's ordinary objects are created;
 *   4. post-install (post-upgrade) hooks run.
 * At every step every Secret, ConfigMap and ServiceAccount a pod references must already exist: created by an
 * earlier step, named by the operator (`*.existingSecret`), or the namespace's `default` ServiceAccount.
 * On install nothing of the release exists before step 1; on upgrade the previous revision's ordinary
 * objects do (rendered from the same values).
 */
const ROOT = join(__dirname, '../..');
const CHART = join(ROOT, 'deployments/helm/mango');
const helm = process.env.MANGO_HELM_BIN ?? 'helm';
// Built by `tools/ci/services.sh install deploytools` from deployments/test/kube-decode (k8s.io/api).
const kubeDecode = process.env.MANGO_KUBE_DECODE_BIN ?? 'kube-decode';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: any;
};

const setArgs = (set: Record<string, unknown>) =>
  Object.entries(set).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]);
const template = (set: Record<string, unknown>) =>
  execFileSync(helm, ['template', 't', CHART, ...setArgs(set)], { encoding: 'utf8' });

function render(set: Record<string, unknown>): Obj[] {
  return parseAllDocuments(template(set))
    .map((d) => d.toJS())
    .filter(Boolean);
}

// Helm's InstallOrder (pkg/releaseutil/kind_sorter.go), the kinds this chart can render.
const INSTALL_ORDER = [
  'Namespace',
  'NetworkPolicy',
  'ResourceQuota',
  'LimitRange',
  'PodDisruptionBudget',
  'ServiceAccount',
  'Secret',
  'ConfigMap',
  'PersistentVolumeClaim',
  'Role',
  'RoleBinding',
  'Service',
  'Pod',
  'Deployment',
  'StatefulSet',
  'Job',
  'CronJob',
  'Ingress',
];
const kindIndex = (k: string) =>
  INSTALL_ORDER.includes(k) ? INSTALL_ORDER.indexOf(k) : INSTALL_ORDER.length;

const key = (kind: string, name: string) => `${kind}/${name}`;
const hooksOf = (o: Obj) =>
  (o.metadata.annotations?.['helm.sh/hook'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
const weightOf = (o: Obj) => Number(o.metadata.annotations?.['helm.sh/hook-weight'] ?? '0');
const deletePolicies = (o: Obj) =>
  (o.metadata.annotations?.['helm.sh/hook-delete-policy'] ?? 'before-hook-creation')
    .split(',')
    .map((s) => s.trim());

function podSpecOf(o: Obj): any | undefined {
  if (o.kind === 'Pod') return o.spec;
  if (o.kind === 'CronJob') return o.spec?.jobTemplate?.spec?.template?.spec;
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'ReplicaSet'].includes(o.kind))
    return o.spec?.template?.spec;
  return undefined;
}

/** Every Secret / ConfigMap / ServiceAccount a pod template needs in order to start. */
function references(o: Obj): string[] {
  const pod = podSpecOf(o);
  if (!pod) return [];
  const refs = [key('ServiceAccount', pod.serviceAccountName ?? 'default')];
  for (const s of pod.imagePullSecrets ?? []) refs.push(key('Secret', s.name));
  for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    for (const e of c.env ?? []) {
      const sk = e.valueFrom?.secretKeyRef;
      const ck = e.valueFrom?.configMapKeyRef;
      if (sk && !sk.optional) refs.push(key('Secret', sk.name));
      if (ck && !ck.optional) refs.push(key('ConfigMap', ck.name));
    }
    for (const e of c.envFrom ?? []) {
      if (e.secretRef && !e.secretRef.optional) refs.push(key('Secret', e.secretRef.name));
      if (e.configMapRef && !e.configMapRef.optional) refs.push(key('ConfigMap', e.configMapRef.name));
    }
  }
  for (const v of pod.volumes ?? []) {
    if (v.secret && !v.secret.optional) refs.push(key('Secret', v.secret.secretName));
    if (v.configMap && !v.configMap.optional) refs.push(key('ConfigMap', v.configMap.name));
    for (const p of v.projected?.sources ?? []) {
      if (p.secret && !p.secret.optional) refs.push(key('Secret', p.secret.name));
      if (p.configMap && !p.configMap.optional) refs.push(key('ConfigMap', p.configMap.name));
    }
  }
  return refs;
}

/** Replays one install or upgrade; returns every reference that would not resolve, with the step it breaks. */
function missingReferences(docs: Obj[], external: string[], mode: 'install' | 'upgrade'): string[] {
  const pre = mode === 'install' ? 'pre-install' : 'pre-upgrade';
  const post = mode === 'install' ? 'post-install' : 'post-upgrade';
  const ordinary = docs.filter((o) => hooksOf(o).length === 0);
  const phase = (event: string) =>
    docs
      .filter((o) => hooksOf(o).includes(event))
      .sort((a, b) => weightOf(a) - weightOf(b) || kindIndex(a.kind) - kindIndex(b.kind));
  const existing = new Set<string>([key('ServiceAccount', 'default'), ...external]);
  // On upgrade the previous revision's ordinary objects exist; hooks of earlier runs were deleted by their policy.
  if (mode === 'upgrade') for (const o of ordinary) existing.add(key(o.kind, o.metadata.name));
  const problems: string[] = [];
  const check = (o: Obj, step: string) => {
    for (const r of references(o))
      if (!existing.has(r))
        problems.push(`${step}: ${o.kind}/${o.metadata.name} needs ${r}, which does not exist yet`);
  };
  const runHooks = (event: string) => {
    const hooks = phase(event);
    for (const h of hooks) {
      check(h, `${event} hook (weight ${weightOf(h)})`);
      existing.add(key(h.kind, h.metadata.name));
    }
    for (const h of hooks)
      if (deletePolicies(h).includes('hook-succeeded')) existing.delete(key(h.kind, h.metadata.name));
  };
  runHooks(pre);
  for (const o of ordinary) existing.add(key(o.kind, o.metadata.name));
  for (const o of ordinary) check(o, 'release objects');
  runHooks(post);
  return problems;
}

const OBJECT_KEYS = { 'objectStore.accessKey': 'ak', 'objectStore.secretKey': 'sk' };
const SUPERVISOR = {
  'supervisor.enabled': true,
  'supervisor.environmentId': 'env_x',
  'supervisor.existingSecret': 'sup-key',
  publicBaseUrl: 'https://mango.example',
};
/** Every values shape: each credential either from a value (the chart creates its Secret) or an existing Secret. */
export const SHAPES: Array<{ name: string; values: Record<string, unknown>; external: string[] }> = (
  [
    {
      name: 'database.url, object-store keys',
      values: { 'database.url': 'postgres://u:p@db/mango', ...OBJECT_KEYS },
      external: [],
    },
    {
      name: 'database.existingSecret, objectStore.existingSecret',
      values: { 'database.existingSecret': 'db', 'objectStore.existingSecret': 'os' },
      external: ['Secret/db', 'Secret/os'],
    },
    {
      name: 'database.existingSecret, object-store keys',
      values: { 'database.existingSecret': 'db', ...OBJECT_KEYS },
      external: ['Secret/db'],
    },
    {
      name: 'database.url, objectStore.existingSecret',
      values: { 'database.url': 'postgres://u:p@db/mango', 'objectStore.existingSecret': 'os' },
      external: ['Secret/os'],
    },
    {
      name: 'database.url, model.apiKey, supervisor, metrics',
      values: {
        'database.url': 'postgres://u:p@db/mango',
        ...OBJECT_KEYS,
        'model.apiKey': 'sk-m',
        ...SUPERVISOR,
        'metrics.enabled': true,
      },
      external: ['Secret/sup-key'],
    },
    {
      name: 'database.url, supervisor with --workspace-root',
      values: {
        'database.url': 'postgres://u:p@db/mango',
        ...OBJECT_KEYS,
        ...SUPERVISOR,
        'supervisor.workspaceRoot': '/srv/mango/sessions',
      },
      external: ['Secret/sup-key'],
    },
    {
      name: 'database.url, model.existingSecret',
      values: { 'database.url': 'postgres://u:p@db/mango', ...OBJECT_KEYS, 'model.existingSecret': 'model' },
      external: ['Secret/model'],
    },
    {
      name: 'database.url, migrations disabled',
      values: { 'database.url': 'postgres://u:p@db/mango', ...OBJECT_KEYS, 'migrations.enabled': false },
      external: [],
    },
    {
      name: 'database.url, migrate Job with a ServiceAccount',
      values: {
        'database.url': 'postgres://u:p@db/mango',
        ...OBJECT_KEYS,
        'migrations.serviceAccountName': 'mango-migrate',
      },
      external: ['ServiceAccount/mango-migrate'],
    },
  ] as Array<{ name: string; values: Record<string, unknown>; external: string[] }>
).map((s) => ({ ...s, values: { publicBaseUrl: 'https://mango.example', ...s.values } }));

describe('Helm install order: every object a hook or pod references exists when it starts', () => {
  it.each(SHAPES)('$name: helm install', ({ values, external }) => {
    expect(missingReferences(render(values), external, 'install')).toEqual([]);
  });

  it.each(SHAPES)('$name: helm upgrade', ({ values, external }) => {
    expect(missingReferences(render(values), external, 'upgrade')).toEqual([]);
  });

  it('the checker itself catches a hook that reads an ordinary Secret and a Secret deleted before the apps start', () => {
    const job: Obj = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'm', annotations: { 'helm.sh/hook': 'pre-install' } },
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'c', env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] },
            ],
          },
        },
      },
    };
    const ordinarySecret: Obj = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } };
    expect(missingReferences([ordinarySecret, job], [], 'install')).toEqual([
      'pre-install hook (weight 0): Job/m needs Secret/s, which does not exist yet',
    ]);
    expect(missingReferences([ordinarySecret, job], [], 'upgrade')).toEqual([]);
    const hookSecret: Obj = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 's',
        annotations: {
          'helm.sh/hook': 'pre-install',
          'helm.sh/hook-weight': '-5',
          'helm.sh/hook-delete-policy': 'hook-succeeded',
        },
      },
    };
    const app: Obj = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'a' },
      spec: { template: { spec: { containers: [{ name: 'c', envFrom: [{ secretRef: { name: 's' } }] }] } } },
    };
    expect(missingReferences([hookSecret, job], [], 'install')).toEqual([]);
    expect(missingReferences([hookSecret, job, app], [], 'install')).toEqual([
      'release objects: Deployment/a needs Secret/s, which does not exist yet',
    ]);
  });
});

describe('Helm chart: strict Kubernetes types, lint --strict, bounded temporary storage', () => {
  it.each(SHAPES)('$name: every rendered object decodes strictly into its k8s.io/api type', ({ values }) => {
    const out = execFileSync(kubeDecode, ['-crd', 'ServiceMonitor'], {
      input: template({ ...values, 'metrics.serviceMonitor.enabled': true, 'metrics.enabled': true }),
      encoding: 'utf8',
    });
    expect(out).toMatch(/^\d+ objects, 0 failed$/m);
    expect(out).not.toMatch(/^FAIL/m);
  });

  it('the strict decoder rejects an unknown field and a bad quantity', () => {
    const bad =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x, resorces: {}}]\n';
    const decode = (input: string) => spawnSync(kubeDecode, [], { input, encoding: 'utf8' });
    expect(decode(bad)).toMatchObject({
      status: 1,
      stdout: expect.stringMatching(/FAIL v1 Pod\/p: .*unknown field "resorces"/),
    });
    const quantity =
      'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n  volumes: [{name: t, emptyDir: {sizeLimit: lots}}]\n';
    expect(decode(quantity)).toMatchObject({
      status: 1,
      stdout: expect.stringMatching(/FAIL v1 Pod\/p: .*quantities must match/),
    });
  });

  it.each(SHAPES)('$name: helm lint --strict', ({ values }) => {
    const out = execFileSync(helm, ['lint', '--strict', CHART, ...setArgs(values)], { encoding: 'utf8' });
    expect(out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it.each(SHAPES)(
    '$name: every pod has a size-limited /tmp and an ephemeral-storage limit on every container',
    ({ values }) => {
      const pods = render(values).filter((o) => podSpecOf(o));
      expect(pods.length).toBeGreaterThanOrEqual(3);
      for (const o of pods) {
        const pod = podSpecOf(o);
        const emptyDirs = (pod.volumes ?? []).filter((v: any) => 'emptyDir' in v);
        expect({ pod: o.metadata.name, tmp: emptyDirs.map((v: any) => v.name) }).toEqual({
          pod: o.metadata.name,
          tmp: ['tmp'],
        });
        for (const v of emptyDirs)
          expect({ pod: o.metadata.name, sizeLimit: v.emptyDir.sizeLimit }).toEqual({
            pod: o.metadata.name,
            sizeLimit: '1Gi',
          });
        for (const c of pod.containers) {
          expect({
            container: `${o.metadata.name}/${c.name}`,
            limit: c.resources?.limits?.['ephemeral-storage'],
          }).toEqual({ container: `${o.metadata.name}/${c.name}`, limit: '2Gi' });
          expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
        }
      }
    },
  );

  it('role-separated users: the migrate Job connects with migrations.database.*, the apps with database.*', () => {
    const docs = render({
      publicBaseUrl: 'https://mango.example',
      'database.url': 'postgres://mango_app:a@db/mango',
      'migrations.database.url': 'postgres://mango_owner:o@db/mango',
      ...OBJECT_KEYS,
    });
    const hookSecret = docs.find(
      (o) => o.kind === 'Secret' && o.metadata.name === 't-mango-migrate-database',
    ) as any;
    expect(hookSecret.stringData.url).toBe('postgres://mango_owner:o@db/mango');
    expect(hookSecret.metadata.annotations['helm.sh/hook-delete-policy']).toBe(
      'before-hook-creation,hook-succeeded',
    );
    const job = docs.find((o) => o.kind === 'Job')!;
    expect(podSpecOf(job).containers[0].env[0].valueFrom.secretKeyRef).toEqual({
      name: 't-mango-migrate-database',
      key: 'url',
    });
    const appSecret = docs.find((o) => o.kind === 'Secret' && o.metadata.name === 't-mango-database') as any;
    expect(appSecret.stringData.url).toBe('postgres://mango_app:a@db/mango');
    expect(missingReferences(docs, [], 'install')).toEqual([]);
    const existing = render({
      publicBaseUrl: 'https://mango.example',
      'database.existingSecret': 'app-db',
      'migrations.database.existingSecret': 'owner-db',
      ...OBJECT_KEYS,
    });
    expect(existing.some((o) => o.kind === 'Secret' && /database/.test(o.metadata.name))).toBe(false);
    expect(
      podSpecOf(existing.find((o) => o.kind === 'Job')!).containers[0].env[0].valueFrom.secretKeyRef.name,
    ).toBe('owner-db');
    expect(missingReferences(existing, ['Secret/app-db', 'Secret/owner-db'], 'install')).toEqual([]);
  });
});

describe('Helm chart: the supervisor with --workspace-root', () => {
  it('passes MANGO_WORKER_WORKSPACE_ROOT and mounts the host directory at the same path; nothing when unset', () => {
    const on = render({
      'database.url': 'postgres://u:p@db/mango',
      ...OBJECT_KEYS,
      ...SUPERVISOR,
      'supervisor.workspaceRoot': '/srv/mango/sessions',
    });
    const pod = podSpecOf(on.find((o) => o.metadata.name === 't-mango-supervisor')!);
    expect(pod.containers[0].env).toContainEqual({
      name: 'MANGO_WORKER_WORKSPACE_ROOT',
      value: '/srv/mango/sessions',
    });
    expect(pod.containers[0].volumeMounts).toContainEqual({
      name: 'workspaces',
      mountPath: '/srv/mango/sessions',
    });
    expect(pod.volumes).toContainEqual({
      name: 'workspaces',
      hostPath: { path: '/srv/mango/sessions', type: 'Directory' },
    });
    const off = render({ 'database.url': 'postgres://u:p@db/mango', ...OBJECT_KEYS, ...SUPERVISOR });
    expect(JSON.stringify(off)).not.toMatch(/WORKSPACE_ROOT|"workspaces"/);
  });
});

describe('Helm install order and strict types for the values files (deployments/test/helm-values)', () => {
  it.each(VALUES_SHAPES)(
    '$file: helm install and helm upgrade find every referenced object',
    ({ file, external }) => {
      const docs = renderFile(file) as Obj[];
      expect(missingReferences(docs, external, 'install')).toEqual([]);
      expect(missingReferences(docs, external, 'upgrade')).toEqual([]);
    },
  );

  it.each(VALUES_SHAPES)(
    '$file: every rendered object (HPA, PDB, NetworkPolicy too) decodes strictly',
    ({ file }) => {
      const run = kubeDecodeRun(templateFile(file));
      expect(run.stdout).not.toMatch(/^FAIL/m);
      expect(run.stdout).toMatch(/^\d+ objects, 0 failed$/m);
      expect(run.status).toBe(0);
    },
  );

  it('the strict decoder knows HorizontalPodAutoscaler and refuses an unknown field in it', () => {
    const hpa =
      'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: d}\n  maxReplicas: 2\n  minReplica: 1\n';
    expect(kubeDecodeRun(hpa)).toMatchObject({
      status: 1,
      stdout: expect.stringMatching(
        /FAIL autoscaling\/v2 HorizontalPodAutoscaler\/h: .*unknown field "minReplica"/,
      ),
    });
  });
});
