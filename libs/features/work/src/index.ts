export * from './work-secret';
export * from './work.module';
export * from './work.service';
export * from './work.view';
export * from './work-lease.mapper';
export * from './work-token-auth.module';
