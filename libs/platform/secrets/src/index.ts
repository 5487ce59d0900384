export * from './envelope';
export * from './bindings';
export * from './keyring-settings';
export * from './key-usage';
export * from './stored-sealed';
