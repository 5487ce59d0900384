import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { EARLY_AUTHENTICATOR } from '@mango/platform-http';
import { AuthGuard } from './auth.guard';
import { RequestAuthenticator } from './request-authenticator';

/**
 * Installs the credential guard on every route of the app, and the header check `createHttpApp` runs
 * before reading any body (`EARLY_AUTHENTICATOR`); both use the one `RequestAuthenticator`, exported
 * for other request-level checks (e.g. limits per key) that need the principal.
 */
@Module({
  providers: [
    RequestAuthenticator,
    { provide: EARLY_AUTHENTICATOR, useExisting: RequestAuthenticator },
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [RequestAuthenticator, EARLY_AUTHENTICATOR],
})
export class AuthModule {}
