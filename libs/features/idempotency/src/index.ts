export * from './idempotency-key';
export * from './idempotency-pruner';
export * from './idempotency.interceptor';
export * from './idempotency.module';
export * from './idempotency.settings';
export * from './idempotent-by-protocol.decorator';
export * from './upload-idempotency';
export * from './sealed-replay';
