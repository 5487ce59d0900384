/**
 * The body of the grep worker thread (plain JavaScript, run with `eval: true`, so it works the same from
 * sources and from a build). It searches `files` line by line with the model's RegExp and posts hit lines
 * per file; the parent enforces the time limit and output budget by terminating the thread, so a
 * catastrophic pattern cannot stall the runner's event loop (and its heartbeats).
 */
export const GREP_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { StringDecoder } = require('node:string_decoder');
const { pattern, files, maxLine } = workerData;
const re = new RegExp(pattern);
const buf = Buffer.alloc(65536);
for (const f of files) {
  let fd;
  try { fd = fs.openSync(f.real, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW); } catch { continue; }
  const hits = [];
  try {
    const dec = new StringDecoder('utf8');
    let rest = '';
    let tooLong = false;
    let lineno = 0;
    const check = (line) => {
      lineno++;
      if (line.length <= maxLine && re.test(line)) hits.push(f.shown + ':' + lineno + ':' + line);
    };
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      let chunk = buf.subarray(0, n);
      const nul = chunk.indexOf(0);
      if (nul >= 0) chunk = chunk.subarray(0, nul);
      const parts = (rest + dec.write(chunk)).split('\\n');
      rest = parts.pop();
      for (const line of parts) {
        if (tooLong) { tooLong = false; lineno++; continue; }
        check(line.endsWith('\\r') ? line.slice(0, -1) : line);
      }
      if (rest.length > maxLine) { tooLong = true; rest = ''; }
      if (nul >= 0) { rest = ''; break; }
    }
    if (rest && !tooLong) check(rest);
  } catch {
    // unreadable file: skipped
  } finally {
    fs.closeSync(fd);
  }
  if (hits.length) parentPort.postMessage(hits);
}
parentPort.postMessage(null);
`;
