export * from './agent.view';
export * from './agents.module';
export * from './agents.service';
export * from './skill-pins';
