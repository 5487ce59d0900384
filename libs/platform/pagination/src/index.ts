export * from './page-cursor';
export * from './list-query';
