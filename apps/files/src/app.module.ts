import { DynamicModule, Module } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { AuthModule } from '@mango/feature-auth';
import { HealthController, READINESS_CHECKS, ReadinessCheck } from '@mango/platform-http';
import { PersistenceModule } from '@mango/persistence';
import { FilesEnv } from './files.env';

@Module({})
export class AppModule {
  static forRoot(env: FilesEnv, store: ObjectStore): DynamicModule {
    const objectStoreCheck: ReadinessCheck = { name: 'object_store', check: () => store.ping() };
    return {
      module: AppModule,
      imports: [
        PersistenceModule.forRoot({ url: env.MANGO_DATABASE_URL, applicationName: 'mango-files' }),
        AuthModule,
      ],
      controllers: [HealthController],
      providers: [
        { provide: ObjectStore, useValue: store },
        { provide: READINESS_CHECKS, useValue: [objectStoreCheck] },
      ],
    };
  }
}
