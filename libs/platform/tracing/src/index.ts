export * from './tracing';
export * from './temporal';
