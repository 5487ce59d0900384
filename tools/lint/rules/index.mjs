import { noSqlOutsidePersistence } from './no-sql-outside-persistence.mjs';

/** Mango's own lint rules (eslint.config.mjs `mango/*`), each tested on fixtures by tools/lint/lint-rules.spec.ts. */
export default { rules: { 'no-sql-outside-persistence': noSqlOutsidePersistence } };
