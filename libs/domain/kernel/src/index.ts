export * from './assert-never';
export * from './wire-time';
export * from './domain-error';
export * from './metadata';
export * from './input-reader';
export * from './ids';
export * from './skill-paths';
export * from './file-text';
