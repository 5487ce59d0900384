import { ConfigError, loadConfig } from '@mango/platform-config';
import { MangoMetrics, serveMetrics } from './metrics';
import { MetricsEnv } from './metrics.env';

describe('MetricsEnv', () => {
  it.each([
    [{}, { MANGO_METRICS_HOST: '127.0.0.1' }],
    [
      { MANGO_METRICS_PORT: '9464', MANGO_METRICS_HOST: '0.0.0.0' },
      { MANGO_METRICS_PORT: 9464, MANGO_METRICS_HOST: '0.0.0.0' },
    ],
    [{ MANGO_METRICS_PORT: '0' }, { MANGO_METRICS_PORT: 0 }],
  ])('%j → %j', (raw, expected) => {
    const env = loadConfig(MetricsEnv, raw);
    expect(env).toMatchObject(expected);
    if (!('MANGO_METRICS_PORT' in raw)) expect(env.MANGO_METRICS_PORT).toBeUndefined();
  });

  it.each([{ MANGO_METRICS_PORT: 'x' }, { MANGO_METRICS_PORT: '70000' }, { MANGO_METRICS_HOST: '' }])(
    'refuses %j naming the variable',
    (raw) => {
      expect(() => loadConfig(MetricsEnv, raw)).toThrow(ConfigError);
      expect(() => loadConfig(MetricsEnv, raw)).toThrow(Object.keys(raw)[0]!);
    },
  );

  it('without a port no listener is started', async () => {
    const logged: string[] = [];
    const served = await serveMetrics(new MangoMetrics('files'), loadConfig(MetricsEnv, {}), {
      info: (_o, msg) => logged.push(msg),
    });
    expect(served).toBeUndefined();
    expect(logged).toEqual([]);
  });
});
