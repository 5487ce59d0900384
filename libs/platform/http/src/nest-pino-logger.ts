import { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

/** Routes Nest's own log lines into the app's pino logger (JSON, same redaction). */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}
  log(message: unknown, context?: string): void {
    this.pino.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.pino.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.pino.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.pino.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.pino.trace({ context }, String(message));
  }
}
