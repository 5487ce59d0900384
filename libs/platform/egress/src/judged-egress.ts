import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { urlPort } from '@mango/domain-kernel';

/**
 * Why an address may not be reached on a port (loopback, private, link-local, metadata, a port the
 * allowlist does not name …), or null when it may. The port is the connection's (the URL's, else the
 * scheme's default).
 */
export type AddressJudge = (address: string, port?: number) => string | null;

/** Resolves a host name to every address (the system resolver by default; tests inject their own). */
export type Resolver = (host: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/** A refusal by the egress rule (the connection was never opened). */
export class EgressRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EgressRefusedError';
  }
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `net.connect` lookup that judges every address a name resolves to and hands over only judged ones:
 * the socket opens to exactly an address that passed, so a name that answers a public address to one
 * lookup and a private one to the next (DNS rebinding) cannot reach the private one.
 */
export function judgedLookup(judge: AddressJudge, resolve: Resolver = systemResolver, port?: number) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    resolve(hostname).then(
      (addresses) => {
        for (const a of addresses) {
          const reason = judge(a.address, port);
          if (reason) return callback(new EgressRefusedError(`${hostname} refused: ${reason}`), '');
        }
        const first = addresses[0];
        if (!first) return callback(new EgressRefusedError(`cannot resolve ${hostname}`), '');
        if (options.all) return callback(null, addresses);
        callback(null, first.address, first.family);
      },
      () => callback(new EgressRefusedError(`cannot resolve ${hostname}`), ''),
    );
  };
}

/**
 * Outbound HTTP under the egress rule: an undici dispatcher whose connections use `judgedLookup`, and a
 * `fetch` that never follows redirects silently (callers pass `redirect`). IP literals skip DNS, so they
 * are judged before the request.
 */
export class JudgedEgress {
  readonly dispatcher: Agent;

  constructor(
    private readonly judge: AddressJudge,
    private readonly resolve: Resolver = systemResolver,
    options: { keepAlive?: boolean } = {},
  ) {
    // One connector per destination port, so the lookup that judges the addresses knows the port too.
    const connectors = new Map<number, buildConnector.connector>();
    const connect: buildConnector.connector = (opts, callback) => {
      const port = urlPort({ port: String(opts.port ?? ''), protocol: opts.protocol });
      let connector = connectors.get(port);
      if (!connector)
        connectors.set(port, (connector = buildConnector({ lookup: judgedLookup(judge, resolve, port) })));
      return connector(opts, callback);
    };
    this.dispatcher = new Agent({
      connect,
      // pipelining 0: one request per connection, closed after it (undici's way to turn keep-alive off).
      ...(options.keepAlive === false ? { pipelining: 0 } : {}),
    });
  }

  /** Judges the URL's host up front (a clear error before any request), resolving names. */
  async check(url: URL): Promise<void> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = (await this.resolve(host)).map((a) => a.address);
      } catch {
        throw new EgressRefusedError(`cannot resolve ${host}`);
      }
    }
    for (const a of addresses) {
      const reason = this.judge(a, urlPort(url));
      if (reason) throw new EgressRefusedError(`${url.host} refused: ${reason}`);
    }
  }

  /** `fetch` through the judged dispatcher (the response type is the platform's `Response`). */
  fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input instanceof Request ? input.url : input));
    if (isIP(url.hostname.replace(/^\[|\]$/g, ''))) await this.check(url);
    return (await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: this.dispatcher,
    })) as unknown as Response;
  };
}

/** The refusal inside an error chain (fetch and SDKs wrap the lookup's error), if there is one. */
export function egressRefusalIn(err: unknown): EgressRefusedError | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++)
    if (e instanceof EgressRefusedError) return e;
  return null;
}
