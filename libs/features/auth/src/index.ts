export * from './allow-credentials.decorator';
export * from './api-keys.service';
export * from './auth.guard';
export * from './auth.module';
export * from './credential';
export * from './principal';
export * from './work-token-authenticator.port';
export * from './request-authenticator';
