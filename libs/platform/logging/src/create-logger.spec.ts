import { Writable } from 'node:stream';
import { createLogger } from './create-logger';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}

describe('createLogger', () => {
  it('writes JSON with service, level and time', () => {
    const { lines, stream } = capture();
    createLogger({ service: 'api' }, stream).info({ work_id: 'work_1' }, 'hello');
    const record = JSON.parse(lines[0]!);
    expect(record).toMatchObject({ service: 'api', level: 'info', msg: 'hello', work_id: 'work_1' });
    expect(typeof record.time).toBe('string');
  });

  it('never writes credentials', () => {
    const { lines, stream } = capture();
    const log = createLogger({ service: 'api' }, stream);
    log.info({
      req: { headers: { authorization: 'Bearer mango_ak_secret1', 'x-api-key': 'mango_ak_secret2' } },
    });
    log.info({
      work: { secret: 'c2VjcmV0Mw', sessions_token: 'mango_wt_secret4' },
      api_key: 'mango_ak_secret5',
    });
    const text = lines.join('');
    for (const s of ['secret1', 'secret2', 'c2VjcmV0Mw', 'secret4', 'secret5']) expect(text).not.toContain(s);
    expect(text).toContain('[redacted]');
  });
});
