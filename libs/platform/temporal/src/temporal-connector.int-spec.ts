import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { loadConfig, ConfigError } from '@mango/platform-config';
import { MtlsProxy, testCertificates, TestCertificates, TestCa } from '@mango/testing';
import { TemporalConnector, TemporalConnectorHooks } from './temporal-connector';
import { withTemporalEnv } from './temporal-env';

/**
 * The connector against a Temporal that requires a client certificate: the dev server (plaintext) behind
 * a TLS terminator that verifies client certificates against the test's CA (MtlsProxy, ALPN h2).
 */
class Env extends withTemporalEnv(class {}, { addressRequired: true }) {}

describe('TemporalConnector through a TLS proxy that requires a client certificate', () => {
  let certs: TestCertificates;
  let ca: TestCa;
  let proxy: MtlsProxy;
  let address: string;
  const events: string[] = [];
  const hooks: TemporalConnectorHooks = {
    certificatesRotated: () => events.push('certificates'),
    checkFailed: (p) => events.push(`failed:${p.join(';')}`),
    apiKeyRotated: () => events.push('api_key'),
  };

  beforeAll(async () => {
    certs = testCertificates();
    ca = certs.ca('mango-test-ca');
    const server = ca.server('temporal');
    proxy = new MtlsProxy({ target: process.env.MANGO_TEMPORAL_ADDRESS!, ca: ca.cert, ...server });
    address = await proxy.listen();
  });

  afterAll(async () => {
    await proxy.close();
    certs.remove();
  });

  const settings = (env: Record<string, string>) =>
    loadConfig(Env, {
      MANGO_TEMPORAL_ADDRESS: address,
      MANGO_TEMPORAL_CREDENTIALS_CHECK_SECONDS: '0',
      ...env,
    });

  it('a client (grpc-js) and a native (Rust core) connection with the client certificate reach Temporal', async () => {
    const client = ca.client('mango-orchestrator');
    const connector = TemporalConnector.fromSettings(
      settings({
        MANGO_TEMPORAL_TLS_CA_FILE: ca.certFile,
        MANGO_TEMPORAL_TLS_CERT_FILE: client.certFile,
        MANGO_TEMPORAL_TLS_KEY_FILE: client.keyFile,
      }),
      hooks,
    );
    const connection = await connector.connectClient();
    try {
      const info = await connection.workflowService.getSystemInfo({});
      expect(info.serverVersion).toBeTruthy();
    } finally {
      await connection.close();
    }
    const native = await connector.connectNative(NativeConnection);
    connector.release(native);
    await native.close();
    expect(proxy.accepted.filter((cn) => cn === 'mango-orchestrator').length).toBeGreaterThanOrEqual(2);
  });

  it('a connection without a client certificate is refused by the server', async () => {
    const refusedBefore = proxy.refused.length;
    const connector = TemporalConnector.fromSettings(
      settings({ MANGO_TEMPORAL_TLS_CA_FILE: ca.certFile }),
      hooks,
    );
    await expect(connectAndCall(connector)).rejects.toThrow();
    await expect(connector.connectNative(NativeConnection)).rejects.toThrow();
    expect(proxy.refused.length).toBeGreaterThan(refusedBefore);
    expect(proxy.refused.slice(refusedBefore)).toContain('ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE');
  });

  it('a client certificate from another CA is refused by the server', async () => {
    const other = certs.ca('other-ca').client('intruder');
    const refusedBefore = proxy.refused.length;
    const connector = TemporalConnector.fromSettings(
      settings({
        MANGO_TEMPORAL_TLS_CA_FILE: ca.certFile,
        MANGO_TEMPORAL_TLS_CERT_FILE: other.certFile,
        MANGO_TEMPORAL_TLS_KEY_FILE: other.keyFile,
      }),
      hooks,
    );
    await expect(connectAndCall(connector)).rejects.toThrow();
    await expect(connector.connectNative(NativeConnection)).rejects.toThrow();
    expect(proxy.refused.length).toBeGreaterThan(refusedBefore);
    expect(proxy.accepted).not.toContain('intruder');
  });

  it('a server certificate the CA did not sign is refused by the client', async () => {
    const client = ca.client('mango-api');
    const stranger = certs.ca('stranger-ca');
    const connector = TemporalConnector.fromSettings(
      settings({
        MANGO_TEMPORAL_TLS_CA_FILE: stranger.certFile,
        MANGO_TEMPORAL_TLS_CERT_FILE: client.certFile,
        MANGO_TEMPORAL_TLS_KEY_FILE: client.keyFile,
      }),
      hooks,
    );
    await expect(connectAndCall(connector)).rejects.toThrow();
  });

  it('start-up lists every unreadable or mismatched file at once, naming variables and paths only', () => {
    const a = ca.client('a');
    const b = ca.client('b');
    let err: unknown;
    try {
      settings({
        MANGO_TEMPORAL_TLS_CA_FILE: join(certs.dir, 'missing.crt'),
        MANGO_TEMPORAL_TLS_CERT_FILE: a.certFile,
        MANGO_TEMPORAL_TLS_KEY_FILE: b.keyFile,
        MANGO_TEMPORAL_API_KEY_FILE: join(certs.dir, 'missing.key'),
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      expect.stringMatching(/^MANGO_TEMPORAL_TLS_CA_FILE: cannot read .*missing\.crt \(ENOENT\)$/),
      expect.stringMatching(/^MANGO_TEMPORAL_API_KEY_FILE: cannot read/),
      'MANGO_TEMPORAL_TLS_KEY_FILE is not the private key of MANGO_TEMPORAL_TLS_CERT_FILE',
    ]);
    expect((err as ConfigError).message).not.toContain(b.key.toString().split('\n')[1]);
  });

  it('a rotated API key file is applied to open connections; rotated certificates are reported once, a half-written pair not', async () => {
    const client = ca.client('rotating');
    const dir = certs.dir;
    const certFile = join(dir, 'live.crt');
    const keyFile = join(dir, 'live.key');
    const apiKeyFile = join(dir, 'live-api-key');
    copyFileSync(client.certFile, certFile);
    copyFileSync(client.keyFile, keyFile);
    writeFileSync(apiKeyFile, 'first-key\n');
    const connector = TemporalConnector.fromSettings(
      settings({
        MANGO_TEMPORAL_TLS_CA_FILE: ca.certFile,
        MANGO_TEMPORAL_TLS_CERT_FILE: certFile,
        MANGO_TEMPORAL_TLS_KEY_FILE: keyFile,
        MANGO_TEMPORAL_API_KEY_FILE: apiKeyFile,
      }),
      hooks,
    );
    const keys: string[] = [];
    const native = { setApiKey: async (k: string) => void keys.push(k) };
    await connector.connectNative({ connect: async () => native });
    const options = connector.clientOptions();
    const apiKey = options.apiKey as () => string;
    expect(apiKey()).toBe('first-key');
    events.length = 0;

    expect(await connector.check()).toBe('unchanged');
    writeFileSync(apiKeyFile, 'second-key\n');
    expect(await connector.check()).toBe('api_key_rotated');
    expect(apiKey()).toBe('second-key');
    expect(keys).toEqual(['second-key']);

    // Mid-rotation: the new certificate is written, its key not yet: nothing changes.
    const next = ca.client('rotated');
    copyFileSync(next.certFile, certFile);
    expect(await connector.check()).toBe('unreadable');
    copyFileSync(next.keyFile, keyFile);
    expect(await connector.check()).toBe('certificates_rotated');
    expect(events).toEqual([
      'api_key',
      'failed:MANGO_TEMPORAL_TLS_KEY_FILE is not the private key of MANGO_TEMPORAL_TLS_CERT_FILE',
      'certificates',
    ]);
    expect(events.join('\n')).not.toContain('second-key');
  });
});

async function connectAndCall(connector: TemporalConnector): Promise<void> {
  const connection = await connector.connectClient();
  try {
    await connection.workflowService.getSystemInfo({});
  } finally {
    await connection.close();
  }
}
