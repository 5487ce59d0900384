export * from './cron';
export * from './deployment-input';
