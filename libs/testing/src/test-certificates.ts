import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate and its key, as PEM files on disk (and their bytes). */
export interface PemPair {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

/** A test certificate authority: it signs server and client certificates (OpenSSL's CLI, EC P-256 keys). */
export interface TestCa extends PemPair {
  /** A server certificate for `localhost` and `127.0.0.1`, or the names given. */
  server(name: string, altNames?: string[]): PemPair;
  client(commonName: string): PemPair;
}

export interface TestCertificates {
  dir: string;
  /** A new CA in the same directory. */
  ca(name: string): TestCa;
  remove(): void;
}

/**
 * Certificates made by the test, with the `openssl` CLI (no library in between): CAs, server certificates
 * with subjectAltNames, client certificates (clientAuth). Everything lives in one temporary directory.
 */
export function testCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'mango-certs-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const pair = (certFile: string, keyFile: string): PemPair => ({
    certFile,
    keyFile,
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
  });
  const newKey = (file: string) =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file);
  return {
    dir,
    remove: () => rmSync(dir, { recursive: true, force: true }),
    ca(name) {
      const base = join(dir, name);
      newKey(`${base}.key`);
      openssl(
        'req',
        '-x509',
        '-new',
        '-key',
        `${base}.key`,
        '-subj',
        `/CN=${name}`,
        '-days',
        '2',
        '-out',
        `${base}.crt`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      );
      const sign = (leaf: string, subject: string, ext: string): PemPair => {
        const file = join(dir, leaf);
        newKey(`${file}.key`);
        openssl('req', '-new', '-key', `${file}.key`, '-subj', subject, '-out', `${file}.csr`);
        writeFileSync(`${file}.ext`, ext);
        openssl(
          'x509',
          '-req',
          '-in',
          `${file}.csr`,
          '-CA',
          `${base}.crt`,
          '-CAkey',
          `${base}.key`,
          '-CAcreateserial',
          '-days',
          '2',
          '-extfile',
          `${file}.ext`,
          '-out',
          `${file}.crt`,
        );
        return pair(`${file}.crt`, `${file}.key`);
      };
      return {
        ...pair(`${base}.crt`, `${base}.key`),
        server: (leaf, altNames = ['DNS:localhost', 'IP:127.0.0.1']) =>
          sign(
            `${name}-${leaf}`,
            `/CN=${leaf}`,
            `subjectAltName=${altNames.join(',')}\nextendedKeyUsage=serverAuth\n`,
          ),
        client: (cn) => sign(`${name}-${cn}`, `/CN=${cn}`, 'extendedKeyUsage=clientAuth\n'),
      };
    },
  };
}
