export * from './mcp-connector';
