import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createDataSource, DatabaseSettings } from './data-source';

/** Provides the app's single initialized DataSource and closes it on shutdown. */
@Global()
@Module({})
export class PersistenceModule implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  static forRoot(settings: DatabaseSettings): DynamicModule {
    return {
      module: PersistenceModule,
      providers: [
        {
          provide: DataSource,
          useFactory: async () => createDataSource(settings).initialize(),
        },
      ],
      exports: [DataSource],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
