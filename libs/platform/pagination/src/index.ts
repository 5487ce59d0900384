export * from './page-cursor';
