export const WORK_SETTINGS = Symbol('WORK_SETTINGS');
export interface WorkSettings {
  /**
   * The base URL put into each Work secret as `api_base_url`: from configuration only (MANGO_PUBLIC_BASE_URL,
   * `resolvePublicBaseUrl`), never from the request, whose Host and X-Forwarded-* the caller controls.
   */
  publicBaseUrl: string;
}
