export * from './bash';
export * from './confine';
export * from './toolset';
export * from './types';
