export * from './agent-definition';
export * from './parse-agent';
export * from './sandbox-tools';
export * from './auto-permission';
