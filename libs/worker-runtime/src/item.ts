// The item runner's entry surface (`@mango/worker-runtime/item`, apps/supervisor item-main.ts): only what
// every Work item needs before its first heartbeat. The Session tool runner, its tools, Skills, Memory and
// operator custom tools load only for Session Work (item-runner.ts), so a healthcheck's runner starts on a
// fraction of the modules (docs/operator-guide.md "Item runner start-up").
export * from './healthcheck-probe';
export * from './item-options';
export * from './item-runner';
export * from './non-dumpable';
export * from './egress-forwarder';
