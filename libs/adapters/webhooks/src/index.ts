export * from './secret-box';
export * from './webhook-sender';
