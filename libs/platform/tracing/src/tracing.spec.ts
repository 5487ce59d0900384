import { ConfigError, loadConfig } from '@mango/platform-config';
import { currentTraceparent, initTracing, inSpan, ObservabilityEnv, withTraceparent } from './tracing';

describe('tracing without an OTLP endpoint', () => {
  it('is off: nothing is installed, spans are no-ops and no trace context is stored', async () => {
    const tracing = initTracing('api', loadConfig(ObservabilityEnv, {}));
    expect(tracing.enabled).toBe(false);
    await inSpan('x', {}, async () => {
      expect(currentTraceparent()).toBeUndefined();
    });
    // Even inside an inbound context a no-op API propagates nothing it did not sample itself.
    expect(withTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', () => 7)).toBe(7);
    await tracing.shutdown();
  });

  it('inSpan rethrows what its function throws', async () => {
    await expect(inSpan('x', {}, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://x' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'],
    [{ OTEL_BSP_SCHEDULE_DELAY: '0' }, 'OTEL_BSP_SCHEDULE_DELAY'],
    [{ MANGO_METRICS_PORT: 'x' }, 'MANGO_METRICS_PORT'],
  ])('refuses %j', (raw, name) => {
    expect(() => loadConfig(ObservabilityEnv, raw)).toThrow(ConfigError);
    expect(() => loadConfig(ObservabilityEnv, raw)).toThrow(name);
  });
});
