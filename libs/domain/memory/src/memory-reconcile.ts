/**
 * The reconcile plan of a Memory Store mounted on a worker (docs/api-guide.md, Memory on the worker), as
 * pure functions of what the worker knows: the baseline (the id and content digest of each path at the
 * last synchronization), the remote listing, the local files and how many passes in a row each
 * synchronized path was seen missing. `libs/worker-runtime/src/memory/memory-sync.ts` runs the steps
 * (file-system confinement, HTTP, scheduling) in the order given.
 *
 * - Remote wins: a remotely new or changed Memory replaces the local file, even if it was edited locally
 *   (`conflict`: that edit is discarded); a remotely deleted one removes the local file.
 * - Local creates and updates go up; an update carries the baseline digest as its precondition.
 * - A local deletion is pushed only when the file is missing on a second pass in a row, with the
 *   baseline digest as its precondition.
 */

/** A path's state at the last synchronization. */
export interface SyncedMemory {
  id: string;
  sha: string;
}

export interface RemoteMemoryState {
  id: string;
  path: string;
  sha: string;
}

export interface LocalMemoryState {
  sha: string;
}

export type PullStep =
  /** The local file already holds the remote content: record it as synchronized. */
  | { kind: 'adopt'; path: string; id: string; sha: string }
  /** Remote is new or changed: download it over the local file (`conflict`: a local edit is lost). */
  | { kind: 'download'; path: string; id: string; conflict: boolean }
  /** Deleted remotely while the file exists locally: remove it (`conflict`: it was edited locally). */
  | { kind: 'remove'; path: string; conflict: boolean }
  /** Deleted remotely and locally: forget the path. */
  | { kind: 'forget'; path: string };

/** What a full pass pulls: remote paths first (listing order), then the remotely deleted ones. */
export function planPull(
  baseline: ReadonlyMap<string, SyncedMemory>,
  remote: ReadonlyMap<string, RemoteMemoryState>,
  local: ReadonlyMap<string, LocalMemoryState>,
): PullStep[] {
  const steps: PullStep[] = [];
  for (const r of remote.values()) {
    const base = baseline.get(r.path);
    if (base && base.id === r.id && base.sha === r.sha) continue;
    const l = local.get(r.path);
    if (l && l.sha === r.sha) {
      steps.push({ kind: 'adopt', path: r.path, id: r.id, sha: r.sha });
      continue;
    }
    steps.push({ kind: 'download', path: r.path, id: r.id, conflict: !!l && (!base || l.sha !== base.sha) });
  }
  for (const [path, base] of baseline) {
    if (remote.has(path)) continue;
    const l = local.get(path);
    steps.push(l ? { kind: 'remove', path, conflict: l.sha !== base.sha } : { kind: 'forget', path });
  }
  return steps;
}

export type PushStep =
  | { kind: 'create'; path: string }
  /** `expectedSha`: the `content_sha256` precondition (a concurrent remote change makes it fail). */
  | { kind: 'update'; path: string; id: string; expectedSha: string };

/** Local files that are new or changed since the baseline, in local order. */
export function planPush(
  baseline: ReadonlyMap<string, SyncedMemory>,
  local: ReadonlyMap<string, LocalMemoryState>,
): PushStep[] {
  const steps: PushStep[] = [];
  for (const [path, l] of local) {
    const base = baseline.get(path);
    if (!base) steps.push({ kind: 'create', path });
    else if (base.sha !== l.sha) steps.push({ kind: 'update', path, id: base.id, expectedSha: base.sha });
  }
  return steps;
}

export type DeletionStep =
  /** Missing for the first time: remember it (`seen` passes in a row), push nothing yet. */
  | { kind: 'wait'; path: string; seen: number }
  /** Missing on a second pass in a row: delete it remotely, with the baseline digest as precondition. */
  | { kind: 'delete'; path: string; id: string; expectedSha: string; seen: number };

/** Synchronized paths whose local file is gone; `missing` counts earlier passes that saw it gone. */
export function planDeletions(
  baseline: ReadonlyMap<string, SyncedMemory>,
  local: ReadonlyMap<string, LocalMemoryState>,
  missing: ReadonlyMap<string, number>,
): DeletionStep[] {
  const steps: DeletionStep[] = [];
  for (const [path, base] of baseline) {
    if (local.has(path)) continue;
    const seen = (missing.get(path) ?? 0) + 1;
    steps.push(
      seen < 2
        ? { kind: 'wait', path, seen }
        : { kind: 'delete', path, id: base.id, expectedSha: base.sha, seen },
    );
  }
  return steps;
}
