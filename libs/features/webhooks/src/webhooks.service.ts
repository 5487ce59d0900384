import { Inject, Injectable } from '@nestjs/common';
import { generateWebhookSecret, sealWebhookSecret } from '@mango/adapter-webhooks';
import {
  applyMetadataPatch,
  conflict,
  invalidRequest,
  notFound,
  readInteger,
  readObject,
} from '@mango/domain-kernel';
import {
  parseWebhookCreate,
  parseWebhookUpdate,
  WEBHOOK_SECRET_OVERLAP_SECONDS,
} from '@mango/domain-webhooks';
import { isId, newId } from '@mango/platform-ids';
import type { Keyring } from '@mango/platform-secrets';
import { decodeCursor, Page, parseLimit, rejectUnknownQuery, toPage } from '@mango/platform-pagination';
import { insertDeliveries, insertRow, WebhookDeliveryEntity, WebhookEntity } from '@mango/persistence';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { AttemptRow, DeliveryView, renderDelivery, renderWebhook, WebhookView } from './webhook.view';
import { WEBHOOKS_OPTIONS, WebhooksOptions } from './webhooks.options';

/** Longest overlap a rotation may ask for (7 days). */
const MAX_OVERLAP_SECONDS = 7 * 24 * 60 * 60;

/** Webhook endpoints (Mango addition; docs/api-guide.md, Webhooks has them in the Console only). */
@Injectable()
export class WebhooksService {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(WEBHOOKS_OPTIONS) private readonly options: WebhooksOptions,
  ) {}

  private sealer(): Keyring {
    if (!this.options.keyring)
      throw invalidRequest(
        'webhooks need a keyring on the API (MANGO_KEYRING; the older MANGO_WEBHOOK_SECRETS_KEY counts too) ' +
          'to seal their signing secrets',
      );
    return this.options.keyring;
  }

  async create(workspaceId: string, body: unknown): Promise<WebhookView & { secret: string }> {
    const input = parseWebhookCreate(body, this.options.allow);
    const keyring = this.sealer();
    const secret = generateWebhookSecret();
    const now = new Date();
    const id = newId('webhook', now.getTime());
    const row = this.dataSource.manager.create(WebhookEntity, {
      id,
      workspaceId,
      url: input.url,
      eventTypes: input.eventTypes,
      description: input.description,
      metadata: input.metadata,
      secrets: [{ ...sealWebhookSecret(keyring, id, secret), expires_at: null }],
      disabledAt: null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    });
    await insertRow(this.dataSource.manager, WebhookEntity, row);
    return { ...renderWebhook(row), secret };
  }

  async get(workspaceId: string, id: string): Promise<WebhookView> {
    return renderWebhook(await this.find(this.dataSource.manager, workspaceId, id));
  }

  async list(workspaceId: string, query: Record<string, unknown>): Promise<Page<WebhookView>> {
    rejectUnknownQuery(query, ['limit', 'page']);
    const limit = parseLimit(query.limit);
    const qb = this.dataSource.manager
      .createQueryBuilder(WebhookEntity, 'w')
      .where('w.workspace_id = :workspaceId AND w.deleted_at IS NULL', { workspaceId })
      .orderBy('w.id', 'DESC')
      .limit(limit + 1);
    if (typeof query.page === 'string')
      qb.andWhere('w.id < :after', {
        after: decodeCursor(query.page, { scope: 'webhooks', order: 'desc' }).after,
      });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    return toPage(await qb.getMany(), limit, (w) => w.id, renderWebhook, {
      scope: 'webhooks',
      order: 'desc',
    });
  }

  async update(workspaceId: string, id: string, body: unknown): Promise<WebhookView> {
    const input = parseWebhookUpdate(body, this.options.allow);
    return this.dataSource.transaction(async (tx) => {
      const w = await this.find(tx, workspaceId, id, true);
      if (input.url !== undefined) w.url = input.url;
      if (input.eventTypes !== undefined) w.eventTypes = input.eventTypes;
      if (input.description !== undefined) w.description = input.description;
      if (input.metadata !== undefined) w.metadata = applyMetadataPatch(w.metadata, input.metadata);
      if (input.disabled !== undefined) w.disabledAt = input.disabled ? (w.disabledAt ?? new Date()) : null;
      w.updatedAt = new Date();
      await tx.update(
        WebhookEntity,
        { id: w.id },
        {
          url: w.url,
          eventTypes: w.eventTypes,
          description: w.description,
          metadata: w.metadata,
          disabledAt: w.disabledAt,
          updatedAt: w.updatedAt,
        },
      );
      return renderWebhook(w);
    });
  }

  /** Tombstones the endpoint: nothing more is delivered to it (pending deliveries stop at their next attempt). */
  async delete(workspaceId: string, id: string): Promise<{ id: string; type: 'webhook_deleted' }> {
    return this.dataSource.transaction(async (tx) => {
      const w = await this.find(tx, workspaceId, id, true);
      await tx.update(WebhookEntity, { id: w.id }, { deletedAt: new Date(), secrets: [] });
      return { id: w.id, type: 'webhook_deleted' as const };
    });
  }

  /**
   * A new signing secret, shown once. The previous one keeps signing — every delivery carries one
   * signature per live secret in `webhook-signature` — until `previous_secret_expires_at`
   * (`expire_previous_in_seconds`, default 24 h, 0 = at once, at most 7 days). Older secrets are dropped.
   */
  async rotateSecret(
    workspaceId: string,
    id: string,
    body: unknown,
  ): Promise<WebhookView & { secret: string; previous_secret_expires_at: string | null }> {
    const o = readObject(body ?? {}, 'body', ['expire_previous_in_seconds']);
    const overlap =
      o.expire_previous_in_seconds === undefined
        ? WEBHOOK_SECRET_OVERLAP_SECONDS
        : readInteger(o.expire_previous_in_seconds, 'expire_previous_in_seconds', {
            min: 0,
            max: MAX_OVERLAP_SECONDS,
          });
    const keyring = this.sealer();
    return this.dataSource.transaction(async (tx) => {
      const w = await this.find(tx, workspaceId, id, true);
      const now = new Date();
      const secret = generateWebhookSecret();
      const current = w.secrets.find((s) => s.expires_at === null);
      const expires = overlap > 0 ? new Date(now.getTime() + overlap * 1000).toISOString() : null;
      w.secrets = [
        { ...sealWebhookSecret(keyring, w.id, secret), expires_at: null },
        // The previous secret keeps its sealed form (bound to this webhook already, or legacy until resealed).
        ...(current && expires ? [{ ...current, expires_at: expires }] : []),
      ];
      w.updatedAt = now;
      await tx.update(WebhookEntity, { id: w.id }, { secrets: w.secrets, updatedAt: now });
      return { ...renderWebhook(w), secret, previous_secret_expires_at: expires };
    });
  }

  async listDeliveries(
    workspaceId: string,
    id: string,
    query: Record<string, unknown>,
  ): Promise<Page<DeliveryView>> {
    rejectUnknownQuery(query, ['limit', 'page']);
    const w = await this.find(this.dataSource.manager, workspaceId, id, false, true);
    const limit = parseLimit(query.limit, 100);
    const scope = `webhook_deliveries:${w.id}`;
    const qb = this.dataSource.manager
      .createQueryBuilder(WebhookDeliveryEntity, 'd')
      .where('d.webhook_id = :id', { id: w.id })
      .orderBy('d.id', 'DESC')
      .limit(limit + 1);
    if (typeof query.page === 'string')
      qb.andWhere('d.id < :after', { after: decodeCursor(query.page, { scope, order: 'desc' }).after });
    else if (query.page !== undefined) throw invalidRequest('page must be a string');
    const rows = await qb.getMany();
    const rendered = await this.renderDeliveries(this.dataSource.manager, rows.slice(0, limit));
    const page = toPage(
      rows,
      limit,
      (d) => d.id,
      (d) => d,
      { scope, order: 'desc' },
    );
    return { ...page, data: rendered };
  }

  /** Sends an event to the endpoint again: a new delivery (up to 3 attempts) with the same `webhook-id`. */
  async redeliver(workspaceId: string, id: string, deliveryId: string): Promise<DeliveryView> {
    return this.dataSource.transaction(async (tx) => {
      const w = await this.find(tx, workspaceId, id);
      if (w.disabledAt) throw conflict(`webhook ${w.id} is disabled; enable it before redelivering`);
      const prior = isId('webhookDelivery', deliveryId)
        ? await tx.findOne(WebhookDeliveryEntity, { where: { id: deliveryId, webhookId: w.id } })
        : null;
      if (!prior) throw notFound('webhook_delivery', deliveryId);
      const now = new Date();
      const fresh = newId('webhookDelivery', now.getTime());
      await insertDeliveries(tx, [[fresh, w.id, prior.eventId]], 'redeliver', now);
      const row = await tx.findOneOrFail(WebhookDeliveryEntity, { where: { id: fresh } });
      return (await this.renderDeliveries(tx, [row]))[0]!;
    });
  }

  private async renderDeliveries(em: EntityManager, rows: WebhookDeliveryEntity[]): Promise<DeliveryView[]> {
    if (!rows.length) return [];
    const ids = rows.map((r) => r.id);
    const events: Array<{ id: string; type: string; created_at: Date }> = await em.query(
      'SELECT id, type, created_at FROM webhook_events WHERE id = ANY($1::text[])',
      [[...new Set(rows.map((r) => r.eventId))]],
    );
    const attempts: Array<AttemptRow & { delivery_id: string }> = await em.query(
      `SELECT delivery_id, attempt, status_code, latency_ms, error, created_at FROM webhook_delivery_attempts
        WHERE delivery_id = ANY($1::text[]) ORDER BY delivery_id, attempt`,
      [ids],
    );
    const byEvent = new Map(events.map((e) => [e.id, e]));
    return rows.map((r) =>
      renderDelivery(
        r,
        byEvent.get(r.eventId)!,
        attempts.filter((a) => a.delivery_id === r.id),
      ),
    );
  }

  private async find(
    em: EntityManager,
    workspaceId: string,
    id: string,
    lock = false,
    includeDeleted = false,
  ): Promise<WebhookEntity> {
    if (!isId('webhook', id)) throw notFound('webhook', id);
    const w = await em.findOne(WebhookEntity, {
      where: { id, workspaceId, ...(includeDeleted ? {} : { deletedAt: IsNull() }) },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!w) throw notFound('webhook', id);
    return w;
  }
}
