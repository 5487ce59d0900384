export * from './vault-credentials.service';
export * from './vault-keyring';
export * from './vault.views';
export * from './vaults.controller';
export * from './vaults.module';
export * from './vaults.service';
export * from './oauth-refresh';
