import pino, { Logger, LoggerOptions } from 'pino';

/**
 * Paths that may carry credentials anywhere in a log record. Secrets are never logged: request headers,
 * Work secrets and tokens are censored wherever they appear.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.secret',
  '*.sessions_token',
  '*.api_key',
  '*.token',
  '*.password',
  'secret',
  'sessions_token',
  'api_key',
  'token',
];

export interface LoggerSettings {
  service: string;
  level?: string;
  version?: string;
}

export function loggerOptions(settings: LoggerSettings): LoggerOptions {
  return {
    level: settings.level ?? 'info',
    base: { service: settings.service, version: settings.version ?? '0.1.0' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
}

/** JSON logs on stdout, one line per record. */
export function createLogger(settings: LoggerSettings, destination?: pino.DestinationStream): Logger {
  return destination ? pino(loggerOptions(settings), destination) : pino(loggerOptions(settings));
}
