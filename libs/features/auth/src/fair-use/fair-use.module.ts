import { DynamicModule, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { FAIR_USE_SETTINGS, FairUseInterceptor } from './fair-use.interceptor';
import type { FairUseSettings } from './fair-use.settings';

/**
 * Installs fair use (request rates and stream slots per credential and per Workspace) on every route of
 * the app. An interceptor: it runs after the auth guard, on the principal that guard established.
 */
@Module({})
export class FairUseModule {
  static forRoot(settings: FairUseSettings): DynamicModule {
    return {
      module: FairUseModule,
      providers: [
        { provide: FAIR_USE_SETTINGS, useValue: settings },
        FairUseInterceptor,
        { provide: APP_INTERCEPTOR, useExisting: FairUseInterceptor },
      ],
      exports: [FairUseInterceptor],
    };
  }
}
