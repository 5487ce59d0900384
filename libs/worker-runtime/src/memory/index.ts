export * from './memory-client';
export * from './memory-sync';
