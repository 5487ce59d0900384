export * from './skills-client';
export * from './stage-skills';
