export * from './event-kinds';
export * from './model-step';
export * from './session-status.state';
export * from './pricing';
export * from './session-input';
export * from './tool-calls';
export * from './transcript';
export * from './session-resume';
