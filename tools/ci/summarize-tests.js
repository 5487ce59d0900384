// Adds up Jest's --json reports of every project and prints the closing line CI reads:
// "N passed, N failed" (", N skipped" when any). Exits 1 when a suite failed or no test ran.
const fs = require('node:fs');
const path = require('node:path');

const dir = process.argv[2] || 'tmp/test-results';
let passed = 0;
let failed = 0;
let skipped = 0;
let suitesFailed = 0;
const failures = [];
const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
for (const f of files) {
  const r = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  suitesFailed += r.numFailedTestSuites + (r.numRuntimeErrorTestSuites || 0);
  for (const suite of r.testResults || []) {
    const where = path.relative(process.cwd(), suite.name);
    const failedTests = (suite.assertionResults || []).filter((a) => a.status === 'failed');
    for (const a of failedTests)
      failures.push({ where, title: a.fullName, message: (a.failureMessages || [])[0] });
    // A suite that failed outside its tests (a hook, a compile error) has no failed assertion to name.
    if (suite.status === 'failed' && !failedTests.length)
      failures.push({ where, title: '(suite)', message: suite.message });
  }
  process.stdout.write(
    `  ${path.basename(f, '.json').padEnd(24)} ${r.numPassedTests} passed, ${r.numFailedTests} failed\n`,
  );
}
// CI keeps only the end of the output: the failures are named here, last, with the head of each message.
for (const f of failures) {
  const head = String(f.message || '')
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, 6)
    .map((l) => `      ${l.slice(0, 200)}`)
    .join('\n');
  process.stdout.write(`FAILED ${f.where} › ${f.title}\n${head}\n`);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || suitesFailed > 0 || passed === 0 ? 1 : 0);
