export const WORK_SETTINGS = Symbol('WORK_SETTINGS');
export interface WorkSettings {
  /** The base URL put into each Work secret as `api_base_url` (else the request's own origin). */
  publicBaseUrl?: string;
}
