import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SkillVersionFileEntity } from '@mango/persistence';
import type { EntityManager } from 'typeorm';

/**
 * The copy of a Skill version's text files Mango keeps in PostgreSQL next to the archive, so that the
 * Agent loop can activate the Skill (docs/api-guide.md "What the model sees") with nothing but the
 * database it already uses: the orchestrator needs no object-store client, and the worker's filesystem
 * is never read. Every member gets a row (its path below the bundle's directory); its content only for
 * UTF-8 text of at most {@link SKILL_TEXT_FILE_MAX_BYTES}, while the version's kept text stays within
 * {@link SKILL_TEXT_TOTAL_MAX_BYTES} (SKILL.md first, then the other paths in order).
 */
export const SKILL_TEXT_FILE_MAX_BYTES = 256 * 1024;
export const SKILL_TEXT_TOTAL_MAX_BYTES = 2 * 1024 * 1024;

export interface SkillText {
  path: string;
  content: string | null;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function asText(bytes: Buffer): string | null {
  if (bytes.includes(0)) return null;
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** The bundle's members (`<top>/…` paths under `root`) as kept rows, SKILL.md first. */
export async function readSkillTexts(
  root: string,
  paths: readonly string[],
  top: string,
): Promise<SkillText[]> {
  const skillMd = `${top}/SKILL.md`;
  const ordered = [skillMd, ...[...paths].filter((p) => p !== skillMd).sort()];
  let budget = SKILL_TEXT_TOTAL_MAX_BYTES;
  const out: SkillText[] = [];
  for (const p of ordered) {
    const path = p.slice(top.length + 1);
    const size = (await stat(join(root, p))).size;
    let content: string | null = null;
    if (size <= SKILL_TEXT_FILE_MAX_BYTES && size <= budget) {
      content = asText(await readFile(join(root, p)));
      if (content !== null) budget -= size;
    }
    out.push({ path, content });
  }
  return out;
}

/** Inserts the kept rows of a version (in the transaction that inserts the version). */
export async function insertSkillTexts(
  tx: EntityManager,
  skillId: string,
  version: number,
  texts: readonly SkillText[],
): Promise<void> {
  for (let i = 0; i < texts.length; i += 500)
    await tx.insert(
      SkillVersionFileEntity,
      texts.slice(i, i + 500).map((t) => ({ skillId, version, path: t.path, content: t.content })),
    );
}
