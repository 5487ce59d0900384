#!/usr/bin/env node
// Turns a pytest JUnit XML file or `go test -json` output into the Jest-style summary that
// tools/ci/summarize-tests.js adds up ({numPassedTests, numFailedTests, ...}), and prints the counts.
//   node tools/sdk/test-report.js junit <report.xml> <out.json>
//   node tools/sdk/test-report.js gotest <go-test.jsonl> <out.json>
const fs = require('node:fs');
const path = require('node:path');

function fromJunit(xml) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const m of xml.matchAll(/<testcase\b[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const body = m[2] ?? '';
    if (/<(failure|error)\b/.test(body)) failed++;
    else if (/<skipped\b/.test(body)) skipped++;
    else passed++;
  }
  // A collection error has no testcase but counts as an error on the suite.
  const suiteErrors = [...xml.matchAll(/<testsuite\b[^>]*\berrors="(\d+)"/g)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
  return { passed, failed, skipped, broken: suiteErrors > failed };
}

function fromGoTest(jsonl) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  let broken = false;
  for (const line of jsonl.split('\n')) {
    if (!line.startsWith('{')) continue;
    const ev = JSON.parse(line);
    if (!ev.Test) {
      if (ev.Action === 'fail') broken = true; // a package failed (build error, panic, TestMain)
      continue;
    }
    if (ev.Action === 'pass') passed++;
    else if (ev.Action === 'fail') failed++;
    else if (ev.Action === 'skip') skipped++;
  }
  return { passed, failed, skipped, broken: broken && failed === 0 };
}

function write(counts, out) {
  const summary = {
    numPassedTests: counts.passed,
    numFailedTests: counts.failed,
    numPendingTests: counts.skipped,
    numTodoTests: 0,
    numFailedTestSuites: counts.failed > 0 || counts.broken ? 1 : 0,
    numRuntimeErrorTestSuites: counts.broken ? 1 : 0,
  };
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(summary));
  return summary;
}

if (require.main === module) {
  const [, , kind, input, out] = process.argv;
  if (!['junit', 'gotest'].includes(kind) || !input || !out) {
    console.error('usage: test-report.js junit|gotest <input> <out.json>');
    process.exit(2);
  }
  const text = fs.existsSync(input) ? fs.readFileSync(input, 'utf8') : '';
  const counts = kind === 'junit' ? fromJunit(text) : fromGoTest(text);
  write(counts, out);
  console.log(
    `[sdk] ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${counts.broken ? ' (suite error)' : ''}`,
  );
}

module.exports = { fromJunit, fromGoTest };
