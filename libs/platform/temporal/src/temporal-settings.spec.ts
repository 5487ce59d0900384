import {
  describeTemporalConnection,
  temporalSettingsProblems,
  temporalUsesTls,
  TemporalSettings,
} from './temporal-settings';

const base: TemporalSettings = {
  MANGO_TEMPORAL_ADDRESS: 'temporal:7233',
  MANGO_TEMPORAL_NAMESPACE: 'default',
  MANGO_TEMPORAL_CREDENTIALS_CHECK_SECONDS: 30,
};
const s = (over: Partial<TemporalSettings>): TemporalSettings => ({ ...base, ...over });

describe('Temporal settings', () => {
  it.each<[string, Partial<TemporalSettings>, boolean]>([
    ['nothing: plaintext', {}, false],
    ['a CA file implies TLS', { MANGO_TEMPORAL_TLS_CA_FILE: '/ca' }, true],
    [
      'a client certificate implies TLS',
      { MANGO_TEMPORAL_TLS_CERT_FILE: '/c', MANGO_TEMPORAL_TLS_KEY_FILE: '/k' },
      true,
    ],
    ['an API key implies TLS (Temporal Cloud)', { MANGO_TEMPORAL_API_KEY: 'k' }, true],
    ['an API key file implies TLS', { MANGO_TEMPORAL_API_KEY_FILE: '/k' }, true],
    ['a server name implies TLS', { MANGO_TEMPORAL_TLS_SERVER_NAME: 'x' }, true],
    ['TLS on with the system roots', { MANGO_TEMPORAL_TLS: 'on' }, true],
    ['TLS off', { MANGO_TEMPORAL_TLS: 'off' }, false],
  ])('%s', (_name, over, tls) => {
    expect(temporalUsesTls(s(over))).toBe(tls);
  });

  it('accepts consistent settings', () => {
    expect(temporalSettingsProblems(s({}))).toEqual([]);
    expect(
      temporalSettingsProblems(
        s({
          MANGO_TEMPORAL_TLS: 'on',
          MANGO_TEMPORAL_TLS_CA_FILE: '/ca',
          MANGO_TEMPORAL_TLS_CERT_FILE: '/c',
          MANGO_TEMPORAL_TLS_KEY_FILE: '/k',
          MANGO_TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
          MANGO_TEMPORAL_API_KEY_FILE: '/key',
        }),
      ),
    ).toEqual([]);
  });

  it('a client certificate needs its key, and the key its certificate', () => {
    expect(temporalSettingsProblems(s({ MANGO_TEMPORAL_TLS_CERT_FILE: '/c' }))).toEqual([
      expect.stringMatching(/MANGO_TEMPORAL_TLS_CERT_FILE and MANGO_TEMPORAL_TLS_KEY_FILE go together/),
    ]);
    expect(temporalSettingsProblems(s({ MANGO_TEMPORAL_TLS_KEY_FILE: '/k' }))).toHaveLength(1);
  });

  it('an API key is never sent over plaintext, and TLS settings with TLS off are contradictions', () => {
    const problems = temporalSettingsProblems(
      s({
        MANGO_TEMPORAL_TLS: 'off',
        MANGO_TEMPORAL_API_KEY: 'secret-key-value',
        MANGO_TEMPORAL_TLS_CA_FILE: '/ca',
      }),
    );
    expect(problems).toEqual([
      'MANGO_TEMPORAL_TLS_CA_FILE needs TLS, but MANGO_TEMPORAL_TLS is off',
      expect.stringMatching(/API key would be sent in plaintext/),
    ]);
    expect(problems.join('\n')).not.toContain('secret-key-value');
  });

  it('lists every contradiction at once', () => {
    expect(
      temporalSettingsProblems(
        s({
          MANGO_TEMPORAL_TLS: 'off',
          MANGO_TEMPORAL_TLS_CERT_FILE: '/c',
          MANGO_TEMPORAL_API_KEY: 'k',
          MANGO_TEMPORAL_API_KEY_FILE: '/k',
        }),
      ),
    ).toHaveLength(4);
  });

  it('connection settings without an address are named', () => {
    expect(
      temporalSettingsProblems(s({ MANGO_TEMPORAL_ADDRESS: undefined, MANGO_TEMPORAL_API_KEY: 'k' })),
    ).toEqual(['MANGO_TEMPORAL_API_KEY without MANGO_TEMPORAL_ADDRESS: set the address or remove them']);
    expect(temporalSettingsProblems(s({ MANGO_TEMPORAL_ADDRESS: undefined }))).toEqual([]);
  });

  it('the description for logs says which protections are on, never a key', () => {
    const d = describeTemporalConnection(s({ MANGO_TEMPORAL_API_KEY: 'secret-key-value' }));
    expect(d).toEqual({
      address: 'temporal:7233',
      namespace: 'default',
      tls: true,
      client_certificate: false,
      api_key: true,
    });
    expect(JSON.stringify(d)).not.toContain('secret-key-value');
  });
});
