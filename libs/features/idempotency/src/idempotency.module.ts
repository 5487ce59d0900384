import { DynamicModule, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyPruner } from './idempotency-pruner';
import { IDEMPOTENCY_SETTINGS, IdempotencySettings } from './idempotency.settings';

/** `Idempotency-Key` on every POST of the app, and the loop that prunes expired keys. */
@Module({})
export class IdempotencyModule {
  static forRoot(settings: IdempotencySettings): DynamicModule {
    return {
      module: IdempotencyModule,
      providers: [
        { provide: IDEMPOTENCY_SETTINGS, useValue: settings },
        { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
        IdempotencyPruner,
      ],
      exports: [IdempotencyPruner],
    };
  }
}
