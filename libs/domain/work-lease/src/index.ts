export * from './healthcheck-result';
export * from './work-lease.constants';
export * from './work-lease.state';
export * from './work-lease.types';
export * from './work-token-routes';
export * from './item-assignment';
