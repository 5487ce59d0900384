import { DynamicModule, Module } from '@nestjs/common';
import type { Keyring } from '@mango/platform-secrets';
import { VaultCredentialsService } from './vault-credentials.service';
import { VAULT_KEYRING } from './vault-keyring';
import { VaultsController } from './vaults.controller';
import { VaultsService } from './vaults.service';

/** `/v1/vaults*`. `keyring` null: Vaults work, but storing a credential is refused (400). */
@Module({})
export class VaultsModule {
  static forRoot(options: { keyring: Keyring | null }): DynamicModule {
    return {
      module: VaultsModule,
      controllers: [VaultsController],
      providers: [
        { provide: VAULT_KEYRING, useValue: options.keyring },
        VaultsService,
        VaultCredentialsService,
      ],
      exports: [VaultsService, VaultCredentialsService, VAULT_KEYRING],
    };
  }
}
