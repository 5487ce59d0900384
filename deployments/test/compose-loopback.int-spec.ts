import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The Compose files as docker-compose (Debian's 1.29) resolves them: Mango's own images by default (the
 * version of package.json, built from deployments/docker), the others from registries (each one a variable);
 * secrets without defaults; a health check for every service and a condition on every dependency; and the
 * loopback override that the CI test brings up — every service that starts on the host network, nothing
 * published, the published ingress out of the default profile.
 */
const DIR = process.env.MANGO_COMPOSE_TEST_DIR ?? join(__dirname, '../compose');
const VERSION: string = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')).version;
/** The settings compose.yaml requires (`${VAR:?}`), as an operator's .env sets them. */
const REQUIRED = {
  MANGO_DB_PASSWORD: 'db-secret',
  MANGO_S3_ACCESS_KEY: 's3-access',
  MANGO_S3_SECRET_KEY: 's3-secret',
  MANGO_PUBLIC_BASE_URL: 'https://mango.example.test',
};
const run = (files: string[], env: NodeJS.ProcessEnv) =>
  execFileSync('docker-compose', [...files.flatMap((f) => ['-f', join(DIR, f)]), 'config'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    // No .env file is read: the project directory is an empty one.
    cwd: '/',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
const config = (files: string[], env: NodeJS.ProcessEnv = {}) => parse(run(files, { ...REQUIRED, ...env }));
const MANGO = ['migrate', 'api', 'files', 'orchestrator', 'supervisor'];

describe('Compose files (docker-compose config)', () => {
  it("default to Mango's images of this version and to registry images for the rest, each overridable by its variable", () => {
    const c = config(['compose.yaml']);
    expect(c.services.postgres.image).toBe('postgres:15');
    expect(c.services.temporal.image).toBe('temporalio/server:1.29.1');
    expect(c.services['temporal-schema'].image).toBe('temporalio/admin-tools:1.29.1');
    expect(c.services['temporal-namespace'].image).toBe('temporalio/admin-tools:1.29.1');
    expect(c.services.s3.image).toBe('versity/versitygw:v1.7.0');
    expect(c.services.ingress.image).toBe('nginx:1.27');
    for (const s of MANGO) expect([s, c.services[s].image]).toEqual([s, `mango-control-plane:${VERSION}`]);
    expect(c.services.supervisor.environment.MANGO_WORKER_IMAGE).toBe(`mango-sandbox:${VERSION}`);
    expect(c.services.supervisor.environment.MANGO_BASE_URL).toBe('http://ingress:8080');
    const local = config(['compose.yaml'], {
      MANGO_POSTGRES_IMAGE: 'pg:x',
      MANGO_TEMPORAL_IMAGE: 't:x',
      MANGO_TEMPORAL_ADMIN_IMAGE: 'ta:x',
      MANGO_S3_IMAGE: 's:x',
      MANGO_NGINX_IMAGE: 'n:x',
      MANGO_IMAGE: 'm:x',
      MANGO_SANDBOX_IMAGE: 'sb:x',
    });
    expect(
      [
        'postgres',
        'temporal',
        'temporal-schema',
        'temporal-namespace',
        's3',
        'ingress',
        'api',
        'migrate',
        'supervisor',
        'sandbox',
      ].map((s) => local.services[s].image),
    ).toEqual(['pg:x', 't:x', 'ta:x', 'ta:x', 's:x', 'n:x', 'm:x', 'm:x', 'm:x', 'sb:x']);
    expect(local.services.supervisor.environment.MANGO_WORKER_IMAGE).toBe('sb:x');
  }, 180_000);

  it('builds each image from its Dockerfile in deployments/docker with the package version', () => {
    const c = config(['compose.yaml']);
    const root = join(__dirname, '../..');
    expect(c.services.migrate.build).toMatchObject({
      context: root,
      dockerfile: 'deployments/docker/control-plane.Dockerfile',
      args: { VERSION },
    });
    expect(c.services.sandbox.build).toMatchObject({
      context: root,
      dockerfile: 'deployments/docker/sandbox.Dockerfile',
      args: { VERSION },
    });
    // The build-only service never starts with the stack.
    expect(c.services.sandbox.profiles).toEqual(['build']);
  }, 180_000);

  it.each(Object.keys(REQUIRED))(
    'refuses to resolve without %s, naming it (no default secret)',
    (name) => {
      const env: NodeJS.ProcessEnv = { ...REQUIRED };
      delete env[name];
      let message = '';
      try {
        run(['compose.yaml'], env);
      } catch (err) {
        message = String((err as { stderr?: string }).stderr ?? err);
      }
      expect(message).toContain(name);
    },
    180_000,
  );

  it('has no secret default in either file', () => {
    for (const f of ['compose.yaml', 'compose.loopback.yaml']) {
      const text = readFileSync(join(DIR, f), 'utf8');
      expect([f, text.match(/\$\{MANGO_(DB_PASSWORD|S3_ACCESS_KEY|S3_SECRET_KEY)(:?-)[^}]*\}/g)]).toEqual([
        f,
        null,
      ]);
      expect([f, /mangosecretkey123|mangoaccess/.test(text)]).toEqual([f, false]);
    }
  });

  it('gives every long-running service a health check and every dependency a condition', () => {
    const c = config(['compose.yaml']);
    const jobs = ['migrate', 'temporal-schema', 'temporal-namespace'];
    for (const [name, s] of Object.entries<any>(c.services)) {
      if (name === 'sandbox') continue; // build-only
      if (!jobs.includes(name)) expect([name, s.healthcheck?.test?.length > 0]).toEqual([name, true]);
      for (const [dep, d] of Object.entries<any>(s.depends_on ?? {}))
        expect([name, dep, d.condition]).toEqual([
          name,
          dep,
          jobs.includes(dep) ? 'service_completed_successfully' : 'service_healthy',
        ]);
    }
    // Everything but PostgreSQL, versitygw and the build-only service waits for something.
    const waits = Object.entries<any>(c.services)
      .filter(([, s]) => s.depends_on)
      .map(([n]) => n)
      .sort();
    expect(waits).toEqual([
      'api',
      'files',
      'ingress',
      'migrate',
      'orchestrator',
      'supervisor',
      'temporal',
      'temporal-namespace',
      'temporal-schema',
    ]);
  }, 180_000);

  it("runs Temporal's server on the stack's PostgreSQL (schema job first, then the namespace), not the SQLite dev server", () => {
    const c = config(['compose.yaml']);
    expect(c.services.temporal.environment).toMatchObject({
      DB: 'postgres12',
      POSTGRES_SEEDS: 'postgres',
      POSTGRES_PWD: REQUIRED.MANGO_DB_PASSWORD,
      DBNAME: 'temporal',
      VISIBILITY_DBNAME: 'temporal_visibility',
    });
    expect(JSON.stringify(c.services.temporal)).not.toMatch(/start-dev|sqlite|db-filename/);
    expect(c.services.temporal.depends_on['temporal-schema'].condition).toBe(
      'service_completed_successfully',
    );
    expect(c.services.orchestrator.depends_on['temporal-namespace'].condition).toBe(
      'service_completed_successfully',
    );
    expect(c.services['temporal-schema'].command.join(' ')).toContain('update-schema');
  }, 180_000);

  it('runs the Mango processes on a read-only root with /tmp their only writable place, without capabilities', () => {
    const c = config(['compose.yaml']);
    for (const s of MANGO) {
      expect([s, c.services[s].read_only]).toEqual([s, true]);
      expect([s, c.services[s].tmpfs]).toEqual([s, ['/tmp:exec']]);
      expect([s, c.services[s].cap_drop]).toEqual([s, ['ALL']]);
    }
  }, 180_000);

  it('loopback override: every service on the host network on 127.0.0.1, nothing published', () => {
    const c = config(['compose.yaml', 'compose.loopback.yaml'], {
      MANGO_PORT: '41000',
      MANGO_COMPOSE_API_PORT: '41001',
      MANGO_PUBLIC_BASE_URL: 'http://127.0.0.1:41000',
    });
    const started = Object.entries<any>(c.services).filter(
      ([, s]) => !s.profiles?.includes('published-ingress') && !s.profiles?.includes('build'),
    );
    expect(started.map(([n]) => n).sort()).toEqual([
      'api',
      'files',
      'ingress-loopback',
      'migrate',
      'orchestrator',
      'postgres',
      's3',
      'supervisor',
      'temporal',
      'temporal-namespace',
      'temporal-schema',
    ]);
    for (const [name, s] of started) {
      expect([name, s.network_mode]).toEqual([name, 'host']);
      expect([name, s.ports]).toEqual([name, undefined]);
    }
    expect(c.services.ingress.profiles).toEqual(['published-ingress']);
    expect(c.services.api.environment).toMatchObject({
      MANGO_API_HOST: '127.0.0.1',
      MANGO_API_PORT: '41001',
    });
    expect(c.services.supervisor.environment.MANGO_BASE_URL).toBe('http://127.0.0.1:41000');
    expect(c.services['ingress-loopback'].command.join(' ')).toContain('listen 127.0.0.1:41000;');
    expect(c.services.temporal.environment).toMatchObject({
      BIND_ON_IP: '127.0.0.1',
      POSTGRES_SEEDS: '127.0.0.1',
    });
    expect(c.services['temporal-schema'].environment.SQL_HOST).toBe('127.0.0.1');
    // Both of Temporal's stores on the stack's PostgreSQL port (the template reads the visibility port apart).
    expect(c.services.temporal.environment.VISIBILITY_DB_PORT).toBe(c.services.temporal.environment.DB_PORT);
    // Only loopback addresses anywhere in the resolved stack (the default stack's service names too).
    expect(JSON.stringify(c)).not.toMatch(/0\.0\.0\.0|\b(10|192\.168|172\.(1[6-9]|2\d|3[01]))\.\d+\.\d+/);
    expect(JSON.stringify(c.services.orchestrator.environment)).not.toMatch(/\/\/(s3|postgres|temporal):/);
  }, 180_000);
});
