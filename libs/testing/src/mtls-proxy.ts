import { connect, Socket } from 'node:net';
import { createServer, Server, TLSSocket } from 'node:tls';

/**
 * A TLS terminator in front of a plaintext server (the Temporal dev server has no TLS options): Node's TLS
 * stack with `requestCert` and `rejectUnauthorized`, so a client without a certificate signed by `ca`
 * fails the handshake; ALPN `h2`, which gRPC requires. Accepted connections are piped to the target.
 */
export class MtlsProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  /** Handshakes that completed, with the client certificate's common name. */
  readonly accepted: string[] = [];
  /** Handshakes that failed, with the TLS error's code. */
  readonly refused: string[] = [];

  constructor(private readonly options: { target: string; ca: Buffer; cert: Buffer; key: Buffer }) {}

  async listen(): Promise<string> {
    this.server = createServer(
      {
        ca: this.options.ca,
        cert: this.options.cert,
        key: this.options.key,
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (down: TLSSocket) => {
        const cn = down.getPeerCertificate().subject?.CN;
        this.accepted.push(String(cn));
        const [host, port] = this.options.target.split(':');
        const up = connect(Number(port), host);
        this.sockets.add(down).add(up);
        down.pipe(up).pipe(down);
        const end = () => {
          down.destroy();
          up.destroy();
          this.sockets.delete(down);
          this.sockets.delete(up);
        };
        down.on('error', end).on('close', end);
        up.on('error', end).on('close', end);
      },
    );
    this.server.on('tlsClientError', (err: NodeJS.ErrnoException) =>
      this.refused.push(err.code ?? err.message),
    );
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as { port: number };
    return `127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
