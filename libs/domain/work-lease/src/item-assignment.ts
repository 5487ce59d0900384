/*
 * The one line a pooled Work container (docs/operator-guide.md "Warm pool") reads on its one-shot stdin
 * when the supervisor hands it an acknowledged Work item: its identity and its Work secret. Before that
 * line the container knows no Work, holds no secret and reaches nothing (its socket directory is empty).
 */

export interface ItemAssignment {
  work_id: string;
  environment_id: string;
  work_type: 'healthcheck';
  /** The raw Work secret: it crosses stdin only, after the Ack (never env, labels, command or logs). */
  secret: string;
}

/** The message a pooled item runner logs once it is loaded and waiting for its assignment. */
export const POOLED_RUNNER_READY = 'pooled item runner waiting for its assignment';

export function encodeItemAssignment(a: ItemAssignment): string {
  return `${JSON.stringify({
    work_id: a.work_id,
    environment_id: a.environment_id,
    work_type: a.work_type,
    secret: a.secret,
  })}\n`;
}

/**
 * The assignment's shape (every field a non-empty string, a pooled Work type); the ids' formats are
 * validated where every item runner's identity is (ItemEnv). The message never quotes the input: it
 * carries the secret.
 */
export function parseItemAssignment(text: string): ItemAssignment {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw new Error('the assignment on stdin is not JSON');
  }
  const a = o as Partial<Record<keyof ItemAssignment, unknown>>;
  for (const k of ['work_id', 'environment_id', 'work_type', 'secret'] as const)
    if (typeof a?.[k] !== 'string' || !(a[k] as string))
      throw new Error(`the assignment on stdin has no ${k}`);
  if (a.work_type !== 'healthcheck') throw new Error('a pooled container serves healthcheck Work only');
  return a as ItemAssignment;
}
