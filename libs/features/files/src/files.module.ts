import { DynamicModule, Module } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { DeleteFile } from './delete-file.usecase';
import { FileObjects } from './file-objects';
import { FilesController } from './files.controller';
import { FilesService } from './files.service';
import { FILES_SETTINGS, FilesSettings } from './files.settings';
import { ObjectCleanupRepository } from './object-cleanup.repository';
import { ObjectCleanupSweeper } from './object-cleanup.sweeper';
import { UploadFile } from './upload-file.usecase';

/** `/v1/files*` on the object store, with the cleanup sweeper that makes uploads and deletes recoverable. */
@Module({})
export class FilesModule {
  static forRoot(options: { store: ObjectStore; settings: FilesSettings }): DynamicModule {
    return {
      module: FilesModule,
      controllers: [FilesController],
      providers: [
        { provide: ObjectStore, useValue: options.store },
        { provide: FILES_SETTINGS, useValue: options.settings },
        ObjectCleanupRepository,
        FileObjects,
        UploadFile,
        DeleteFile,
        FilesService,
        ObjectCleanupSweeper,
      ],
      exports: [ObjectCleanupSweeper],
    };
  }
}
