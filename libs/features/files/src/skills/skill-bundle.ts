import { parse as parseYaml } from 'yaml';
import {
  DomainError,
  ErrorCode,
  invalidRequest,
  SKILL_DESCRIPTION_MAX,
  SKILL_NAME,
  SKILL_NAME_MAX,
  unsafeSkillPath,
} from '@mango/domain-kernel';
import { assertStorableText } from '@mango/platform-http';

/** SKILL.md is read whole to parse its frontmatter: it is bounded. */
export const SKILL_MD_MAX_BYTES = 1024 * 1024;

export interface SkillFrontmatter {
  name: string;
  description: string;
}

/** 413 `request_too_large` for a bundle over the configured limit. */
export const bundleTooLarge = (maxBytes: number) =>
  new DomainError(ErrorCode.TooLarge, `a Skill bundle may have at most ${maxBytes} bytes`);

/** The member path of an uploaded part (its filename), or a 400 naming what is wrong with it. */
export function parseMemberPath(raw: string | undefined): string {
  if (raw === undefined || raw === '')
    throw invalidRequest('every "files[]" part needs a filename: its path inside the bundle');
  const reason = unsafeSkillPath(raw);
  if (reason) throw invalidRequest(`unsafe path ${JSON.stringify(raw.slice(0, 200))}: ${reason}`);
  return raw;
}

/**
 * Checks the set of member paths of one bundle: one shared top-level directory holding `SKILL.md`, no
 * duplicates, no path that is both a file and a directory. Returns the top-level directory.
 */
export function checkBundleLayout(paths: readonly string[]): string {
  if (paths.length === 0) throw invalidRequest('the bundle has no files: send one "files[]" part per file');
  const top = paths[0]!.split('/')[0]!;
  const seen = new Set<string>();
  for (const p of paths) {
    if (p.split('/')[0] !== top)
      throw invalidRequest(`every file must be under one top-level directory ("${top}"); "${p}" is not`);
    if (seen.has(p)) throw invalidRequest(`"${p}" is sent twice`);
    seen.add(p);
  }
  for (const p of paths) {
    const segments = p.split('/');
    for (let i = 1; i < segments.length; i++) {
      const dir = segments.slice(0, i).join('/');
      if (seen.has(dir)) throw invalidRequest(`"${dir}" is both a file and a directory`);
    }
  }
  if (!seen.has(`${top}/SKILL.md`)) throw invalidRequest(`the bundle needs "${top}/SKILL.md"`);
  return top;
}

/**
 * SKILL.md's YAML frontmatter (between a first line `---` and the next `---` line): a mapping with a
 * `name` (lower-case kebab-case, ≤ 64) and a `description` (1–1024 characters). Other keys are kept in
 * the archive but not interpreted. Anything else is 400.
 */
export function parseSkillMd(bytes: Buffer): SkillFrontmatter {
  if (bytes.length > SKILL_MD_MAX_BYTES)
    throw invalidRequest(`SKILL.md may have at most ${SKILL_MD_MAX_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw invalidRequest('SKILL.md is not valid UTF-8');
  }
  const m = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text);
  if (!m) throw invalidRequest('SKILL.md must start with YAML frontmatter between "---" lines');
  let data: unknown;
  try {
    data = parseYaml(m[1]!, { schema: 'core', uniqueKeys: true, maxAliasCount: 0, prettyErrors: false });
  } catch (e) {
    throw invalidRequest(`SKILL.md frontmatter is not valid YAML: ${firstLine((e as Error).message)}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw invalidRequest('SKILL.md frontmatter must be a YAML mapping with name and description');
  const { name, description } = data as Record<string, unknown>;
  if (typeof name !== 'string' || name.length === 0)
    throw invalidRequest('SKILL.md frontmatter needs a "name" string');
  if (name.length > SKILL_NAME_MAX || !SKILL_NAME.test(name))
    throw invalidRequest(
      `SKILL.md "name" must be lower-case letters, digits and single hyphens, at most ${SKILL_NAME_MAX} characters`,
    );
  if (typeof description !== 'string' || description.trim().length === 0)
    throw invalidRequest('SKILL.md frontmatter needs a non-empty "description" string');
  if (description.length > SKILL_DESCRIPTION_MAX)
    throw invalidRequest(`SKILL.md "description" may have at most ${SKILL_DESCRIPTION_MAX} characters`);
  // YAML escapes ("\0", "\ud800") can spell text PostgreSQL cannot store.
  assertStorableText(description, 'SKILL.md description');
  return { name, description };
}

const firstLine = (s: string) => s.split('\n')[0]!.slice(0, 200);
