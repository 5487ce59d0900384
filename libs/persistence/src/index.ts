export * from './data-source';
export * from './entities';
export * from './migrate';
export * from './migrations';
export * from './persistence.module';
export * from './insert-row';
export * from './pg-listener';
export * from './session-memory-attachments';
