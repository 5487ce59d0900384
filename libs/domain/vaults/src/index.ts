export * from './credential-input';
export * from './mcp-url';
