import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One `Idempotency-Key` a client sent on a POST, with the first response to it (docs/api-guide.md,
 * "Idempotent requests"). Written in the same transaction as the write it protects, so a key without its
 * write (or the reverse) cannot be committed; a repeat of the request replays `response_*`. Keys are
 * scoped to a Workspace and the kind of credential that sent them; rows past `expires_at` are pruned.
 */
@Entity({ name: 'idempotency_keys' })
@Index('idempotency_keys_expires_idx', ['expiresAt'])
export class IdempotencyKeyEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  /** `workspace`, `environment` or `work`: the principal kind that sent the key. */
  @PrimaryColumn({ name: 'credential_kind', type: 'text' })
  credentialKind!: string;

  @PrimaryColumn({ type: 'text' })
  key!: string;

  /** SHA-256 (hex) of the method, the path with its query and the body: a repeat must match it. */
  @Column({ name: 'request_digest', type: 'text' })
  requestDigest!: string;

  @Column({ name: 'request_method', type: 'text' })
  requestMethod!: string;

  @Column({ name: 'request_path', type: 'text' })
  requestPath!: string;

  /** The `request-id` of the request that ran; replays echo it. */
  @Column({ name: 'request_id', type: 'text' })
  requestId!: string;

  @Column({ name: 'response_status', type: 'integer' })
  responseStatus!: number;

  /** The response body as sent (null for 204); `json`, not `jsonb`, so a replay keeps its key order. */
  @Column({ name: 'response_body', type: 'json', nullable: true })
  responseBody!: unknown;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3 })
  expiresAt!: Date;
}
