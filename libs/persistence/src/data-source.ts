import 'reflect-metadata';
import { DataSource, DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export interface DatabaseSettings {
  url: string;
  /** Pool size per process. */
  poolSize?: number;
  applicationName?: string;
  /** How long a query waits for a free pool connection before failing (default 10 s). */
  acquireTimeoutMs?: number;
}

/** The one DataSource definition, used by every app, the CLI and the tests. Never synchronizes. */
export function dataSourceOptions(settings: DatabaseSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'mango_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: settings.poolSize ?? 10,
      application_name: settings.applicationName ?? 'mango',
      connectionTimeoutMillis: settings.acquireTimeoutMs ?? 10_000,
    },
  };
}

export function createDataSource(settings: DatabaseSettings): DataSource {
  return new DataSource(dataSourceOptions(settings));
}
