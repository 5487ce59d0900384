/**
 * The `activate_skill` result (docs/api-guide.md "What the model sees"): a Skill's SKILL.md and the text
 * files it references, read from the copy Mango keeps of each Skill version's text files. Pure.
 */

/** One text file of a Skill version, its path relative to the Skill's directory. */
export interface SkillTextFile {
  path: string;
  content: string;
}

/** An activation result is at most this many characters; files that do not fit are named, not included. */
export const SKILL_ACTIVATION_MAX_CHARS = 65_536;

export interface ActivationTarget {
  name: string;
  /** `skills/<name>/` */
  skillPath: string;
  /** Every file path of the version (text or not), relative to its directory. */
  allPaths: readonly string[];
  /** The text files Mango keeps (SKILL.md always, when the version was uploaded with this release). */
  texts: readonly SkillTextFile[];
}

export interface ActivationResult {
  text: string;
  isError: boolean;
}

const fileBlock = (f: SkillTextFile) => `<file path="${f.path}">\n${f.content}\n</file>`;

/** The files SKILL.md names by their relative path (a link target, a code span, plain text). */
export function referencedFiles(skillMd: string, texts: readonly SkillTextFile[]): SkillTextFile[] {
  return texts.filter((f) => f.path !== 'SKILL.md' && skillMd.includes(f.path));
}

/**
 * The activation answer for `{name, path?}`: without `path`, SKILL.md plus the text files it references,
 * within {@link SKILL_ACTIVATION_MAX_CHARS}; with `path`, that one text file. Errors (an unknown Skill,
 * a binary or unknown file, a version without a kept copy) are tool errors the model can act on.
 */
export function activationResult(
  input: Record<string, unknown>,
  targets: readonly ActivationTarget[],
): ActivationResult {
  const name = input.name;
  const target = targets.find((t) => t.name === name);
  if (typeof name !== 'string' || !target)
    return {
      isError: true,
      text: `Unknown Skill ${JSON.stringify(name ?? null)}. Available: ${targets.map((t) => t.name).join(', ')}.`,
    };
  const skillMd = target.texts.find((f) => f.path === 'SKILL.md');
  if (!skillMd)
    return {
      isError: true,
      text: `Mango keeps no copy of this Skill version's instructions; read ${target.skillPath}SKILL.md with the read tool.`,
    };
  if (input.path !== undefined && input.path !== null) {
    const path = String(input.path).replace(/^\.?\//, '');
    const file = target.texts.find((f) => f.path === path);
    if (file) {
      const content =
        file.content.length > SKILL_ACTIVATION_MAX_CHARS
          ? `${file.content.slice(0, SKILL_ACTIVATION_MAX_CHARS)}\n[truncated: read the rest from ${target.skillPath}${path}]`
          : file.content;
      return { isError: false, text: fileBlock({ path, content }) };
    }
    return {
      isError: true,
      text: target.allPaths.includes(path)
        ? `${path} is not a text file Mango keeps (binary or larger than the limit); use it from ${target.skillPath}${path}.`
        : `The Skill ${target.name} has no file ${JSON.stringify(path)}.`,
    };
  }
  const md =
    skillMd.content.length > SKILL_ACTIVATION_MAX_CHARS
      ? `${skillMd.content.slice(0, SKILL_ACTIVATION_MAX_CHARS)}\n[truncated: read the rest from ${target.skillPath}SKILL.md]`
      : skillMd.content;
  const parts = [fileBlock({ path: 'SKILL.md', content: md })];
  let size = parts[0]!.length;
  const omitted: string[] = [];
  for (const f of referencedFiles(skillMd.content, target.texts)) {
    const block = fileBlock(f);
    if (size + block.length > SKILL_ACTIVATION_MAX_CHARS) omitted.push(f.path);
    else {
      parts.push(block);
      size += block.length;
    }
  }
  const included = new Set([
    'SKILL.md',
    ...referencedFiles(skillMd.content, target.texts).map((f) => f.path),
  ]);
  const others = target.allPaths.filter((p) => !included.has(p) || omitted.includes(p));
  const footer = others.length
    ? `\nOther files of this Skill (under ${target.skillPath}; text files load with activate_skill and path): ${others.join(', ')}`
    : '';
  return {
    isError: false,
    text: `<skill name="${target.name}" path="${target.skillPath}">\n${parts.join('\n')}\n</skill>${footer}`,
  };
}
