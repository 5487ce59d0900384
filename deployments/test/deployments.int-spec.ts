import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { parseCustomTools } from '@mango/worker-runtime';

/**
 * The Helm chart and the Compose stack, rendered and validated by the real tools (helm built from the Go
 * module proxy, Debian's docker-compose): one Deployment per service, the migration hook, the ingress
 * routing that `npm run up` uses, secrets only by reference, hardened containers.
 */
const ROOT = join(__dirname, '../..');
const helm = process.env.MANGO_HELM_BIN ?? 'helm';

function render(set: Record<string, unknown>): any[] {
  const args = [
    'template',
    't',
    join(ROOT, 'deployments/helm/mango'),
    // --set-json takes any string verbatim (JSON values such as model.prices contain braces and commas).
    ...Object.entries(set).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]),
  ];
  const out = execFileSync(helm, args, { encoding: 'utf8' });
  return parseAllDocuments(out)
    .map((d) => d.toJS())
    .filter(Boolean);
}

const BASE = {
  publicBaseUrl: 'https://mango.example',
  'database.url': 'postgres://u:p@db:5432/mango',
  'objectStore.accessKey': 'ak',
  'objectStore.secretKey': 'sk-object',
};

describe('Helm chart (helm lint + template)', () => {
  it('refuses to render without publicBaseUrl (apps/api would refuse to start without its public URL)', () => {
    const { publicBaseUrl: _omitted, ...rest } = BASE;
    expect(() => render(rest)).toThrow(/publicBaseUrl is required/);
  });

  it('lints cleanly', () => {
    const out = execFileSync(
      helm,
      [
        'lint',
        join(ROOT, 'deployments/helm/mango'),
        ...Object.entries(BASE).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
      ],
      { encoding: 'utf8' },
    );
    expect(out).toMatch(/0 chart\(s\) failed/);
  });

  it('renders one Deployment per service, probes on the HTTP apps, a migration hook and the /v1 routing', () => {
    const docs = render({
      ...BASE,
      'supervisor.enabled': true,
      'supervisor.environmentId': 'env_x',
      'supervisor.existingSecret': 'sup',
      publicBaseUrl: 'https://mango.example',
    });
    const deployments = docs.filter((d) => d.kind === 'Deployment');
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([
      't-mango-api',
      't-mango-files',
      't-mango-orchestrator',
      't-mango-supervisor',
    ]);
    for (const name of ['t-mango-api', 't-mango-files']) {
      const c = deployments.find((d) => d.metadata.name === name).spec.template.spec.containers[0];
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(c.livenessProbe.httpGet.path).toBe('/healthz');
      expect(c.securityContext).toMatchObject({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
    }
    const job = docs.find((d) => d.kind === 'Job');
    expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0].command).toEqual(['mango', 'migrate']);
    const paths = docs
      .find((d) => d.kind === 'Ingress')
      .spec.rules[0].http.paths.map((p: any) => [p.path, p.backend.service.name]);
    expect(paths).toEqual([
      ['/v1/files', 't-mango-files'],
      ['/v1/skills', 't-mango-files'],
      ['/v1/memory_stores', 't-mango-files'],
      ['/', 't-mango-api'],
    ]);
    // Bodies stream to the apps, which refuse an unauthenticated one unread (docs/security-model-notes/pre-auth.md);
    // a buffering ingress would read every body whole first.
    expect(docs.find((d) => d.kind === 'Ingress').metadata.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/proxy-request-buffering': 'off',
      'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
    });
  });

  it('passes credentials only by Secret reference', () => {
    const docs = render({ ...BASE, 'model.apiKey': 'sk-model-key' });
    const env = docs
      .filter((d) => d.kind === 'Deployment')
      .flatMap((d) => d.spec.template.spec.containers.flatMap((c: any) => c.env ?? []));
    expect(JSON.stringify(env)).not.toMatch(/sk-object|sk-model-key|postgres:\/\/u:p/);
    expect(env.find((e: any) => e.name === 'MANGO_DATABASE_URL').valueFrom.secretKeyRef.key).toBe('url');
    expect(env.find((e: any) => e.name === 'MANGO_MODEL_API_KEY').valueFrom.secretKeyRef.key).toBe('apiKey');
    // The API reads File text for event admission: it gets object storage too, by reference.
    const api = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 't-mango-api');
    const apiEnv = api.spec.template.spec.containers[0].env;
    expect(apiEnv.find((e: any) => e.name === 'MANGO_S3_SECRET_KEY').valueFrom.secretKeyRef.key).toBe(
      'secretKey',
    );
    expect(apiEnv.find((e: any) => e.name === 'MANGO_S3_ENDPOINT').value).toBeTruthy();
    // The orchestrator keeps large MCP results as Files: object storage by reference too.
    const orchestrator = docs.find(
      (d) => d.kind === 'Deployment' && d.metadata.name === 't-mango-orchestrator',
    );
    const orchEnv = orchestrator.spec.template.spec.containers[0].env;
    expect(orchEnv.find((e: any) => e.name === 'MANGO_S3_SECRET_KEY').valueFrom.secretKeyRef.key).toBe(
      'secretKey',
    );
    expect(orchEnv.find((e: any) => e.name === 'MANGO_S3_ENDPOINT').value).toBeTruthy();
    // Vaults and remote MCP: the keyring by Secret reference and the MCP allowlist reach api and orchestrator.
    const vaulted = render({
      ...BASE,
      'vaults.existingSecret': 'mango-vault',
      'mcp.allowedAddresses': '10.0.0.0/8',
    });
    for (const name of ['t-mango-api', 't-mango-orchestrator']) {
      const e = vaulted.find((x) => x.kind === 'Deployment' && x.metadata.name === name).spec.template.spec
        .containers[0].env;
      expect(e.find((v: any) => v.name === 'MANGO_VAULT_KEYRING').valueFrom.secretKeyRef).toEqual({
        name: 'mango-vault',
        key: 'keyring',
      });
      expect(e.find((v: any) => v.name === 'MANGO_MCP_ALLOWED_ADDRESSES').value).toBe('10.0.0.0/8');
    }
    // The one keyring by Secret reference reaches both processes that open sealed secrets.
    const keyed = render({ ...BASE, 'keyring.existingSecret': 'mango-keyring' });
    for (const name of ['t-mango-api', 't-mango-orchestrator']) {
      const e = keyed.find((x) => x.kind === 'Deployment' && x.metadata.name === name).spec.template.spec
        .containers[0].env;
      expect(e.find((v: any) => v.name === 'MANGO_KEYRING').valueFrom.secretKeyRef).toEqual({
        name: 'mango-keyring',
        key: 'keyring',
      });
    }
    // Without them neither is set (production refuses private MCP addresses by default).
    expect(JSON.stringify(docs)).not.toMatch(
      /MANGO_KEYRING|MANGO_VAULT_KEYRING|MANGO_MCP_ALLOWED_ADDRESSES|MANGO_WEBHOOK_SECRETS_KEY|MANGO_WEBHOOK_ALLOWED_CIDRS/,
    );
    // The webhook secrets key reaches the API (which seals) and the orchestrator (which signs).
    const hooked = render({
      ...BASE,
      'webhooks.existingSecret': 'mango-webhooks',
      'webhooks.allowedCidrs': '127.0.0.1/32',
    });
    for (const name of ['t-mango-api', 't-mango-orchestrator']) {
      const e = hooked.find((x) => x.kind === 'Deployment' && x.metadata.name === name).spec.template.spec
        .containers[0].env;
      expect(e.find((v: any) => v.name === 'MANGO_WEBHOOK_SECRETS_KEY').valueFrom.secretKeyRef).toEqual({
        name: 'mango-webhooks',
        key: 'secretsKey',
      });
      expect(e.find((v: any) => v.name === 'MANGO_WEBHOOK_ALLOWED_CIDRS').value).toBe('127.0.0.1/32');
    }
    // Operator prices reach both processes that use them.
    const priced = render({ ...BASE, 'model.prices': '{"m":{"input":1,"output":2}}' });
    for (const name of ['t-mango-api', 't-mango-orchestrator']) {
      const d = priced.find((x) => x.kind === 'Deployment' && x.metadata.name === name);
      expect(
        d.spec.template.spec.containers[0].env.find((e: any) => e.name === 'MANGO_MODEL_PRICES').value,
      ).toBe('{"m":{"input":1,"output":2}}');
    }
    // Model profiles reach the orchestrator (the only process that reads them).
    const profiled = render({ ...BASE, 'model.profiles': '{"m":{"context_window":8000}}' });
    const orch = profiled.find((x) => x.kind === 'Deployment' && x.metadata.name === 't-mango-orchestrator');
    expect(
      orch.spec.template.spec.containers[0].env.find((e: any) => e.name === 'MANGO_MODEL_PROFILES').value,
    ).toBe('{"m":{"context_window":8000}}');
  });

  it('operator custom tools: a ConfigMap the supervisor reads with --custom-tools, valid for its own parser', () => {
    const SUP = {
      'supervisor.enabled': true,
      'supervisor.environmentId': 'env_x',
      'supervisor.existingSecret': 'sup',
      publicBaseUrl: 'https://mango.example',
    };
    const supervisor = (docs: any[]) =>
      docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 't-mango-supervisor').spec.template
        .spec;
    const none = render({ ...BASE, ...SUP });
    expect(none.some((d) => d.kind === 'ConfigMap')).toBe(false);
    expect(JSON.stringify(supervisor(none))).not.toContain('MANGO_WORKER_CUSTOM_TOOLS');

    const tools = [
      {
        name: 'lookup_order',
        description: 'Look up an order',
        input_schema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
        command: ['/opt/tools/lookup-order', '--json'],
        timeout_ms: 30000,
      },
    ];
    const docs = render({ ...BASE, ...SUP, 'supervisor.customTools': tools });
    const map = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 't-mango-custom-tools');
    // The worker's own validator accepts the rendered file and reads back exactly the tools given.
    expect(parseCustomTools(map.data['custom-tools.yaml'], 'rendered ConfigMap')).toEqual(
      tools.map((t) => expect.objectContaining({ name: t.name, command: t.command, timeout_ms: 30000 })),
    );
    const spec = supervisor(docs);
    const env = spec.containers[0].env;
    const path = env.find((e: any) => e.name === 'MANGO_WORKER_CUSTOM_TOOLS').value;
    const mount = spec.containers[0].volumeMounts.find((m: any) => m.name === 'custom-tools');
    expect(mount).toMatchObject({ mountPath: path, subPath: 'custom-tools.yaml', readOnly: true });
    expect(spec.volumes.find((v: any) => v.name === 'custom-tools').configMap.name).toBe(
      't-mango-custom-tools',
    );
  });

  it('metrics: off by default; when on, every process gets an internal metrics port, a headless Service and an optional ServiceMonitor, never an ingress route', () => {
    const off = render(BASE);
    expect(off.some((d) => d.kind === 'ServiceMonitor')).toBe(false);
    // api and files open no metrics listener; the orchestrator's is always on: its probes ask /healthz there.
    const offEnv = (name: string) =>
      JSON.stringify(off.find((d) => d.kind === 'Deployment' && d.metadata.name === name).spec.template);
    expect(offEnv('t-mango-api')).not.toContain('MANGO_METRICS_PORT');
    expect(offEnv('t-mango-files')).not.toContain('MANGO_METRICS_PORT');
    expect(offEnv('t-mango-orchestrator')).toContain('MANGO_METRICS_PORT');
    expect(off.some((d) => d.kind === 'Service' && d.metadata.name.endsWith('-metrics'))).toBe(false);
    const SUP = {
      'supervisor.enabled': true,
      'supervisor.environmentId': 'env_x',
      'supervisor.existingSecret': 'sup',
      publicBaseUrl: 'https://mango.example',
    };
    const noMonitor = render({ ...BASE, ...SUP, 'metrics.enabled': true });
    expect(noMonitor.some((d) => d.kind === 'ServiceMonitor')).toBe(false);
    const docs = render({
      ...BASE,
      ...SUP,
      'metrics.enabled': true,
      'metrics.serviceMonitor.enabled': true,
      'metrics.serviceMonitor.labels': { release: 'prom' } as never,
    });
    for (const d of docs.filter((x) => x.kind === 'Deployment')) {
      const c = d.spec.template.spec.containers[0];
      expect(c.ports).toContainEqual({ name: 'metrics', containerPort: 9464 });
      expect(c.env).toContainEqual({ name: 'MANGO_METRICS_PORT', value: '9464' });
      expect(c.env).toContainEqual({ name: 'MANGO_METRICS_HOST', value: '0.0.0.0' });
    }
    const services = docs.filter(
      (d) => d.kind === 'Service' && d.metadata.labels['mango.dev/metrics'] === 'true',
    );
    expect(services.map((d) => d.metadata.name).sort()).toEqual([
      't-mango-api-metrics',
      't-mango-files-metrics',
      't-mango-orchestrator-metrics',
      't-mango-supervisor-metrics',
    ]);
    for (const svc of services)
      expect(svc.spec.ports).toEqual([{ name: 'metrics', port: 9464, targetPort: 'metrics' }]);
    const monitor = docs.find((d) => d.kind === 'ServiceMonitor');
    expect(monitor.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(monitor.metadata.labels.release).toBe('prom');
    expect(monitor.spec.selector.matchLabels).toEqual({
      'app.kubernetes.io/instance': 't',
      'mango.dev/metrics': 'true',
    });
    expect(monitor.spec.endpoints).toEqual([
      { port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' },
    ]);
    // The ingress routes only to the public http ports.
    const ingress = docs.find((d) => d.kind === 'Ingress');
    for (const p of ingress.spec.rules[0].http.paths)
      expect(p.backend.service.port).toEqual({ name: 'http' });
  });

  it('refuses to render without a database', () => {
    expect(() => render({ 'objectStore.accessKey': 'a', 'objectStore.secretKey': 'b' })).toThrow(
      /database.url or database.existingSecret is required/,
    );
  });
});

describe('Compose stack (docker-compose config)', () => {
  const file = join(ROOT, 'deployments/compose/compose.yaml');

  /** The values `.env.example` marks REQUIRED (no defaults: `${VAR:?}`). */
  const REQUIRED = {
    MANGO_DB_PASSWORD: 'p',
    MANGO_S3_ACCESS_KEY: 'ak',
    MANGO_S3_SECRET_KEY: 'sk',
    MANGO_PUBLIC_BASE_URL: 'https://mango.example',
  };
  const config = (env: Record<string, string>) =>
    execFileSync('docker-compose', ['-f', file, 'config'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });

  it('refuses to start without each required secret, naming it (no default secrets)', () => {
    for (const name of Object.keys(REQUIRED)) {
      const { [name as keyof typeof REQUIRED]: _left, ...rest } = REQUIRED;
      expect(() => config(rest)).toThrow(new RegExp(`set ${name}`));
    }
  });

  it('is valid and wires every service the way the local stack does', () => {
    const cfg = parse(config(REQUIRED));
    expect(Object.keys(cfg.services).sort()).toEqual([
      'api',
      'files',
      'ingress',
      'migrate',
      'orchestrator',
      'postgres',
      's3',
      'sandbox',
      'supervisor',
      'temporal',
      'temporal-namespace',
      'temporal-schema',
    ]);
    expect(cfg.services.api.command).toEqual(['mango-server', 'api']);
    expect(cfg.services.api.depends_on.migrate.condition).toBe('service_completed_successfully');
    expect(cfg.services.migrate.command).toEqual(['mango', 'migrate']);
    expect(cfg.services.supervisor.profiles).toEqual(['supervisor']);
    // Vaults, remote MCP and webhooks are configurable in both processes that use them.
    for (const name of ['api', 'orchestrator'])
      expect(Object.keys(cfg.services[name].environment)).toEqual(
        expect.arrayContaining([
          'MANGO_KEYRING',
          'MANGO_VAULT_KEYRING',
          'MANGO_MCP_ALLOWED_ADDRESSES',
          'MANGO_WEBHOOK_SECRETS_KEY',
          'MANGO_WEBHOOK_ALLOWED_CIDRS',
        ]),
      );
    const nginx = readFileSync(join(ROOT, 'deployments/compose/nginx.conf'), 'utf8');
    expect(nginx).toMatch(
      /location ~ \^\/v1\/\(files\|skills\|memory_stores\)\(\/\|\$\) \{ proxy_pass http:\/\/files:8082; \}/,
    );
  });
});
