import { DynamicModule, Module } from '@nestjs/common';
import type { Keyring } from '@mango/platform-secrets';
import { VaultCredentialsService } from './vault-credentials.service';
import type { AddressAllowlist } from '@mango/domain-mcp';
import { MCP_ALLOWLIST, VAULT_KEYRING } from './vault-keyring';
import { VaultsController } from './vaults.controller';
import { VaultsService } from './vaults.service';

/**
 * `/v1/vaults*`. `keyring` null: Vaults work, but storing a credential is refused (400). `allowlist`: the
 * non-public addresses `mcp_oauth_validate` may reach (MANGO_MCP_ALLOWED_ADDRESSES; default none).
 */
@Module({})
export class VaultsModule {
  static forRoot(options: { keyring: Keyring | null; allowlist?: AddressAllowlist }): DynamicModule {
    return {
      module: VaultsModule,
      controllers: [VaultsController],
      providers: [
        { provide: VAULT_KEYRING, useValue: options.keyring },
        { provide: MCP_ALLOWLIST, useValue: options.allowlist ?? { entries: [], allows: () => false } },
        VaultsService,
        VaultCredentialsService,
      ],
      exports: [VaultsService, VaultCredentialsService, VAULT_KEYRING],
    };
  }
}
