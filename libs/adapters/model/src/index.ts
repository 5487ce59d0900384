export * from './model-client';
export * from './model-endpoint';
