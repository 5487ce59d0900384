export * from './docker-engine';
