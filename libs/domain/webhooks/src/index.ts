export * from './address';
export * from './event-types';
export * from './retry';
export * from './webhook-input';
