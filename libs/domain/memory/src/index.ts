export * from './memory-attachment';
export * from './memory-path';
export * from './memory-store-name';
export * from './memory-reconcile';
