export * from './app-process';
export * from './http-client';
export * from './openapi-contract';
export * from './test-database';
export * from './api-under-test';
export * from './scripted-model-server';
export * from './ingress';
export * from './files-app';
