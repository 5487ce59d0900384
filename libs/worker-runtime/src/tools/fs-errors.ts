import { ToolError } from './types';

const MESSAGES: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'not a directory',
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  ENOSPC: 'no space left on device',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  EROFS: 'read-only file system',
  EEXIST: 'file exists',
};

/** Maps a filesystem error to the toolset's message (`<tool>: <file>: no such file or directory`). */
export function fsError(tool: string, file: string, err: unknown): Error {
  if (err instanceof ToolError) return err;
  const code = (err as NodeJS.ErrnoException)?.code;
  if (!code) return err instanceof Error ? err : new Error(String(err));
  return new ToolError(`${tool}: ${file}: ${MESSAGES[code] ?? `i/o error (${code})`}`);
}
