export * from './temporal-connector';
export * from './temporal-credentials';
export * from './temporal-env';
export * from './temporal-settings';
