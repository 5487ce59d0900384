export * from './webhook.view';
export * from './webhooks.module';
export * from './webhooks.options';
export * from './webhooks.service';
