import { ConfigError, loadConfig } from '@mango/platform-config';
import { DEFAULT_FAIR_USE_SETTINGS, fairUseSettingsFrom, withRequestRateEnv } from './fair-use.settings';

class Base {}
class Env extends withRequestRateEnv(Base) {}

describe('fair-use settings from the environment', () => {
  it('defaults to the documented generous limits, on', () => {
    const s = fairUseSettingsFrom(loadConfig(Env, {}));
    expect(s).toEqual({ ...DEFAULT_FAIR_USE_SETTINGS, workspaceStreams: null, credentialStreams: null });
  });

  it('reads every variable, fractional rates included, and MANGO_FAIR_USE=off', () => {
    const env = loadConfig(Env, {
      MANGO_FAIR_USE: 'off',
      MANGO_RATE_LIMIT_WORKSPACE_RPS: '0.5',
      MANGO_RATE_LIMIT_WORKSPACE_BURST: '10',
      MANGO_RATE_LIMIT_KEY_RPS: '2',
      MANGO_RATE_LIMIT_KEY_BURST: '3',
      MANGO_RATE_LIMIT_WORK_TOKEN_RPS: '4',
      MANGO_RATE_LIMIT_WORK_TOKEN_BURST: '5',
    });
    expect(fairUseSettingsFrom(env, { workspace: 7, credential: 6 })).toEqual({
      enabled: false,
      workspaceRequests: { ratePerSecond: 0.5, burst: 10 },
      keyRequests: { ratePerSecond: 2, burst: 3 },
      workTokenRequests: { ratePerSecond: 4, burst: 5 },
      workspaceStreams: 7,
      credentialStreams: 6,
    });
  });

  it('names every bad variable at once', () => {
    let err: unknown;
    try {
      loadConfig(Env, {
        MANGO_FAIR_USE: 'maybe',
        MANGO_RATE_LIMIT_KEY_RPS: '0',
        MANGO_RATE_LIMIT_KEY_BURST: 'x',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    for (const name of ['MANGO_FAIR_USE', 'MANGO_RATE_LIMIT_KEY_RPS', 'MANGO_RATE_LIMIT_KEY_BURST'])
      expect(problems).toContain(name);
  });
});
