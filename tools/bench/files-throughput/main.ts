/**
 * Benchmark: File upload and download throughput through apps/files (multipart upload streamed to S3,
 * content download streamed from S3) next to a direct S3 PUT/GET of the same bytes (presigned, sent by the
 * same node:http client and keep-alive agent) against the same S3 server in the same run, for 1 MiB and 256 MiB Files; and the peak RSS of the apps/files process
 * during each size (VmHWM, reset between sizes). Printed figures only; never pass/fail.
 * Run: npm run bench:files-throughput (PostgreSQL and S3 from tools/ci/services.sh).
 * A third path, "hop", is the proxy floor: the same bytes through bare-hop.ts (one more HTTP hop, streamed,
 * and nothing else), so the figures also say how much of the gap any Node proxy in between costs here.
 * BENCH_SMALL_REPS (default 30) and BENCH_LARGE_REPS (default 3) set the repetitions;
 * MANGO_S3_PAYLOAD_SIGNING (signed, the default, or unsigned) is passed to apps/files.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { Client as Minio } from 'minio';
import { ApiKeysService } from '@mango/feature-auth';
import { createDataSource } from '@mango/persistence';
import { answers, createTestDatabase, freePort, startApp } from '@mango/testing';

const MIB = 1024 * 1024;
const SMALL_REPS = Number(process.env.BENCH_SMALL_REPS ?? 30);
const LARGE_REPS = Number(process.env.BENCH_LARGE_REPS ?? 3);

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (eval "$(tools/ci/services.sh env)")`);
  return v;
};

/** Peak resident set size of a process since the last reset (Linux /proc). */
const peakRssMiB = (pid: number) => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
/** Current resident set size (Linux /proc). */
const rssMiB = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const resetPeakRss = (pid: number) => {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // Not permitted: the figure is then the peak since start.
  }
};

async function main(): Promise<void> {
  const db = await createTestDatabase('benchfiles');
  const bucket = `mango-bench-${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const files = await startApp(
    'apps/files/src/main.ts',
    {
      MANGO_DATABASE_URL: db.url,
      MANGO_FILES_PORT: String(port),
      MANGO_S3_ENDPOINT: env('MANGO_S3_ENDPOINT'),
      MANGO_S3_ACCESS_KEY: env('MANGO_S3_ACCESS_KEY'),
      MANGO_S3_SECRET_KEY: env('MANGO_S3_SECRET_KEY'),
      MANGO_S3_REGION: process.env.MANGO_S3_REGION ?? 'us-east-1',
      MANGO_S3_BUCKET: bucket,
      MANGO_LOG_LEVEL: 'warn',
      MANGO_S3_PAYLOAD_SIGNING: process.env.MANGO_S3_PAYLOAD_SIGNING ?? 'signed',
    },
    answers(`${url}/healthz`),
  );
  const pid = files.child.pid!;
  const hopPort = await freePort();
  const hopUrl = `http://127.0.0.1:${hopPort}`;
  const hop = await startApp(
    'tools/bench/files-throughput/bare-hop.ts',
    {
      MANGO_S3_ENDPOINT: env('MANGO_S3_ENDPOINT'),
      MANGO_S3_ACCESS_KEY: env('MANGO_S3_ACCESS_KEY'),
      MANGO_S3_SECRET_KEY: env('MANGO_S3_SECRET_KEY'),
      MANGO_S3_REGION: process.env.MANGO_S3_REGION ?? 'us-east-1',
      MANGO_S3_BUCKET: bucket,
      BENCH_HOP_PORT: String(hopPort),
    },
    answers(`${hopUrl}/healthz`),
  );
  const ds = await createDataSource({ url: db.url, poolSize: 1 }).initialize();
  const key = (await new ApiKeysService(ds).create({ workspaceId: 'wrkspc_default', label: 'bench' }))
    .api_key;
  const endpoint = new URL(env('MANGO_S3_ENDPOINT'));
  const minio = new Minio({
    endPoint: endpoint.hostname,
    port: Number(endpoint.port),
    useSSL: endpoint.protocol === 'https:',
    accessKey: env('MANGO_S3_ACCESS_KEY'),
    secretKey: env('MANGO_S3_SECRET_KEY'),
    region: process.env.MANGO_S3_REGION ?? 'us-east-1',
  });
  const auth = { authorization: `Bearer ${key}` };

  // Both paths use this one node:http client (one keep-alive agent, the same response handling and
  // buffer sizes): what is measured is the server side, never a difference between HTTP clients.
  const agent = new Agent({ keepAlive: true });
  const call = (
    method: string,
    target: string,
    headers: Record<string, string | number>,
    body?: Buffer[],
    keepBody = true,
  ): Promise<{ status: number; bytes: number; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request(target, { method, agent, headers }, (res) => {
        let bytes = 0;
        const keep: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (res.statusCode !== 200 || keepBody) keep.push(c);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode!, bytes, text: Buffer.concat(keep).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      for (const b of body ?? []) req.write(b);
      req.end();
    });
  const viaFiles = {
    async upload(bytes: Buffer): Promise<string> {
      const boundary = `bench${randomBytes(8).toString('hex')}`;
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.bin"\r\n` +
          `Content-Type: application/octet-stream\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const res = await call(
        'POST',
        `${url}/v1/files`,
        {
          ...auth,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': head.length + bytes.length + tail.length,
        },
        [head, bytes, tail],
      );
      const body = JSON.parse(res.text) as { id: string; size_bytes: number };
      if (res.status !== 201 || body.size_bytes !== bytes.length) throw new Error(`upload: ${res.status}`);
      return body.id;
    },
    async download(id: string, size: number): Promise<void> {
      const res = await call('GET', `${url}/v1/files/${id}/content`, auth, undefined, false);
      if (res.status !== 200 || res.bytes !== size) throw new Error(`download: ${res.status}`);
    },
    async remove(id: string): Promise<void> {
      await call('DELETE', `${url}/v1/files/${id}`, auth);
    },
  };
  // Direct: the same bytes in one S3 PUT / GET, signed (SigV4 query signature, computed inside the timed
  // section) and sent by the same client as above. The payload is not hashed (UNSIGNED-PAYLOAD), so this
  // is the fastest a client can talk to this S3 server.
  const direct = {
    async upload(bytes: Buffer): Promise<string> {
      const name = `direct/${randomBytes(8).toString('hex')}`;
      const target = await minio.presignedPutObject(bucket, name, 3600);
      const res = await call('PUT', target, { 'content-length': bytes.length }, [bytes]);
      if (res.status !== 200) throw new Error(`direct upload: ${res.status} ${res.text}`);
      return name;
    },
    async download(name: string, size: number): Promise<void> {
      const target = await minio.presignedGetObject(bucket, name, 3600);
      const res = await call('GET', target, {}, undefined, false);
      if (res.status !== 200 || res.bytes !== size) throw new Error(`direct download: ${res.status}`);
    },
    async remove(name: string): Promise<void> {
      await minio.removeObject(bucket, name);
    },
  };

  // The proxy floor: the same bytes through one bare node:http hop (bare-hop.ts), streamed both ways.
  const viaHop = {
    ...direct,
    async upload(bytes: Buffer): Promise<string> {
      const name = `hop/${randomBytes(8).toString('hex')}`;
      const res = await call('PUT', `${hopUrl}/o/${name}`, { 'content-length': bytes.length }, [bytes]);
      if (res.status !== 200) throw new Error(`hop upload: ${res.status} ${res.text}`);
      return name;
    },
    async download(name: string, size: number): Promise<void> {
      const res = await call('GET', `${hopUrl}/o/${name}`, {}, undefined, false);
      if (res.status !== 200 || res.bytes !== size) throw new Error(`hop download: ${res.status}`);
    },
  };

  // A second floor for an upload of unknown length: what a client that streams bytes it cannot count in
  // advance must do against S3 with bounded memory, i.e. a multipart upload in the product's part size
  // (minio's uploadPart, which signs each part's SHA-256 as apps/files does).
  const streamedPartBytes = Number(process.env.MANGO_FILES_PART_BYTES ?? 8 * MIB);
  const directStreamed = {
    ...direct,
    async upload(bytes: Buffer): Promise<string> {
      const name = `direct/${randomBytes(8).toString('hex')}`;
      const id = await minio.initiateNewMultipartUpload(bucket, name, {});
      const etags: Array<{ part: number; etag: string }> = [];
      for (let off = 0, part = 1; off < bytes.length; off += streamedPartBytes, part++) {
        const body = bytes.subarray(off, off + streamedPartBytes);
        const { etag } = await minio.uploadPart(
          { bucketName: bucket, objectName: name, uploadID: id, partNumber: part, headers: {} },
          body,
        );
        etags.push({ part, etag });
      }
      await minio.completeMultipartUpload(bucket, name, id, etags);
      return name;
    },
  };

  const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const idleRss = rssMiB(pid);
  const rows: string[] = [];
  const ratios: string[] = [];
  const hopRatios: string[] = [];
  for (const [label, size, reps] of [
    ['1 MiB', MIB, SMALL_REPS],
    ['256 MiB', 256 * MIB, LARGE_REPS],
  ] as const) {
    const small = size <= MIB;
    const bytes = randomBytes(size);
    const paths = small
      ? ([
          ['files', viaFiles],
          ['direct', direct],
          ['hop', viaHop],
        ] as const)
      : ([
          ['files', viaFiles],
          ['direct', direct],
          ['hop', viaHop],
          ['streamed', directStreamed],
        ] as const);
    const ms: Record<string, { up: number[]; down: number[] }> = {};
    for (const [name] of paths) ms[name] = { up: [], down: [] };
    // One untimed warm-up of each path, then alternate the paths so drift hits them alike.
    for (const [, path] of paths) await path.remove(await path.upload(bytes));
    resetPeakRss(pid);
    for (let i = 0; i < reps; i++) {
      for (const [name, path] of paths) {
        let t = performance.now();
        const id = await path.upload(bytes);
        ms[name]!.up.push(performance.now() - t);
        t = performance.now();
        await path.download(id, size);
        ms[name]!.down.push(performance.now() - t);
        await path.remove(id);
      }
    }
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const rate = (xs: number[]) => (size * xs.length) / MIB / (sum(xs) / 1000);
    const f = ms.files!;
    const d = ms.direct!;
    const h = ms.hop!;
    if (small) {
      for (const dir of ['up', 'down'] as const) {
        const [a, b, c] = [p50(f[dir]), p50(d[dir]), p50(h[dir])];
        const what = dir === 'up' ? 'upload  ' : 'download';
        rows.push(
          `${label.padEnd(8)} ${what} p50 apps/files ${a.toFixed(2).padStart(7)} ms   direct ${b.toFixed(2).padStart(7)} ms   bare hop ${c.toFixed(2).padStart(7)} ms`,
        );
        ratios.push(`${label.padEnd(8)} ${what} ${(b / a).toFixed(2)}  (direct p50 / apps/files p50)`);
        hopRatios.push(
          `${label.padEnd(8)} ${what} bare hop ${(b / c).toFixed(2)} of direct; apps/files ${(c / a).toFixed(2)} of the bare hop`,
        );
      }
    } else {
      const s = ms.streamed!;
      for (const dir of ['up', 'down'] as const) {
        const [a, b, c] = [rate(f[dir]), rate(d[dir]), rate(h[dir])];
        const what = dir === 'up' ? 'upload  ' : 'download';
        rows.push(
          `${label.padEnd(8)} ${what} apps/files ${a.toFixed(1).padStart(7)} MiB/s   direct ${b.toFixed(1).padStart(7)} MiB/s   bare hop ${c.toFixed(1).padStart(7)} MiB/s` +
            (dir === 'up' ? `   direct multipart ${rate(s.up).toFixed(1).padStart(7)} MiB/s` : ''),
        );
        hopRatios.push(
          `${label.padEnd(8)} ${what} bare hop ${(c / b).toFixed(2)} of direct; apps/files ${(a / c).toFixed(2)} of the bare hop`,
        );
        ratios.push(`${label.padEnd(8)} ${what} ${(a / b).toFixed(2)}  (apps/files MiB/s / direct MiB/s)`);
        if (dir === 'up')
          ratios.push(
            `${label.padEnd(8)} upload   ${(a / rate(s.up)).toFixed(2)}  (against direct multipart in ${streamedPartBytes / MIB} MiB parts, as for a stream of unknown length)`,
          );
      }
    }
    rows.push(
      `${label.padEnd(8)} apps/files peak RSS ${peakRssMiB(pid).toFixed(0)} MiB (${reps} × upload + download)`,
    );
  }
  console.log(`Files throughput (target: apps/files ≥ 0.8 × direct S3; same S3 server, same run)`);
  console.log(
    `direct = one presigned PUT / GET of the same bytes through the same node:http client and keep-alive agent as apps/files;` +
      ` direct multipart = the same bytes in signed parts (minio uploadPart)`,
  );
  console.log(`apps/files MANGO_S3_PAYLOAD_SIGNING=${process.env.MANGO_S3_PAYLOAD_SIGNING ?? 'signed'}`);
  console.log(`apps/files RSS when idle after start: ${idleRss.toFixed(0)} MiB`);
  for (const r of rows) console.log(r);
  console.log('Ratios (target ≥ 0.80):');
  for (const r of ratios) console.log(`  ${r}`);
  console.log('The proxy floor (one bare node:http hop, streamed, same run):');
  for (const r of hopRatios) console.log(`  ${r}`);

  await files.stop();
  await hop.stop();
  await ds.destroy();
  await db.drop();
  for await (const u of minio.listIncompleteUploads(bucket, '', true))
    await minio.abortMultipartUpload(bucket, u.key, u.uploadId);
  const names: string[] = [];
  for await (const o of minio.listObjectsV2(bucket, '', true)) if (o.name) names.push(o.name);
  if (names.length) await minio.removeObjects(bucket, names);
  await minio.removeBucket(bucket);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
