import type { StoredSealed } from '@mango/platform-secrets';
import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { WorkspaceEntity } from './workspace.entity';

/**
 * One signing secret, sealed at rest with the keyring (`@mango/platform-secrets`): `{kek_id, wrapped_key,
 * ciphertext}` bound to the webhook's id, or — sealed before key ids — `{sealed}` under the older
 * `MANGO_WEBHOOK_SECRETS_KEY` (key id `webhook-legacy`) until `mango keyring rotate` re-seals it.
 */
export type StoredWebhookSecret = StoredSealed & {
  /** A rotated-out secret keeps signing until then; null for the current one. */
  expires_at: string | null;
};

/** A webhook endpoint (Mango addition: the hosted service manages these in its Console). */
@Entity({ name: 'webhooks' })
@Index('webhooks_workspace_idx', ['workspaceId', 'id'])
export class WebhookEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ type: 'text' })
  url!: string;

  @Column({ name: 'event_types', type: 'text', array: true })
  eventTypes!: string[];

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'jsonb' })
  metadata!: Record<string, string>;

  /** Current secret first; never rendered. */
  @Column({ type: 'jsonb' })
  secrets!: StoredWebhookSecret[];

  @Column({ name: 'disabled_at', type: 'timestamptz', precision: 3, nullable: true })
  disabledAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  /** Deleted endpoints keep a tombstone row (ids never reused, the delivery log stays readable). */
  @Column({ name: 'deleted_at', type: 'timestamptz', precision: 3, nullable: true })
  deletedAt!: Date | null;

  @ManyToOne(() => WorkspaceEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'workspace_id' })
  workspace?: WorkspaceEntity;
}

/** A webhook event (`whe_…`): written in the same transaction as the change it announces. */
@Entity({ name: 'webhook_events' })
@Index('webhook_events_workspace_idx', ['workspaceId', 'id'])
export class WebhookEventEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'workspace_id', type: 'text' })
  workspaceId!: string;

  @Column({ type: 'text' })
  type!: string;

  /** The thin payload's `data` (type, id, workspace_id, …). */
  @Column({ type: 'jsonb' })
  data!: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;
}

/**
 * One event to one endpoint (up to 3 attempts): also the webhook outbox — rows with `dispatched_at` NULL
 * are claimed by the orchestrator's relay, which starts the delivery workflow (id = this row's id).
 */
@Entity({ name: 'webhook_deliveries' })
@Index('webhook_deliveries_pending_idx', ['id'], { where: 'dispatched_at IS NULL' })
@Index('webhook_deliveries_webhook_idx', ['webhookId', 'id'])
export class WebhookDeliveryEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'webhook_id', type: 'text' })
  webhookId!: string;

  @Column({ name: 'event_id', type: 'text' })
  eventId!: string;

  /** `event` (the change) or `redeliver` (a manual redelivery). */
  @Column({ type: 'text' })
  trigger!: string;

  /** pending → succeeded | failed. */
  @Column({ type: 'text' })
  state!: string;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'dispatched_at', type: 'timestamptz', precision: 3, nullable: true })
  dispatchedAt!: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', precision: 3, nullable: true })
  completedAt!: Date | null;

  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'webhook_id' })
  webhook?: WebhookEntity;

  @ManyToOne(() => WebhookEventEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'event_id' })
  event?: WebhookEventEntity;
}

/** One HTTP attempt of a delivery (the delivery log). */
@Entity({ name: 'webhook_delivery_attempts' })
@Index('webhook_delivery_attempts_key', ['deliveryId', 'attempt'], { unique: true })
@Index('webhook_delivery_attempts_webhook_idx', ['webhookId', 'id'])
export class WebhookDeliveryAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'delivery_id', type: 'text' })
  deliveryId!: string;

  @Column({ name: 'webhook_id', type: 'text' })
  webhookId!: string;

  @Column({ type: 'integer' })
  attempt!: number;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode!: number | null;

  @Column({ name: 'latency_ms', type: 'integer' })
  latencyMs!: number;

  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @ManyToOne(() => WebhookDeliveryEntity, { onDelete: 'CASCADE', createForeignKeyConstraints: true })
  @JoinColumn({ name: 'delivery_id' })
  delivery?: WebhookDeliveryEntity;
}
