export * from './work-secret';
export * from './work.module';
export * from './work.service';
export * from './work.view';
export * from './work-token-auth.module';
export * from './poll-work.usecase';
export * from './session-terminator.port';
export * from './work-transitions.service';
