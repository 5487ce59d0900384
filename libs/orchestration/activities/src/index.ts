export * from './probe.activities';
export * from './session.activities';
export * from './webhook.activities';
export * from './deployment.activities';
export * from './mcp.activities';
