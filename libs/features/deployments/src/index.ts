export * from './deployment-runner';
export * from './deployment-schedule-reconciler';
export * from './deployment-scheduler';
export * from './deployment.view';
export * from './deployments.module';
export * from './deployments.service';
