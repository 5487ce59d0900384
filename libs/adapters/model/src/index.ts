export * from './model-client';
