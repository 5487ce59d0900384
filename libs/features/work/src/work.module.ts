import { DynamicModule, Global, Module } from '@nestjs/common';
import { WORK_TOKEN_AUTHENTICATOR } from '@mango/feature-auth';
import { WorkNotifier } from './work-notifier.service';
import { WorkTokenAuthenticatorService } from './work-token.authenticator';
import { WorkController } from './work.controller';
import { WORK_SETTINGS, WorkService, WorkSettings } from './work.service';

/** Environment Work routes, the long-poll notifier and the Work-token authenticator (global for the guard). */
@Global()
@Module({})
export class WorkModule {
  static forRoot(settings: WorkSettings): DynamicModule {
    return {
      module: WorkModule,
      controllers: [WorkController],
      providers: [
        WorkService,
        WorkNotifier,
        { provide: WORK_SETTINGS, useValue: settings },
        { provide: WORK_TOKEN_AUTHENTICATOR, useClass: WorkTokenAuthenticatorService },
      ],
      exports: [WorkService, WORK_TOKEN_AUTHENTICATOR],
    };
  }
}
