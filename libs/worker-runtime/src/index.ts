export * from './backoff';
export * from './healthcheck-probe';
export * from './item-runner';
export * from './lease-keeper';
export * from './non-dumpable';
export * from './work-poller';
export * from './session-tool-runner';
export * from './tools';
