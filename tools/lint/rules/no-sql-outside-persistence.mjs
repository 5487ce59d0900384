import { readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `mango/no-sql-outside-persistence` (ADR 0005: SQL lives in libs/persistence repositories with named
 * methods): outside libs/persistence, production code neither runs SQL (`.query(`, `createQueryBuilder`)
 * nor takes the database itself (`DataSource` from typeorm). The files that did so when the rule came
 * are listed in `sql-allowlist.json`; the list only shrinks (tools/lint/lint-rules.spec.ts fails on an
 * entry that no longer offends, so a file that moved its SQL out cannot take new SQL back in).
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const ALLOWLIST = new Set(
  JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'sql-allowlist.json'), 'utf8')).files,
);

export const noSqlOutsidePersistence = {
  meta: {
    type: 'problem',
    docs: { description: 'SQL and the DataSource only in libs/persistence (ADR 0005)' },
    schema: [],
    messages: {
      query:
        '{{what}} outside libs/persistence: put the statement in a repository method there (ADR 0005) and inject the repository.',
      dataSource:
        'DataSource outside libs/persistence: inject a repository from libs/persistence instead (ADR 0005).',
    },
  },
  create(context) {
    const file = relative(ROOT, context.filename).split(sep).join('/');
    if (ALLOWLIST.has(file)) return {};
    const report = (node, messageId, what) => context.report({ node, messageId, data: { what } });
    return {
      'CallExpression > MemberExpression.callee[property.name="query"]'(node) {
        report(node.property, 'query', '.query(');
      },
      'MemberExpression[property.name="createQueryBuilder"]'(node) {
        report(node.property, 'query', 'createQueryBuilder');
      },
      'ImportDeclaration[source.value="typeorm"] > ImportSpecifier[imported.name="DataSource"]'(node) {
        report(node, 'dataSource');
      },
    };
  },
};
