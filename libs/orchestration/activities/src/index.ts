export * from './probe.activities';
