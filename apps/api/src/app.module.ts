import { DynamicModule, Module } from '@nestjs/common';
import { AgentsModule } from '@mango/feature-agents';
import { AuthModule } from '@mango/feature-auth';
import { EnvironmentsModule } from '@mango/feature-environments';
import { SessionsModule } from '@mango/feature-sessions';
import { WorkModule } from '@mango/feature-work';
import { HealthController } from '@mango/platform-http';
import { PersistenceModule } from '@mango/persistence';
import { ApiEnv } from './api.env';

@Module({})
export class AppModule {
  static forRoot(env: ApiEnv): DynamicModule {
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
        WorkModule.forRoot({ publicBaseUrl: env.MANGO_PUBLIC_BASE_URL }),
      ],
      controllers: [HealthController],
    };
  }
}
