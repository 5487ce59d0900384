import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The release version: tools/cli/package.json's, which `tools/release/version.js check` keeps equal to the
 * root package.json's (the one source, docs/versioning.md). Read from the file beside the sources, as the
 * images ship it.
 */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(join(__dirname, '../package.json'), 'utf8')) as { version: string })
    .version;
}
