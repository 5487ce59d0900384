import { logged, startApp } from '@mango/testing';

const env = {
  MANGO_ENVIRONMENT_KEY: `mango_ek_${'a'.repeat(43)}`,
  MANGO_ENVIRONMENT_ID: 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
  MANGO_BASE_URL: 'http://127.0.0.1:9',
  MANGO_LOG_LEVEL: 'info',
};

describe('apps/supervisor (mango-worker docker) against the real dockerd', () => {
  it('connects to the Docker engine, reports its version, and exits 0 on SIGTERM', async () => {
    const app = await startApp(
      'apps/supervisor/src/main.ts',
      { ...env, DOCKER_HOST: process.env.DOCKER_HOST! },
      logged('docker engine connected'),
    );
    const line = app
      .logs()
      .split('\n')
      .find((l) => l.includes('docker engine connected'))!;
    expect(JSON.parse(line)).toMatchObject({
      service: 'supervisor',
      docker_version: expect.stringMatching(/^\d+\.\d+/),
    });
    expect(await app.stop('SIGTERM')).toBe(0);
    expect(app.logs()).not.toContain(env.MANGO_ENVIRONMENT_KEY);
  });

  it('refuses to start without a reachable engine', async () => {
    await expect(
      startApp(
        'apps/supervisor/src/main.ts',
        { ...env, DOCKER_HOST: 'unix:///nonexistent.sock' },
        async () => false,
        90_000,
      ),
    ).rejects.toThrow(/exited with 1/);
  }, 120_000);

  it('names every bad variable in one error', async () => {
    await expect(
      startApp(
        'apps/supervisor/src/main.ts',
        { MANGO_ENVIRONMENT_KEY: 'mango_ak_x', MANGO_BASE_URL: 'nope' },
        async () => false,
        90_000,
      ),
    ).rejects.toThrow(/MANGO_ENVIRONMENT_KEY[\s\S]*MANGO_ENVIRONMENT_ID[\s\S]*MANGO_BASE_URL/);
  }, 120_000);
});
