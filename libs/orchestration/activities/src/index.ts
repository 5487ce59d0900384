export * from './probe.activities';
export * from './session.activities';
