import { DynamicModule, Module } from '@nestjs/common';
import { AgentsModule } from '@mango/feature-agents';
import { ObjectStore } from '@mango/adapter-object-store';
import { AuthModule } from '@mango/feature-auth';
import { EnvironmentsModule } from '@mango/feature-environments';
import { FileTextAdmissionModule } from '@mango/feature-files';
import { MODEL_PRICES, SessionsModule } from '@mango/feature-sessions';
import { parsePriceTable } from '@mango/domain-sessions';
import { VaultsModule } from '@mango/feature-vaults';
import { parseAddressAllowlist } from '@mango/domain-mcp';
import { WorkModule } from '@mango/feature-work';
import { HealthController } from '@mango/platform-http';
import { PersistenceModule } from '@mango/persistence';
import type { Keyring } from '@mango/platform-secrets';
import { ApiEnv } from './api.env';

@Module({})
export class AppModule {
  static forRoot(env: ApiEnv, keyring: Keyring | null): DynamicModule {
    return {
      module: AppModule,
      imports: [
        PersistenceModule.forRoot({
          url: env.MANGO_DATABASE_URL,
          poolSize: env.MANGO_DB_POOL_SIZE,
          applicationName: 'mango-api',
        }),
        AuthModule,
        AgentsModule,
        EnvironmentsModule,
        SessionsModule,
        modelPrices(env),
        VaultsModule.forRoot({ keyring, allowlist: parseAddressAllowlist(env.MANGO_MCP_ALLOWED_ADDRESSES) }),
        WorkModule.forRoot({ publicBaseUrl: env.MANGO_PUBLIC_BASE_URL }),
        // FILE_TEXT_READER (bounded UTF-8 text of a File) only when object storage is configured.
        ...(env.MANGO_S3_ENDPOINT ? [fileText(env)] : []),
      ],
      controllers: [HealthController],
    };
  }
}

function fileText(env: ApiEnv): DynamicModule {
  const store = new ObjectStore({
    endpoint: env.MANGO_S3_ENDPOINT!,
    accessKey: env.MANGO_S3_ACCESS_KEY!,
    secretKey: env.MANGO_S3_SECRET_KEY!,
    region: env.MANGO_S3_REGION,
    bucket: env.MANGO_S3_BUCKET,
  });
  return FileTextAdmissionModule.forRoot({ store, maxBytes: env.MANGO_FILES_TEXT_MAX_BYTES });
}

/** `MANGO_MODEL_PRICES` for budget checks, parsed at boot (a bad table stops the app with its message). */
function modelPrices(env: ApiEnv): DynamicModule {
  const table = parsePriceTable(env.MANGO_MODEL_PRICES);
  return {
    module: class ModelPricesModule {},
    global: true,
    providers: [{ provide: MODEL_PRICES, useValue: table }],
    exports: [MODEL_PRICES],
  };
}
