import { DynamicModule, Module } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { ObjectCleanupRepository } from '@mango/feature-files';
import { MemoriesService } from './memories.service';
import { MemoryAccess } from './memory-access';
import { MemoryObjects } from './memory-objects';
import { MemoryStoresController } from './memory-stores.controller';
import { MemoryStoresService } from './memory-stores.service';
import { MemoryVersionsService } from './memory-versions.service';
import { MEMORY_SETTINGS, MemorySettings } from './memory.settings';

/**
 * `/v1/memory_stores*` on the object store. Content objects are covered by the same `object_cleanups`
 * intents as Files, so the Files sweeper of every apps/files process also finishes abandoned Memory
 * writes and deletes.
 */
@Module({})
export class MemoryModule {
  static forRoot(options: { store: ObjectStore; settings: MemorySettings }): DynamicModule {
    return {
      module: MemoryModule,
      controllers: [MemoryStoresController],
      providers: [
        { provide: ObjectStore, useValue: options.store },
        { provide: MEMORY_SETTINGS, useValue: options.settings },
        ObjectCleanupRepository,
        MemoryObjects,
        MemoryAccess,
        MemoryStoresService,
        MemoriesService,
        MemoryVersionsService,
      ],
      exports: [MemoriesService, MemoryStoresService],
    };
  }
}
