export * from './environment.view';
export * from './environments.module';
export * from './environments.service';
