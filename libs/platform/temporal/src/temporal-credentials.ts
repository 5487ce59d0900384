import { createHash, createPrivateKey, KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { temporalSettingsProblems, temporalUsesTls, TemporalSettings } from './temporal-settings';

/** What the Temporal SDKs' connection options need, read from the settings' files. */
export interface TemporalCredentials {
  /** `false`: plaintext. */
  tls: TLSConfig | false;
  apiKey?: string;
  /** A digest of the certificate files' bytes (CA, client certificate, key): changes when one is rotated. */
  certificatesDigest: string;
}

export type CredentialsRead =
  { ok: true; credentials: TemporalCredentials } | { ok: false; problems: string[] };

type ReadFile = (path: string) => Buffer;

/**
 * Reads and checks the files the Temporal settings name: each readable, the CA and client certificate
 * PEM certificates, the key a PEM private key that matches the certificate, the API key file not empty.
 * Every problem is listed (naming the variable and the path, never the contents).
 */
export function readTemporalCredentials(
  s: TemporalSettings,
  read: ReadFile = (p) => readFileSync(p),
): CredentialsRead {
  const problems: string[] = [];
  const file = (name: keyof TemporalSettings): Buffer | undefined => {
    const path = s[name] as string | undefined;
    if (!path) return undefined;
    try {
      return read(path);
    } catch (e) {
      problems.push(`${name}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
      return undefined;
    }
  };
  const ca = file('MANGO_TEMPORAL_TLS_CA_FILE');
  const crt = file('MANGO_TEMPORAL_TLS_CERT_FILE');
  const key = file('MANGO_TEMPORAL_TLS_KEY_FILE');
  const apiKeyFile = file('MANGO_TEMPORAL_API_KEY_FILE');
  if (ca && !certificate(ca)) problems.push('MANGO_TEMPORAL_TLS_CA_FILE: not a PEM certificate');
  const cert = crt ? certificate(crt) : undefined;
  if (crt && !cert) problems.push('MANGO_TEMPORAL_TLS_CERT_FILE: not a PEM certificate');
  const privateKey = key ? parsePrivateKey(key) : undefined;
  if (key && !privateKey) problems.push('MANGO_TEMPORAL_TLS_KEY_FILE: not a PEM private key');
  if (cert && privateKey && !cert.checkPrivateKey(privateKey))
    problems.push('MANGO_TEMPORAL_TLS_KEY_FILE is not the private key of MANGO_TEMPORAL_TLS_CERT_FILE');
  const apiKey = apiKeyFile ? apiKeyFile.toString('utf8').trim() : s.MANGO_TEMPORAL_API_KEY || undefined;
  if (apiKeyFile && !apiKey) problems.push('MANGO_TEMPORAL_API_KEY_FILE is empty');
  if (problems.length) return { ok: false, problems };
  const tls: TLSConfig | false = temporalUsesTls(s)
    ? {
        ...(ca ? { serverRootCACertificate: ca } : {}),
        ...(crt && key ? { clientCertPair: { crt, key } } : {}),
        ...(s.MANGO_TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: s.MANGO_TEMPORAL_TLS_SERVER_NAME } : {}),
      }
    : false;
  const digest = createHash('sha256');
  for (const b of [ca, crt, key]) digest.update(b ?? Buffer.alloc(0)).update('\0');
  return {
    ok: true,
    credentials: { tls, ...(apiKey ? { apiKey } : {}), certificatesDigest: digest.digest('hex') },
  };
}

/**
 * The rule `withTemporalEnv` adds to an env DTO: the contradictions between the settings, then (when
 * there are none) the problems of the files they name, all listed by `loadConfig` with the others.
 */
export function temporalConfigProblems(s: TemporalSettings): string[] {
  const contradictions = temporalSettingsProblems(s);
  if (contradictions.length) return contradictions;
  const read = readTemporalCredentials(s);
  return read.ok ? [] : read.problems;
}

function certificate(pem: Buffer): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

function parsePrivateKey(pem: Buffer): KeyObject | undefined {
  try {
    return createPrivateKey(pem);
  } catch {
    return undefined;
  }
}
