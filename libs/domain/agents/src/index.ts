export * from './agent-definition';
export * from './parse-agent';
