import { DynamicModule, Global, Module } from '@nestjs/common';
import { WORK_TOKEN_AUTHENTICATOR } from '@mango/feature-auth';
import { PollWorkUseCase } from './poll-work.usecase';
import { SessionLogTerminator } from './session-log.terminator';
import { SESSION_TERMINATOR } from './session-terminator.port';
import { WorkNotifier } from './work-notifier.service';
import { WorkTransitionsService } from './work-transitions.service';
import { WorkTokenAuthenticatorService } from './work-token-authenticator.service';
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
        PollWorkUseCase,
        WorkTransitionsService,
        WorkNotifier,
        // The Session side of Fail; rebind to the Session log repository's terminator when it lands.
        { provide: SESSION_TERMINATOR, useClass: SessionLogTerminator },
        { provide: WORK_SETTINGS, useValue: settings },
        { provide: WORK_TOKEN_AUTHENTICATOR, useClass: WorkTokenAuthenticatorService },
      ],
      exports: [WorkService, WORK_TOKEN_AUTHENTICATOR],
    };
  }
}
