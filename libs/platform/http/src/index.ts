export * from './api-exception.filter';
export * from './create-http-app';
export * from './error-mapping';
export * from './health.controller';
export * from './nest-pino-logger';
export * from './public.decorator';
export * from './readiness';
export * from './request-id';
