export * from './session.view';
export * from './sessions.module';
export * from './sessions.service';
