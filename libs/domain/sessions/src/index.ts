export * from './session-input';
