import { parseSandboxNetworking, type SandboxNetworking } from '@mango/domain-egress';
import { invalidRequest, readEnum, readObject, readOptionalString, readString } from '@mango/domain-kernel';

export const ENVIRONMENT_LIMITS = { name: 256, description: 2048 } as const;

/** An Environment's config: self-hosted, with its sandbox network policy when one is set (ADR 0021). */
export type EnvironmentConfig = { type: 'self_hosted'; networking?: SandboxNetworking };

/**
 * `config` from a request body. `networking` absent or null: no egress (docs/api-guide.md "Sandbox
 * egress"); a config sent on update replaces the stored one whole.
 */
export function parseConfig(v: unknown): EnvironmentConfig {
  if (v === undefined || v === null) return { type: 'self_hosted' };
  const o = readObject(v, 'config');
  if (o.type === 'cloud')
    throw invalidRequest('config.type "cloud" is not supported: Mango Environments are self_hosted');
  readObject(v, 'config', ['type', 'networking']);
  readEnum(o.type, 'config.type', ['self_hosted'] as const);
  if (o.networking === undefined || o.networking === null) return { type: 'self_hosted' };
  return { type: 'self_hosted', networking: parseSandboxNetworking(o.networking) };
}

export function parseScope(v: unknown): 'organization' | 'account' | null {
  if (v === undefined || v === null) return null;
  return readEnum(v, 'scope', ['organization', 'account'] as const);
}

export const parseName = (v: unknown) => readString(v, 'name', { min: 1, max: ENVIRONMENT_LIMITS.name });
export const parseDescription = (v: unknown) =>
  readOptionalString(v, 'description', { max: ENVIRONMENT_LIMITS.description });
