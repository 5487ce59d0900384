export * from './mcp-address';
export * from './mcp-journal';
export * from './mcp-results';
export * from './mcp-tools';
