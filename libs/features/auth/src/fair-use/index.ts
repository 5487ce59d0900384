export * from './concurrency-slots';
export * from './fair-use-subjects';
export * from './fair-use.interceptor';
export * from './fair-use.module';
export * from './fair-use.settings';
export * from './holds-stream.decorator';
export * from './token-buckets';
