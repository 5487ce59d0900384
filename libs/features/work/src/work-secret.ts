/** The Work secret Poll returns: URL-safe base64 of `{"sessions_token": …, "api_base_url": …}`. */
export interface WorkSecret {
  sessions_token: string;
  api_base_url: string;
}

export const encodeWorkSecret = (secret: WorkSecret): string =>
  Buffer.from(JSON.stringify(secret), 'utf8').toString('base64url');

export function decodeWorkSecret(encoded: string): WorkSecret {
  const parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as WorkSecret;
  if (typeof parsed.sessions_token !== 'string') throw new Error('not a Work secret');
  return parsed;
}
