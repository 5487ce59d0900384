import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'yaml';

/**
 * The Compose files as docker-compose (Debian's 1.29) resolves them: registry images by default (each one a
 * variable), and the loopback override that the CI test brings up — every service that starts on the host
 * network, nothing published, the published ingress out of the default profile.
 */
const DIR = join(__dirname, '../compose');
const config = (files: string[], env: NodeJS.ProcessEnv = {}) =>
  parse(
    execFileSync('docker-compose', [...files.flatMap((f) => ['-f', join(DIR, f)]), 'config'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    }),
  );

describe('Compose files (docker-compose config)', () => {
  it('default to the registry images, each overridable by its variable', () => {
    const c = config(['compose.yaml']);
    expect(c.services.postgres.image).toBe('postgres:15');
    expect(c.services.temporal.image).toBe('temporalio/temporal:1.5.1');
    expect(c.services.s3.image).toBe('versity/versitygw:v1.7.0');
    expect(c.services.ingress.image).toBe('nginx:1.27');
    expect(c.services.api.image).toBe('mango-self-hosted-worker:local');
    expect(c.services.supervisor.environment.MANGO_BASE_URL).toBe('http://ingress:8080');
    const local = config(['compose.yaml'], {
      MANGO_POSTGRES_IMAGE: 'pg:x',
      MANGO_TEMPORAL_IMAGE: 't:x',
      MANGO_S3_IMAGE: 's:x',
      MANGO_NGINX_IMAGE: 'n:x',
      MANGO_IMAGE: 'm:x',
    });
    expect(
      ['postgres', 'temporal', 's3', 'ingress', 'api', 'migrate', 'supervisor'].map(
        (s) => local.services[s].image,
      ),
    ).toEqual(['pg:x', 't:x', 's:x', 'n:x', 'm:x', 'm:x', 'm:x']);
    expect(local.services.supervisor.environment.MANGO_WORKER_IMAGE).toBe('m:x');
  }, 180_000);

  it('loopback override: every service on the host network on 127.0.0.1, nothing published', () => {
    const c = config(['compose.yaml', 'compose.loopback.yaml'], {
      MANGO_PORT: '41000',
      MANGO_COMPOSE_API_PORT: '41001',
    });
    const started = Object.entries<any>(c.services).filter(
      ([, s]) => !s.profiles?.includes('published-ingress'),
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
    expect(c.services.temporal.command).toEqual(expect.arrayContaining(['--ip', '127.0.0.1']));
    // Only loopback addresses anywhere in the resolved stack.
    expect(JSON.stringify(c)).not.toMatch(/0\.0\.0\.0|\b(10|192\.168|172\.(1[6-9]|2\d|3[01]))\.\d+\.\d+/);
  }, 180_000);
});
