export * from './audit-entry';
export * from './audit.env';
export * from './audit.interceptor';
export * from './audit-log.service';
export * from './audit-pruner';
export * from './audit.module';
