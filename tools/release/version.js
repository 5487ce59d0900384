#!/usr/bin/env node
// tools/release/version.js — the release version has one source, the root package.json's "version"; every
// package and the contract carry a copy (docs/versioning.md).
//   node tools/release/version.js            prints the version
//   node tools/release/version.js check      exit 1, naming each copy that disagrees with the source
//   node tools/release/version.js set X.Y.Z  writes X.Y.Z into the source and every copy (then commit)
//   node tools/release/version.js python     prints the version in its PEP 440 spelling (the wheel's)
// Versions are semver: X.Y.Z or X.Y.Z-(alpha|beta|rc).N. Python gets the PEP 440 spelling (1.0.0rc1), Go
// modules take theirs from the tag (libs/sdk/go/vX.Y.Z), so the Go copy is only the SDK's User-Agent.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-(alpha|beta|rc)\.(0|[1-9]\d*))?$/;

/** The PEP 440 spelling of a release version: 1.2.3, 1.2.3a1, 1.2.3b1, 1.2.3rc1. */
function pep440(version) {
  const m = SEMVER.exec(version);
  if (!m) throw new Error(`not a release version: ${version}`);
  const pre = m[4] ? `${{ alpha: 'a', beta: 'b', rc: 'rc' }[m[4]]}${m[5]}` : '';
  return `${m[1]}.${m[2]}.${m[3]}${pre}`;
}

/** A copy held in a text file: one line matched by `re`, whose group 2 is the version (1 and 3 are kept). */
const line = (file, re, spell = (v) => v) => ({ file, re, spell });
const json = (file, keys, label = keys.join('.')) => ({ file, keys, label, spell: (v) => v });

const SOURCE = json('package.json', ['version']);
const COPIES = [
  json('package-lock.json', ['version']),
  json('package-lock.json', ['packages', '', 'version'], 'packages[""].version'),
  json('package-lock.json', ['packages', 'tools/cli', 'version'], 'packages["tools/cli"].version'),
  json('tools/cli/package.json', ['version']),
  json('libs/sdk/typescript/package.json', ['version']),
  line('libs/sdk/typescript/src/core.ts', /^(export const SDK_VERSION = ')([^']*)(';)$/m),
  line('libs/sdk/python/pyproject.toml', /^(version = ")([^"]*)(")$/m, pep440),
  line('libs/sdk/python/mango_sdk/_core.py', /^(SDK_VERSION = ")([^"]*)(")$/m, pep440),
  line('libs/sdk/go/mango/client.go', /^(const Version = ")([^"]*)(")$/m),
  line('openapi.yaml', /^(info:\n(?: {2}.*\n)*? {2}version: )(\S+)()$/m),
  line('deployments/helm/mango/Chart.yaml', /^(version: )(\S+)()$/m),
  line('deployments/helm/mango/Chart.yaml', /^(appVersion: ')([^']*)(')$/m),
];

const labelOf = (c) => `${c.file} ${c.label ?? String(c.re)}`;

function read(root, c) {
  const text = fs.readFileSync(path.join(root, c.file), 'utf8');
  if (c.keys) {
    let v = JSON.parse(text);
    for (const k of c.keys) v = v?.[k];
    return typeof v === 'string' ? v : undefined;
  }
  const matches = [...text.matchAll(new RegExp(c.re.source, 'gm'))];
  return matches.length === 1 ? matches[0][2] : undefined;
}

function write(root, c, version) {
  const file = path.join(root, c.file);
  const text = fs.readFileSync(file, 'utf8');
  if (c.keys) {
    const doc = JSON.parse(text);
    let at = doc;
    for (const k of c.keys.slice(0, -1)) at = at[k];
    at[c.keys.at(-1)] = c.spell(version);
    fs.writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
    return;
  }
  if (read(root, c) === undefined) throw new Error(`${labelOf(c)}: not exactly one version line`);
  fs.writeFileSync(
    file,
    text.replace(c.re, (_, a, _v, b) => `${a}${c.spell(version)}${b}`),
  );
}

/** The source version, and every copy that does not carry it ({file, found, want}). */
function check(root) {
  const version = read(root, SOURCE);
  if (!version || !SEMVER.test(version)) {
    return {
      version,
      problems: [{ where: 'package.json version', found: version, want: 'X.Y.Z[-(alpha|beta|rc).N]' }],
    };
  }
  const problems = [];
  for (const c of COPIES) {
    const found = read(root, c);
    const want = c.spell(version);
    if (found !== want) problems.push({ where: labelOf(c), found, want });
  }
  return { version, problems };
}

function set(root, version) {
  if (!SEMVER.test(version)) throw new Error(`not a release version (X.Y.Z or X.Y.Z-rc.N): ${version}`);
  for (const c of [SOURCE, ...COPIES]) write(root, c, version);
}

module.exports = { check, set, pep440, COPIES, SEMVER };

if (require.main === module) {
  const root = path.join(__dirname, '../..');
  const [cmd, arg] = process.argv.slice(2);
  if (!cmd) {
    console.log(read(root, SOURCE));
  } else if (cmd === 'check') {
    const { version, problems } = check(root);
    for (const p of problems)
      console.error(`version: ${p.where} is ${JSON.stringify(p.found)}, want ${JSON.stringify(p.want)}`);
    if (problems.length) {
      console.error(
        `version: ${problems.length} cop${problems.length === 1 ? 'y disagrees' : 'ies disagree'} with package.json (${version}); run: node tools/release/version.js set ${version}`,
      );
      process.exit(1);
    }
    console.log(version);
  } else if (cmd === 'python') {
    console.log(pep440(read(root, SOURCE)));
  } else if (cmd === 'set' && arg) {
    set(root, arg);
    console.log(arg);
  } else {
    console.error('usage: node tools/release/version.js [check | python | set X.Y.Z]');
    process.exit(2);
  }
}
