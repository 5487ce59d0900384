export * from './periodic-pass';
