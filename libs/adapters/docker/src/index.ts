export * from './docker-engine';
export * from './item-launcher';
