// Adds up Jest's --json reports of every project and prints the closing line CI reads:
// "N passed, N failed" (", N skipped" when any). Exits 1 when a suite failed or no test ran.
const fs = require('node:fs');
const path = require('node:path');

const dir = process.argv[2] || 'tmp/test-results';
let passed = 0;
let failed = 0;
let skipped = 0;
let suitesFailed = 0;
const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
for (const f of files) {
  const r = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  suitesFailed += r.numFailedTestSuites + (r.numRuntimeErrorTestSuites || 0);
  process.stdout.write(
    `  ${path.basename(f, '.json').padEnd(24)} ${r.numPassedTests} passed, ${r.numFailedTests} failed\n`,
  );
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || suitesFailed > 0 || passed === 0 ? 1 : 0);
