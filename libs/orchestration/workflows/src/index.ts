// Workflow entry point bundled by the Temporal SDK: export every workflow function here.
export * from './probe.workflow';
export * from './session.workflow';
export * from './webhook-delivery.workflow';
export * from './deployment-run.workflow';
export * from './activities.contract';
