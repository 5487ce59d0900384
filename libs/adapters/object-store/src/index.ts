export * from './object-store';
export * from './s3-credentials';
export * from './metadata-credentials';
