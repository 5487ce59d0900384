import { DynamicModule, Module } from '@nestjs/common';
import { WebhooksController } from './webhooks.controller';
import { WEBHOOKS_OPTIONS, WebhooksOptions } from './webhooks.options';
import { WebhooksService } from './webhooks.service';

@Module({})
export class WebhooksModule {
  static forRoot(options: WebhooksOptions): DynamicModule {
    return {
      module: WebhooksModule,
      controllers: [WebhooksController],
      providers: [{ provide: WEBHOOKS_OPTIONS, useValue: options }, WebhooksService],
      exports: [WebhooksService],
    };
  }
}
