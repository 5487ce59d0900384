/**
 * How a process reaches Temporal (docs/operator-guide.md "Temporal connection"): the address and namespace,
 * TLS with an optional server CA and name override, an mTLS client certificate, and an API key (Temporal
 * Cloud). The variables, as every app's env DTO reads them through `withTemporalEnv`.
 */
export interface TemporalSettings {
  MANGO_TEMPORAL_ADDRESS?: string;
  MANGO_TEMPORAL_NAMESPACE: string;
  /** `on`/`off`; unset: on as soon as a CA, client certificate, server name or API key is given. */
  MANGO_TEMPORAL_TLS?: 'on' | 'off';
  MANGO_TEMPORAL_TLS_CA_FILE?: string;
  MANGO_TEMPORAL_TLS_CERT_FILE?: string;
  MANGO_TEMPORAL_TLS_KEY_FILE?: string;
  MANGO_TEMPORAL_TLS_SERVER_NAME?: string;
  MANGO_TEMPORAL_API_KEY?: string;
  MANGO_TEMPORAL_API_KEY_FILE?: string;
  /** Seconds between checks of the certificate and API key files for a rotation; 0: never. */
  MANGO_TEMPORAL_CREDENTIALS_CHECK_SECONDS: number;
}

/** The settings that only mean something with TLS. */
const TLS_ONLY = [
  'MANGO_TEMPORAL_TLS_CA_FILE',
  'MANGO_TEMPORAL_TLS_CERT_FILE',
  'MANGO_TEMPORAL_TLS_KEY_FILE',
  'MANGO_TEMPORAL_TLS_SERVER_NAME',
] as const;

const given = (v: string | undefined): v is string => v !== undefined && v !== '';

/** Whether the connection uses TLS: said by MANGO_TEMPORAL_TLS, else implied by any TLS setting or an API key. */
export function temporalUsesTls(s: TemporalSettings): boolean {
  if (s.MANGO_TEMPORAL_TLS) return s.MANGO_TEMPORAL_TLS === 'on';
  return (
    TLS_ONLY.some((k) => given(s[k])) ||
    given(s.MANGO_TEMPORAL_API_KEY) ||
    given(s.MANGO_TEMPORAL_API_KEY_FILE)
  );
}

/**
 * The contradictions between the Temporal settings, each a sentence naming the variables (never a value):
 * a certificate without its key or the reverse, two API keys, TLS settings or an API key (a bearer
 * credential) with `MANGO_TEMPORAL_TLS=off`, and connection settings without an address.
 */
export function temporalSettingsProblems(s: TemporalSettings): string[] {
  const problems: string[] = [];
  if (given(s.MANGO_TEMPORAL_TLS_CERT_FILE) !== given(s.MANGO_TEMPORAL_TLS_KEY_FILE))
    problems.push(
      'MANGO_TEMPORAL_TLS_CERT_FILE and MANGO_TEMPORAL_TLS_KEY_FILE go together: the client certificate needs its private key and the key its certificate',
    );
  if (given(s.MANGO_TEMPORAL_API_KEY) && given(s.MANGO_TEMPORAL_API_KEY_FILE))
    problems.push('MANGO_TEMPORAL_API_KEY and MANGO_TEMPORAL_API_KEY_FILE: set one, not both');
  if (s.MANGO_TEMPORAL_TLS === 'off') {
    for (const k of TLS_ONLY) if (given(s[k])) problems.push(`${k} needs TLS, but MANGO_TEMPORAL_TLS is off`);
    if (given(s.MANGO_TEMPORAL_API_KEY) || given(s.MANGO_TEMPORAL_API_KEY_FILE))
      problems.push(
        'a Temporal API key would be sent in plaintext: MANGO_TEMPORAL_TLS is off (turn TLS on or remove the key)',
      );
  }
  if (!given(s.MANGO_TEMPORAL_ADDRESS)) {
    const orphans = [
      'MANGO_TEMPORAL_TLS',
      ...TLS_ONLY,
      'MANGO_TEMPORAL_API_KEY',
      'MANGO_TEMPORAL_API_KEY_FILE',
    ].filter((k) => given(s[k as keyof TemporalSettings] as string | undefined));
    if (orphans.length)
      problems.push(`${orphans.join(', ')} without MANGO_TEMPORAL_ADDRESS: set the address or remove them`);
  }
  return problems;
}

/** What a log line may say about the connection: where, and which protections, never a credential. */
export function describeTemporalConnection(s: TemporalSettings) {
  return {
    address: s.MANGO_TEMPORAL_ADDRESS,
    namespace: s.MANGO_TEMPORAL_NAMESPACE,
    tls: temporalUsesTls(s),
    client_certificate: given(s.MANGO_TEMPORAL_TLS_CERT_FILE),
    api_key: given(s.MANGO_TEMPORAL_API_KEY) || given(s.MANGO_TEMPORAL_API_KEY_FILE),
  };
}
