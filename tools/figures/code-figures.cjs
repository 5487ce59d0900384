#!/usr/bin/env node
// Code figures of the production TypeScript (libs/ and apps/, no tests, no libs/sdk, no migrations):
// largest files, longest functions, `as unknown as` casts, files outside libs/persistence with SQL or a
// DataSource. Usage: node tools/figures/code-figures.cjs [top=10]
const fs = require('fs');
const path = require('path');
const ts = require('typescript');

const top = Number(process.argv[2] ?? 10);
const root = path.resolve(__dirname, '../..');
const files = [];
(function walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (['node_modules', 'dist', 'migrations', 'test', 'tmp'].includes(e.name)) continue;
      walk(p);
    } else if (
      /\.tsx?$/.test(e.name) &&
      !/\.(spec|int-spec|e2e-spec)\.tsx?$/.test(e.name) &&
      !e.name.endsWith('.d.ts')
    )
      files.push(p);
  }
})(path.join(root, 'libs'));
(function walkApps(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (['node_modules', 'dist', 'migrations', 'test', 'tmp'].includes(e.name)) continue;
      walkApps(p);
    } else if (
      /\.tsx?$/.test(e.name) &&
      !/\.(spec|int-spec|e2e-spec)\.tsx?$/.test(e.name) &&
      !e.name.endsWith('.d.ts')
    )
      files.push(p);
  }
})(path.join(root, 'apps'));
const prod = files.filter(
  (f) => !f.includes('/libs/sdk/') && !f.includes('/src/test/') && !f.includes('/testing/'),
);
const rel = (f) => path.relative(root, f);

const sizes = prod
  .map((f) => [rel(f), fs.readFileSync(f, 'utf8').split('\n').length])
  .sort((a, b) => b[1] - a[1]);
console.log(`prod files: ${prod.length}, lines: ${sizes.reduce((n, s) => n + s[1], 0)}`);
console.log(`\nlargest files:`);
for (const [f, n] of sizes.slice(0, top)) console.log(`  ${n}\t${f}`);
console.log(`  files >= 380 lines: ${sizes.filter((s) => s[1] >= 380).length}`);

const fns = [];
for (const f of prod) {
  const text = fs.readFileSync(f, 'utf8');
  const src = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const a = src.getLineAndCharacterOfPosition(node.getStart()).line;
      const b = src.getLineAndCharacterOfPosition(node.end).line;
      const name = node.name
        ? node.name.getText()
        : ts.isVariableDeclaration(node.parent)
          ? node.parent.name.getText()
          : '(anonymous)';
      fns.push([b - a + 1, `${rel(f)}:${a + 1} ${name}`, node.parameters.length]);
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
}
fns.sort((x, y) => y[0] - x[0]);
console.log(`\nlongest functions:`);
for (const [n, w] of fns.slice(0, top)) console.log(`  ${n}\t${w}`);
console.log(`  functions over 80 lines: ${fns.filter((x) => x[0] > 80).length}`);
console.log(`  functions with more than 4 parameters: ${fns.filter((x) => x[2] > 4).length}`);

let casts = 0;
for (const f of prod) casts += (fs.readFileSync(f, 'utf8').match(/as unknown as/g) ?? []).length;
console.log(`\n'as unknown as' casts: ${casts}`);

const sql = /\.query\s*[(<]|createQueryBuilder|\bDataSource\b|\bEntityManager\b/;
const outside = prod.filter(
  (f) => !rel(f).startsWith('libs/persistence/') && sql.test(fs.readFileSync(f, 'utf8')),
);
console.log(`\nfiles outside libs/persistence with SQL, DataSource or EntityManager: ${outside.length}`);
if (process.env.LIST) for (const f of outside) console.log(`  ${rel(f)}`);
