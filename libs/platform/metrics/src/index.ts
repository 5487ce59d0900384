export * from './metrics';
export * from './metrics.env';
export * from './metrics.module';
