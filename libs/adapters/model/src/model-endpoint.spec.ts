import { PUBLIC_MODEL_BASE_URL, resolveModelEndpoint } from './model-endpoint';

describe('resolveModelEndpoint', () => {
  it.each([
    [{}, false, PUBLIC_MODEL_BASE_URL, ''],
    [{ ANTHROPIC_API_KEY: 'k1' }, true, PUBLIC_MODEL_BASE_URL, 'k1'],
    [{ MANGO_MODEL_API_KEY: 'k2', ANTHROPIC_API_KEY: 'k1' }, true, PUBLIC_MODEL_BASE_URL, 'k2'],
    [{ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/a' }, true, 'http://127.0.0.1:9/a', ''],
    [
      {
        MANGO_MODEL_BASE_URL: 'http://127.0.0.1:8/m',
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/a',
        ANTHROPIC_API_KEY: 'k1',
      },
      true,
      'http://127.0.0.1:8/m',
      'k1',
    ],
    [
      { MANGO_MODEL_BASE_URL: '', ANTHROPIC_BASE_URL: '', MANGO_MODEL_API_KEY: '' },
      false,
      PUBLIC_MODEL_BASE_URL,
      '',
    ],
  ])('%j → usable %s at %s', (env, usable, baseUrl, key) => {
    const r = resolveModelEndpoint(env);
    expect(r.usable).toBe(usable);
    expect(r.baseUrl).toBe(baseUrl);
    if (r.usable) expect(r.apiKey).toBe(key);
    else expect(r.reason).toMatch(/MANGO_MODEL_API_KEY \(or ANTHROPIC_API_KEY\)/);
  });

  it('never puts the key in its description', () => {
    expect(resolveModelEndpoint({ ANTHROPIC_API_KEY: 'sk-secret' }).described).not.toContain('sk-secret');
  });
});
