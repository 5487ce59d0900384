import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { parse } from 'yaml';
import {
  CHART,
  VALUES_SHAPES,
  helm,
  kubeDecodeRun,
  podSpecOf,
  renderFile,
  templateFile,
  valuesPath,
} from './helm-shapes';

/**
 * A chart a hardened cluster accepts (issue #39): every rendered pod of every values shape passes Pod Security
 * `restricted` as the Kubernetes project's own evaluator (k8s.io/pod-security-admission, in kube-decode)
 * judges it — except the opt-in in-cluster supervisor, whose only violation is its hostPath volumes; every
 * object decodes strictly into its k8s.io/api type; values are checked against values.schema.json; a changed
 * Secret value rolls the pods; probes, HPA, PDB, TLS, pull secrets, scheduling, extras and NetworkPolicies
 * render as documented (docs/install-helm.md).
 */
const deployments = (docs: any[]) => docs.filter((d) => d.kind === 'Deployment');
const byName = (docs: any[], kind: string, name: string) =>
  docs.find((d) => d.kind === kind && d.metadata.name === name);
const podOf = (docs: any[], name: string) => podSpecOf(byName(docs, 'Deployment', name));

describe('Pod Security restricted (k8s.io/pod-security-admission) over every values shape', () => {
  it.each(VALUES_SHAPES)(
    '$file: every pod is admitted at restricted, or only the supervisor is refused and only for hostPath',
    ({ file, supervisor }) => {
      const run = kubeDecodeRun(templateFile(file), ['-pod-security', 'restricted']);
      expect(run.stdout).toMatch(/^\d+ objects, 0 failed$/m);
      const denials = run.stdout.split('\n').filter((l) => l.startsWith('PSA  DENY'));
      const admitted = run.stdout.split('\n').filter((l) => l.startsWith('PSA  OK'));
      // api, files, orchestrator and the migrate Job are always rendered and always admitted.
      expect(admitted).toEqual(
        expect.arrayContaining([
          'PSA  OK apps/v1 Deployment/t-mango-api',
          'PSA  OK apps/v1 Deployment/t-mango-files',
          'PSA  OK apps/v1 Deployment/t-mango-orchestrator',
          'PSA  OK batch/v1 Job/t-mango-migrate',
        ]),
      );
      if (!supervisor) {
        expect(denials).toEqual([]);
        expect(run.stdout).toMatch(/^pod security restricted \(latest\): 4 pods, 0 violating$/m);
        expect(run.status).toBe(0);
      } else {
        expect(denials).toHaveLength(1);
        expect(denials[0]).toMatch(
          /^PSA {2}DENY apps\/v1 Deployment\/t-mango-supervisor: restricted volume types: volumes? .*"sockets".* restricted volume type "hostPath"$/,
        );
        expect(run.status).toBe(1);
      }
    },
  );

  it('the supervisor container itself is restricted: with its hostPath volumes removed the pod is admitted', () => {
    const docs = renderFile('supervisor.yaml');
    const sup = byName(docs, 'Deployment', 't-mango-supervisor');
    const pod = podSpecOf(sup);
    pod.volumes = pod.volumes.filter((v: any) => !v.hostPath);
    pod.containers[0].volumeMounts = pod.containers[0].volumeMounts.filter((m: any) =>
      pod.volumes.some((v: any) => v.name === m.name),
    );
    const run = kubeDecodeRun(JSON.stringify(sup), ['-pod-security', 'restricted']);
    expect(run.stdout).toContain('PSA  OK apps/v1 Deployment/t-mango-supervisor');
    expect(run.status).toBe(0);
  });

  it('the evaluator refuses what restricted refuses (the check is not vacuous)', () => {
    const docs = renderFile('defaults.yaml', {
      containerSecurityContext: { allowPrivilegeEscalation: true, capabilities: { drop: [] } },
      podSecurityContext: { seccompProfile: null, runAsNonRoot: null },
    });
    const run = kubeDecodeRun(JSON.stringify(byName(docs, 'Deployment', 't-mango-api')) + '\n', [
      '-pod-security',
      'restricted',
    ]);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(
      /PSA {2}DENY apps\/v1 Deployment\/t-mango-api: allowPrivilegeEscalation != false/,
    );
    expect(run.stdout).toMatch(/PSA {2}DENY apps\/v1 Deployment\/t-mango-api: unrestricted capabilities/);
  });

  it.each(VALUES_SHAPES)(
    '$file: every container is non-root uid 10001 with a read-only root and a writable /tmp emptyDir',
    ({ file }) => {
      for (const o of renderFile(file).filter((d) => podSpecOf(d))) {
        const pod = podSpecOf(o);
        expect(pod.securityContext).toMatchObject({
          runAsNonRoot: true,
          runAsUser: 10001,
          seccompProfile: { type: 'RuntimeDefault' },
        });
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(pod.volumes).toContainEqual({ name: 'tmp', emptyDir: { sizeLimit: '1Gi' } });
        for (const c of pod.containers) {
          expect({ c: `${o.metadata.name}/${c.name}`, sc: c.securityContext }).toMatchObject({
            sc: {
              runAsUser: 10001,
              readOnlyRootFilesystem: true,
              allowPrivilegeEscalation: false,
              capabilities: { drop: ['ALL'] },
            },
          });
          expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
        }
      }
    },
  );
});

describe('values.schema.json: helm refuses bad values before rendering', () => {
  const refuse = (set: Record<string, unknown>) => {
    const args = ['template', 't', CHART, '-f', valuesPath('defaults.yaml')];
    for (const [k, v] of Object.entries(set)) args.push('--set-json', `${k}=${JSON.stringify(v)}`);
    return spawnSync(helm, args, { encoding: 'utf8' });
  };

  it.each([
    [{ 'api.replicas': -1 }, /api\.replicas: Must be greater than or equal to 0/],
    [{ 'api.replica': 2 }, /api: Additional property replica is not allowed/],
    [{ 'image.pullPolicy': 'Sometimes' }, /image\.pullPolicy must be one of the following/],
    [{ publicBaseUrl: 'mango.example.com' }, /publicBaseUrl: Does not match pattern/],
    [{ 'temporal.address': 'temporal' }, /temporal\.address: Does not match pattern/],
    [{ 'supervisor.docker.host': 'http://docker:2375' }, /supervisor\.docker\.host: Does not match pattern/],
    [{ 'files.extraEnv': [{ value: 'x' }] }, /files\.extraEnv\.0: name is required/],
    [
      { 'networkPolicy.egress.database.to': '10.0.0.0/8' },
      /networkPolicy\.egress\.database\.to: Invalid type/,
    ],
    [{ logLevel: 'verbose' }, /logLevel must be one of the following/],
  ])('refuses %j', (set, message) => {
    const run = refuse(set);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/values don't meet the specifications of the schema/);
    expect(run.stderr).toMatch(message);
  });

  it.each(VALUES_SHAPES)('$file: accepted by the schema and by helm lint --strict', ({ file }) => {
    const out = execFileSync(helm, ['lint', '--strict', CHART, '-f', valuesPath(file)], {
      encoding: 'utf8',
    });
    expect(out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });
});

describe('checksum annotations: a changed Secret or ConfigMap rolls the pods', () => {
  const checksums = (docs: any[]) =>
    Object.fromEntries(deployments(docs).map((d) => [d.metadata.name, d.spec.template.metadata.annotations]));

  it('changing a credential value changes checksum/secrets of every Deployment; the same values give the same sums', () => {
    const before = checksums(renderFile('defaults.yaml'));
    const again = checksums(renderFile('defaults.yaml'));
    const rotated = checksums(renderFile('defaults.yaml', { 'objectStore.secretKey': 'sk-rotated' }));
    expect(again).toEqual(before);
    for (const name of Object.keys(before)) {
      expect(before[name]['checksum/secrets']).toMatch(/^[0-9a-f]{64}$/);
      expect(rotated[name]['checksum/secrets']).not.toBe(before[name]['checksum/secrets']);
      expect(rotated[name]['checksum/config']).toBe(before[name]['checksum/config']);
    }
    const dbChanged = checksums(
      renderFile('defaults.yaml', { 'database.url': 'postgres://mango_app:new@db.example:5432/mango' }),
    );
    expect(dbChanged['t-mango-api']['checksum/secrets']).not.toBe(before['t-mango-api']['checksum/secrets']);
  });

  it('changing the custom tools changes checksum/config of the supervisor', () => {
    const before = checksums(renderFile('supervisor.yaml'));
    const after = checksums(
      renderFile('supervisor.yaml', {
        'supervisor.customTools': [
          { name: 'other', description: 'd', input_schema: { type: 'object' }, command: ['/bin/true'] },
        ],
      }),
    );
    expect(after['t-mango-supervisor']['checksum/config']).not.toBe(
      before['t-mango-supervisor']['checksum/config'],
    );
  });
});

describe('probes: every long-running component has startup, liveness and readiness probes on a real endpoint', () => {
  it('api and files probe /healthz and /readyz on http; orchestrator and supervisor /healthz on the always-on internal listener', () => {
    const docs = renderFile('supervisor.yaml');
    for (const [name, port, ready] of [
      ['t-mango-api', 'http', '/readyz'],
      ['t-mango-files', 'http', '/readyz'],
      ['t-mango-orchestrator', 'metrics', '/healthz'],
      ['t-mango-supervisor', 'metrics', '/healthz'],
    ]) {
      const c = podOf(docs, name).containers[0];
      expect({ name, probe: c.startupProbe.httpGet }).toEqual({ name, probe: { path: '/healthz', port } });
      expect({ name, probe: c.livenessProbe.httpGet }).toEqual({ name, probe: { path: '/healthz', port } });
      expect({ name, probe: c.readinessProbe.httpGet }).toEqual({ name, probe: { path: ready, port } });
      expect(c.ports.map((p: any) => p.name)).toContain(port);
      if (port === 'metrics') {
        // The listener that answers /healthz (libs/platform/metrics startMetricsServer) is on without metrics.enabled.
        expect(c.env).toContainEqual({ name: 'MANGO_METRICS_PORT', value: '9464' });
        expect(c.env).toContainEqual({ name: 'MANGO_METRICS_HOST', value: '0.0.0.0' });
      }
    }
    // metrics.enabled=false still renders no metrics Service or ServiceMonitor.
    expect(docs.some((d) => d.kind === 'Service' && d.metadata.name.endsWith('-metrics'))).toBe(false);
  });
});

describe('scaling, scheduling, TLS, pull secrets and extras', () => {
  it('HPA and PDB per scalable component; the Deployment leaves replicas to the HPA', () => {
    const docs = renderFile('scaling.yaml');
    const hpas = docs.filter((d) => d.kind === 'HorizontalPodAutoscaler');
    expect(hpas.map((h) => h.metadata.name).sort()).toEqual([
      't-mango-api',
      't-mango-files',
      't-mango-orchestrator',
    ]);
    const api = byName(docs, 'HorizontalPodAutoscaler', 't-mango-api');
    expect(api.spec).toMatchObject({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 't-mango-api' },
      minReplicas: 3,
      maxReplicas: 12,
    });
    expect(api.spec.metrics.map((m: any) => m.resource.name)).toEqual(['cpu', 'memory']);
    for (const d of deployments(docs)) expect(d.spec.replicas).toBeUndefined();
    expect(byName(docs, 'PodDisruptionBudget', 't-mango-api').spec).toEqual({
      minAvailable: 2,
      selector: { matchLabels: { 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': 'api' } },
    });
    expect(byName(docs, 'PodDisruptionBudget', 't-mango-files').spec.maxUnavailable).toBe(1);
    // Every PDB selects exactly its Deployment's pods.
    for (const pdb of docs.filter((d) => d.kind === 'PodDisruptionBudget')) {
      const d = byName(docs, 'Deployment', pdb.metadata.name);
      expect(pdb.spec.selector.matchLabels).toEqual(d.spec.selector.matchLabels);
    }
    const defaults = renderFile('defaults.yaml');
    expect(defaults.some((d) => ['HorizontalPodAutoscaler', 'PodDisruptionBudget'].includes(d.kind))).toBe(
      false,
    );
    expect(byName(defaults, 'Deployment', 't-mango-api').spec.replicas).toBe(2);
  });

  it('scheduling: chart-wide settings reach every pod, a component value wins, spread constraints select the component', () => {
    const docs = renderFile('scaling.yaml');
    for (const name of ['t-mango-api', 't-mango-files', 't-mango-orchestrator']) {
      const pod = podOf(docs, name);
      expect(pod.priorityClassName).toBe('mango-critical');
      expect(pod.tolerations).toEqual([
        { key: 'dedicated', operator: 'Equal', value: 'mango', effect: 'NoSchedule' },
      ]);
      const component = name.replace('t-mango-', '');
      expect(pod.topologySpreadConstraints).toEqual([
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: {
            matchLabels: { 'app.kubernetes.io/instance': 't', 'app.kubernetes.io/component': component },
          },
        },
      ]);
    }
    expect(podOf(docs, 't-mango-api').nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(podOf(docs, 't-mango-orchestrator').nodeSelector).toEqual({ 'mango.example/pool': 'workers' });
    expect(podOf(docs, 't-mango-api').affinity.podAntiAffinity).toBeDefined();
    expect(podOf(docs, 't-mango-files').affinity).toBeUndefined();
  });

  it('ingress TLS, https console URL, pull secrets and the image names', () => {
    const docs = renderFile('ingress-tls.yaml');
    const ingress = docs.find((d) => d.kind === 'Ingress');
    expect(ingress.spec.tls).toEqual([{ hosts: ['mango.example.com'], secretName: 'mango-tls' }]);
    expect(ingress.spec.ingressClassName).toBe('nginx');
    for (const o of docs.filter((d) => podSpecOf(d))) {
      const pod = podSpecOf(o);
      expect(pod.imagePullSecrets).toEqual([{ name: 'regcred' }]);
      expect(pod.containers[0].image).toBe('registry.example/mango-control-plane:0.1.0');
    }
    expect(renderFile('defaults.yaml').find((d) => d.kind === 'Ingress').spec.tls).toBeUndefined();
  });

  it('images default to mango-control-plane and mango-sandbox at the chart appVersion; a tag overrides', () => {
    const appVersion = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')).appVersion;
    const docs = renderFile('supervisor.yaml');
    for (const o of docs.filter((d) => podSpecOf(d)))
      expect(podSpecOf(o).containers[0].image).toBe(`mango-control-plane:${appVersion}`);
    expect(podOf(docs, 't-mango-supervisor').containers[0].env).toContainEqual({
      name: 'MANGO_WORKER_IMAGE',
      value: `mango-sandbox:${appVersion}`,
    });
    const pinned = renderFile('supervisor.yaml', { 'image.tag': '9.9.9', 'sandboxImage.tag': '9.9.8' });
    expect(podOf(pinned, 't-mango-api').containers[0].image).toBe('mango-control-plane:9.9.9');
    expect(podOf(pinned, 't-mango-supervisor').containers[0].env).toContainEqual({
      name: 'MANGO_WORKER_IMAGE',
      value: 'mango-sandbox:9.9.8',
    });
  });

  it('extraEnv / extraEnvFrom / extraVolumes / extraVolumeMounts: chart-wide to every container, per component to its own, after the chart env', () => {
    const docs = renderFile('extras.yaml');
    const otel = { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.observability:4318' };
    for (const o of docs.filter((d) => podSpecOf(d))) {
      const c = podSpecOf(o).containers[0];
      expect(c.env).toContainEqual(otel);
      // The chart's own settings come first: an operator entry for the same name is the later (winning) one.
      expect(c.env.findIndex((e: any) => e.name === 'MANGO_LOG_LEVEL')).toBeLessThan(
        c.env.findIndex((e: any) => e.name === otel.name),
      );
    }
    const orch = podOf(docs, 't-mango-orchestrator');
    expect(orch.containers[0].env).toContainEqual({ name: 'MANGO_MAX_CONCURRENT_TURNS', value: '50' });
    expect(orch.containers[0].envFrom).toEqual([{ secretRef: { name: 'mango-temporal-settings' } }]);
    expect(orch.volumes).toContainEqual({
      name: 'temporal-tls',
      secret: { secretName: 'mango-temporal-tls' },
    });
    expect(orch.containers[0].volumeMounts).toContainEqual({
      name: 'temporal-tls',
      mountPath: '/etc/mango/temporal-tls',
      readOnly: true,
    });
    expect(podOf(docs, 't-mango-files').containers[0].envFrom).toBeUndefined();
    expect(JSON.stringify(podOf(docs, 't-mango-files'))).not.toContain('temporal-tls');
    expect(byName(docs, 'Deployment', 't-mango-api').spec.template.metadata.labels['example.com/tier']).toBe(
      'edge',
    );
    expect(
      byName(docs, 'Deployment', 't-mango-api').spec.template.metadata.annotations['example.com/team'],
    ).toBe('agents');
  });

  it('resource requests and limits by default: cpu and memory requested, memory and ephemeral storage limited', () => {
    for (const o of renderFile('supervisor.yaml').filter((d) => podSpecOf(d)))
      for (const c of podSpecOf(o).containers) {
        expect(Object.keys(c.resources.requests).sort()).toEqual(['cpu', 'ephemeral-storage', 'memory']);
        expect(Object.keys(c.resources.limits).sort()).toEqual(['ephemeral-storage', 'memory']);
      }
  });

  it('the API gets the Temporal settings (Deployment schedules start runs on the orchestrator queue)', () => {
    const env = podOf(renderFile('defaults.yaml'), 't-mango-api').containers[0].env;
    expect(env).toContainEqual({ name: 'MANGO_TEMPORAL_ADDRESS', value: 'temporal-frontend:7233' });
    expect(env).toContainEqual({ name: 'MANGO_TASK_QUEUE', value: 'mango' });
  });
});

describe('NetworkPolicies', () => {
  const policies = (docs: any[]) => docs.filter((d) => d.kind === 'NetworkPolicy');

  it('off by default', () => {
    expect(policies(renderFile('defaults.yaml'))).toEqual([]);
  });

  it('the API and the file service accept their http port from the configured ingress controller only (and metrics from metricsFrom)', () => {
    const docs = renderFile('network-policy.yaml');
    for (const [name, port] of [
      ['api', 8081],
      ['files', 8082],
    ] as const) {
      const np = byName(docs, 'NetworkPolicy', `t-mango-${name}`);
      const d = byName(docs, 'Deployment', `t-mango-${name}`);
      // The policy selects exactly this component's pods.
      expect(np.spec.podSelector.matchLabels).toEqual(d.spec.selector.matchLabels);
      expect(np.spec.policyTypes).toEqual(['Ingress']);
      expect(np.spec.ingress).toEqual([
        {
          from: [
            {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress' } },
              podSelector: { matchLabels: { app: 'traefik' } },
            },
          ],
          ports: [{ port, protocol: 'TCP' }],
        },
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
          ports: [{ port: 9464, protocol: 'TCP' }],
        },
      ]);
    }
    // The defaults select the ingress-nginx chart's controller.
    const dflt = byName(
      renderFile('defaults.yaml', { 'networkPolicy.enabled': true }),
      'NetworkPolicy',
      't-mango-api',
    );
    expect(dflt.spec.ingress).toEqual([
      {
        from: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx' } },
          },
        ],
        ports: [{ port: 8081, protocol: 'TCP' }],
      },
    ]);
  });

  it('orchestrator, supervisor and migrate accept no connection (metrics only from metricsFrom)', () => {
    const closed = byName(
      renderFile('defaults.yaml', { 'networkPolicy.enabled': true }),
      'NetworkPolicy',
      't-mango-internal',
    );
    expect(closed.spec).toEqual({
      podSelector: {
        matchLabels: { 'app.kubernetes.io/instance': 't' },
        matchExpressions: [
          {
            key: 'app.kubernetes.io/component',
            operator: 'In',
            values: ['orchestrator', 'supervisor', 'migrate'],
          },
        ],
      },
      policyTypes: ['Ingress'],
      ingress: [],
    });
  });

  it("PostgreSQL and Temporal in the namespace: reachable on their port from Mango's pods (and allowFrom) only", () => {
    const docs = renderFile('network-policy.yaml');
    const mango = {
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'mango', 'app.kubernetes.io/instance': 't' } },
    };
    const db = byName(docs, 'NetworkPolicy', 't-mango-database-clients');
    expect(db.spec).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'postgresql' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [mango, { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'temporal' } } }],
          ports: [{ port: 5432, protocol: 'TCP' }],
        },
      ],
    });
    const temporal = byName(docs, 'NetworkPolicy', 't-mango-temporal-clients');
    expect(temporal.spec.ingress).toEqual([{ from: [mango], ports: [{ port: 7233, protocol: 'TCP' }] }]);
    // Mango's selector matches every Mango pod of the release (and nothing else's).
    for (const o of docs.filter((d) => podSpecOf(d))) {
      const labels = o.spec.template.metadata.labels;
      expect(labels).toMatchObject(mango.podSelector.matchLabels);
    }
    // Without selectors (external PostgreSQL / Temporal) the chart renders no policy for them.
    const external = renderFile('defaults.yaml', { 'networkPolicy.enabled': true });
    expect(
      policies(external)
        .map((p) => p.metadata.name)
        .sort(),
    ).toEqual(['t-mango-api', 't-mango-files', 't-mango-internal']);
  });

  it('egress: each process reaches DNS and exactly its dependencies; only orchestrator and supervisor the public internet', () => {
    const docs = renderFile('network-policy.yaml');
    const egress = (name: string) => byName(docs, 'NetworkPolicy', `t-mango-${name}-egress`).spec;
    const ports = (spec: any) =>
      spec.egress.map((r: any) => (r.ports ?? []).map((p: any) => p.port).join('+') || 'any');
    expect(ports(egress('api'))).toEqual(['53+53', '5432', '7233', '443']);
    expect(ports(egress('files'))).toEqual(['53+53', '5432', '443']);
    expect(ports(egress('orchestrator'))).toEqual(['53+53', '5432', '7233', '443', 'any']);
    expect(ports(egress('migrate'))).toEqual(['53+53', '5432']);
    expect(byName(docs, 'NetworkPolicy', 't-mango-supervisor-egress')).toBeUndefined();
    const internet = egress('orchestrator').egress[4].to;
    expect(internet[0].ipBlock).toEqual({
      cidr: '0.0.0.0/0',
      except: [
        '10.0.0.0/8',
        '172.16.0.0/12',
        '192.168.0.0/16',
        '100.64.0.0/10',
        '169.254.0.0/16',
        '127.0.0.0/8',
      ],
    });
    expect(internet[1].ipBlock.cidr).toBe('::/0');
    expect(egress('api').podSelector.matchLabels).toEqual({
      'app.kubernetes.io/instance': 't',
      'app.kubernetes.io/component': 'api',
    });
    expect(egress('api').policyTypes).toEqual(['Egress']);
    // The supervisor shape: DNS and the public internet (the API's public URL).
    const sup = byName(
      renderFile('supervisor-remote-docker.yaml'),
      'NetworkPolicy',
      't-mango-supervisor-egress',
    );
    expect(sup.spec.egress).toHaveLength(2);
  });
});

describe('NOTES.txt', () => {
  /** helm template does not render NOTES.txt: render it through the same engine from a copy of the chart. */
  function notes(file: string, set: Record<string, unknown> = {}): string {
    const dir = mkdtempSync(join(tmpdir(), 'mango-notes-'));
    try {
      cpSync(CHART, dir, { recursive: true });
      renameSync(join(dir, 'templates/NOTES.txt'), join(dir, 'notes.txt'));
      writeFileSync(
        join(dir, 'templates/notes.yaml'),
        'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: notes }\ndata:\n  notes: {{ tpl (.Files.Get "notes.txt") . | quote }}\n',
      );
      const args = ['template', 't', dir, '-f', valuesPath(file), '--show-only', 'templates/notes.yaml'];
      for (const [k, v] of Object.entries(set)) args.push('--set-json', `${k}=${JSON.stringify(v)}`);
      return parse(execFileSync(helm, args, { encoding: 'utf8' })).data.notes;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('says where the console is and how to create the first key', () => {
    const tls = notes('ingress-tls.yaml');
    expect(tls).toContain('Console: https://mango.example.com/console/');
    expect(tls).toContain('kubectl -n default exec deploy/t-mango-api --');
    expect(tls).toContain('mango api-key create -workspace wrkspc_default -label ops');
    const noIngress = notes('defaults.yaml', { 'ingress.enabled': false });
    expect(noIngress).toContain('kubectl -n default port-forward svc/t-mango-api 8080:80');
    expect(noIngress).toContain('http://127.0.0.1:8080/console/');
  });
});
