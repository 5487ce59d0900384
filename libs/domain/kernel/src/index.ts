export * from './assert-never';
export * from './clock';
export * from './domain-error';
export * from './metadata';
export * from './input-reader';
export * from './skill-paths';
export * from './file-text';
