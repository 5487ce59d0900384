export * from './probe.activities';
export * from './session.activities';
export * from './mcp.activities';
