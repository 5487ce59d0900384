import {
  urlPort,
  invalidRequest,
  Metadata,
  parseMetadata,
  readArray,
  readBoolean,
  readObject,
  readOptionalString,
  readString,
} from '@mango/domain-kernel';
import { HOSTED_ONLY_WEBHOOK_TYPES, WEBHOOK_EVENT_TYPES } from './event-types';
import { classifyAddress, Cidr, judgeAddress, parseIp } from './address';

export const WEBHOOK_LIMITS = { url: 2048, description: 512, eventTypes: 64 } as const;

export const WEBHOOK_CREATE_FIELDS = ['url', 'event_types', 'description', 'metadata'];
export const WEBHOOK_UPDATE_FIELDS = ['url', 'event_types', 'description', 'metadata', 'disabled'];

/**
 * An endpoint URL: absolute http(s), no userinfo or fragment. A host written as an IP literal is judged
 * at once (a private literal is refused at registration); a name is resolved and judged at every delivery.
 */
export function parseWebhookUrl(raw: unknown, allow: readonly Cidr[], path = 'url'): string {
  const text = readString(raw, path, { min: 1, max: WEBHOOK_LIMITS.url });
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalidRequest(`${path} must be an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw invalidRequest(`${path} must be an http or https URL`);
  if (url.username || url.password) throw invalidRequest(`${path} must not contain credentials`);
  if (url.hash) throw invalidRequest(`${path} must not contain a fragment`);
  const host = url.hostname;
  const ip = parseIp(host);
  if (ip) {
    const verdict = judgeAddress(host.replace(/^\[|\]$/g, ''), allow, urlPort(url));
    if (!verdict.allowed)
      throw invalidRequest(
        `${path}: webhooks are not delivered to ${classifyAddress(ip)} addresses (${host})`,
      );
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    if (!judgeAddress('127.0.0.1', allow, urlPort(url)).allowed)
      throw invalidRequest(`${path}: webhooks are not delivered to loopback addresses (${host})`);
  }
  return url.toString();
}

export function parseEventTypes(raw: unknown, path = 'event_types'): string[] {
  const list = readArray(raw, path, { min: 1, max: WEBHOOK_LIMITS.eventTypes });
  const out: string[] = [];
  for (const [i, t] of list.entries()) {
    if (typeof t !== 'string') throw invalidRequest(`${path}[${i}] must be a string`);
    if (HOSTED_ONLY_WEBHOOK_TYPES.includes(t))
      throw invalidRequest(`${path}[${i}]: Mango does not emit ${t} events`);
    if (!WEBHOOK_EVENT_TYPES.includes(t)) throw invalidRequest(`${path}[${i}]: unknown event type "${t}"`);
    if (out.includes(t)) throw invalidRequest(`${path}[${i}]: ${t} is listed twice`);
    out.push(t);
  }
  return out;
}

export interface WebhookCreate {
  url: string;
  eventTypes: string[];
  description: string | null;
  metadata: Metadata;
}

export function parseWebhookCreate(body: unknown, allow: readonly Cidr[]): WebhookCreate {
  const o = readObject(body, 'body', WEBHOOK_CREATE_FIELDS);
  if (o.url === undefined) throw invalidRequest('url is required');
  if (o.event_types === undefined) throw invalidRequest('event_types is required');
  return {
    url: parseWebhookUrl(o.url, allow),
    eventTypes: parseEventTypes(o.event_types),
    description:
      readOptionalString(o.description, 'description', { max: WEBHOOK_LIMITS.description }) ?? null,
    metadata: parseMetadata(o.metadata),
  };
}

export interface WebhookUpdate {
  url?: string;
  eventTypes?: string[];
  description?: string | null;
  metadata?: unknown;
  disabled?: boolean;
}

export function parseWebhookUpdate(body: unknown, allow: readonly Cidr[]): WebhookUpdate {
  const o = readObject(body, 'body', WEBHOOK_UPDATE_FIELDS);
  const out: WebhookUpdate = {};
  if (o.url !== undefined) out.url = parseWebhookUrl(o.url, allow);
  if (o.event_types !== undefined) out.eventTypes = parseEventTypes(o.event_types);
  if (o.description !== undefined)
    out.description =
      readOptionalString(o.description, 'description', { max: WEBHOOK_LIMITS.description }) ?? null;
  if (o.metadata !== undefined) out.metadata = o.metadata;
  if (o.disabled !== undefined) out.disabled = readBoolean(o.disabled, 'disabled');
  return out;
}

/**
 * After a rotation the previous secret keeps signing (a second signature in `webhook-signature`) for this
 * long, so receivers can switch keys without dropping deliveries.
 */
export const WEBHOOK_SECRET_OVERLAP_SECONDS = 24 * 60 * 60;
