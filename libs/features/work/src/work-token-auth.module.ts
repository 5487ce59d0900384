import { Global, Module } from '@nestjs/common';
import { WORK_TOKEN_AUTHENTICATOR } from '@mango/feature-auth';
import { WorkTokenAuthenticatorService } from './work-token-authenticator.service';

/**
 * Only the Work-token authenticator (global, for the auth guard), without the Work routes: for apps
 * other than apps/api (apps/files) that must tell a live Work token from a dead one.
 */
@Global()
@Module({
  providers: [{ provide: WORK_TOKEN_AUTHENTICATOR, useClass: WorkTokenAuthenticatorService }],
  exports: [WORK_TOKEN_AUTHENTICATOR],
})
export class WorkTokenAuthModule {}
