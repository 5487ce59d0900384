import { invalidRequest, readEnum, readObject, readOptionalString, readString } from '@mango/domain-kernel';

export const ENVIRONMENT_LIMITS = { name: 256, description: 2048 } as const;

export function parseConfig(v: unknown): { type: 'self_hosted' } {
  if (v === undefined || v === null) return { type: 'self_hosted' };
  const o = readObject(v, 'config');
  if (o.type === 'cloud')
    throw invalidRequest('config.type "cloud" is not supported: Mango Environments are self_hosted');
  readObject(v, 'config', ['type']);
  readEnum(o.type, 'config.type', ['self_hosted'] as const);
  return { type: 'self_hosted' };
}

export function parseScope(v: unknown): 'organization' | 'account' | null {
  if (v === undefined || v === null) return null;
  return readEnum(v, 'scope', ['organization', 'account'] as const);
}

export const parseName = (v: unknown) => readString(v, 'name', { min: 1, max: ENVIRONMENT_LIMITS.name });
export const parseDescription = (v: unknown) =>
  readOptionalString(v, 'description', { max: ENVIRONMENT_LIMITS.description });
