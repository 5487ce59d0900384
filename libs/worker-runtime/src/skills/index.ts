export * from './skills-client';
export * from './stage-skills';
export * from './session-skills';
