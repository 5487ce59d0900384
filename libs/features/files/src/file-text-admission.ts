import { DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { FILE_TEXT_READER, FileText, FileTextReader, invalidRequest, notFound } from '@mango/domain-kernel';
import { FileEntity } from '@mango/persistence';
import { isId } from '@mango/platform-ids';
import { DataSource } from 'typeorm';
import { FileObjects, isMissingObject } from './file-objects';
import { DEFAULT_FILES_SETTINGS, FILES_SETTINGS } from './files.settings';

/** Default bound of a File admitted as a text document (bytes). */
export const DEFAULT_FILE_TEXT_MAX_BYTES = 1_000_000;
export const FILE_TEXT_SETTINGS = Symbol('FILE_TEXT_SETTINGS');
export interface FileTextSettings {
  /** Largest File (bytes) admitted as a text document; larger is 400. */
  maxBytes: number;
}

/** Leading bytes of formats that are never text, named in the refusal. */
const SIGNATURES: Array<[string, number[]]> = [
  ['a PDF', [0x25, 0x50, 0x44, 0x46, 0x2d]],
  ['a PNG image', [0x89, 0x50, 0x4e, 0x47]],
  ['a JPEG image', [0xff, 0xd8, 0xff]],
  ['a GIF image', [0x47, 0x49, 0x46, 0x38]],
];

const refuse = (fileId: string, reason: string, message: string) =>
  invalidRequest(`File ${fileId} ${message}; File documents must be UTF-8 text`, { file_id: fileId, reason });

/**
 * Bounded text admission for File-sourced document blocks (see docs/capabilities.md: "File messages support bounded
 * UTF-8 documents, not images or PDFs"). `readText(workspaceId, fileId)` returns the File's text when it
 * is the Workspace's File, at most `maxBytes`, not an image or PDF (by media type or leading bytes), and
 * strictly valid UTF-8 (a leading BOM is dropped). Otherwise: 404 `not_found_error` for a missing or
 * foreign File; 400 `invalid_request_error` with `details.reason` one of `image`, `pdf`, `too_large`,
 * `not_utf8`.
 */
@Injectable()
export class FileTextAdmission implements FileTextReader {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(FileObjects) private readonly objects: FileObjects,
    @Inject(FILE_TEXT_SETTINGS) private readonly settings: FileTextSettings,
  ) {}

  async readText(workspaceId: string, fileId: string): Promise<FileText> {
    if (!isId('file', fileId)) throw notFound('file', fileId);
    const file = await this.dataSource.manager.findOne(FileEntity, { where: { id: fileId, workspaceId } });
    if (!file) throw notFound('file', fileId);
    if (file.mimeType.startsWith('image/'))
      throw refuse(fileId, 'image', `is an image (${file.mimeType}); images are not supported`);
    if (file.mimeType === 'application/pdf') throw refuse(fileId, 'pdf', 'is a PDF; PDFs are not supported');
    if (file.sizeBytes > this.settings.maxBytes)
      throw refuse(
        fileId,
        'too_large',
        `has ${file.sizeBytes} bytes; a File document may have at most ${this.settings.maxBytes}`,
      );
    const bytes = await this.readBytes(file);
    for (const [what, sig] of SIGNATURES)
      if (sig.every((b, i) => bytes[i] === b))
        throw refuse(
          fileId,
          what.includes('PDF') ? 'pdf' : 'image',
          `is ${what}; images and PDFs are not supported`,
        );
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw refuse(fileId, 'not_utf8', 'is not valid UTF-8 text');
    }
    return { fileId, filename: file.filename, mimeType: file.mimeType, sizeBytes: file.sizeBytes, text };
  }

  /** The object's bytes, never more than the bound (+1 to notice a store that disagrees with the row). */
  private async readBytes(file: FileEntity): Promise<Buffer> {
    let body;
    try {
      body = await this.objects.open(file.objectKey);
    } catch (err) {
      if (isMissingObject(err)) throw notFound('file', file.id);
      throw err;
    }
    const chunks: Buffer[] = [];
    let n = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      n += chunk.length;
      if (n > this.settings.maxBytes) {
        body.destroy();
        throw refuse(file.id, 'too_large', `has more than ${this.settings.maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, n);
  }
}

/**
 * Provides `FileTextAdmission` as `FILE_TEXT_READER` (global) for an app that admits File documents
 * (apps/api): it needs the same object store and bucket as apps/files, and PostgreSQL (already there).
 */
@Module({})
export class FileTextAdmissionModule {
  static forRoot(options: { store: ObjectStore; maxBytes?: number }): DynamicModule {
    return {
      module: FileTextAdmissionModule,
      global: true,
      providers: [
        { provide: ObjectStore, useValue: options.store },
        { provide: FILES_SETTINGS, useValue: DEFAULT_FILES_SETTINGS },
        {
          provide: FILE_TEXT_SETTINGS,
          useValue: { maxBytes: options.maxBytes ?? DEFAULT_FILE_TEXT_MAX_BYTES },
        },
        FileObjects,
        FileTextAdmission,
        { provide: FILE_TEXT_READER, useExisting: FileTextAdmission },
      ],
      exports: [FILE_TEXT_READER, FileTextAdmission],
    };
  }
}
