import { DynamicModule, Module } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { DeleteFile } from './delete-file.usecase';
import { FileObjects } from './file-objects';
import { FilesController } from './files.controller';
import { FilesService } from './files.service';
import { FILES_SETTINGS, FilesSettings } from './files.settings';
import { ObjectCleanupRepository } from './object-cleanup.repository';
import { ObjectCleanupSweeper } from './object-cleanup.sweeper';
import { SkillsController } from './skills/skills.controller';
import { SkillTextsBackfill } from './skills/skill-texts-backfill';
import { SkillsService } from './skills/skills.service';
import { DEFAULT_SKILLS_SETTINGS, SKILLS_SETTINGS, SkillsSettings } from './skills/skills.settings';
import { UploadSkill } from './skills/upload-skill.usecase';
import { UploadFile } from './upload-file.usecase';

/**
 * `/v1/files*` and `/v1/skills*` on the object store, with the cleanup sweeper that makes uploads and
 * deletes of both recoverable.
 */
@Module({})
export class FilesModule {
  static forRoot(options: {
    store: ObjectStore;
    settings: FilesSettings;
    skills?: SkillsSettings;
  }): DynamicModule {
    return {
      module: FilesModule,
      controllers: [FilesController, SkillsController],
      providers: [
        { provide: ObjectStore, useValue: options.store },
        { provide: FILES_SETTINGS, useValue: options.settings },
        { provide: SKILLS_SETTINGS, useValue: options.skills ?? DEFAULT_SKILLS_SETTINGS },
        ObjectCleanupRepository,
        FileObjects,
        UploadFile,
        DeleteFile,
        FilesService,
        UploadSkill,
        SkillsService,
        SkillTextsBackfill,
        ObjectCleanupSweeper,
      ],
      exports: [ObjectCleanupSweeper],
    };
  }
}
