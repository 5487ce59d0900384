export * from './docker-engine';
export * from './item-launcher';
export * from './work-api-socket';
export * from './session-workspaces';
export * from './container-runtime';
export * from './egress-proxy';
export * from './egress-settings';
