/**
 * The port between event admission (control plane) and File storage: read a File as bounded UTF-8 text.
 * apps/files' feature provides it (`FileTextAdmission`); apps/api binds it to `FILE_TEXT_READER` when
 * object storage is configured. Refusals are DomainErrors: 404 for a File that is not the Workspace's,
 * 400 for anything that is not bounded UTF-8 text (images and PDFs named as such).
 */
export interface FileText {
  fileId: string;
  filename: string;
  mimeType: string;
  sizeBytes: number;
  text: string;
}

export interface FileTextReader {
  readText(workspaceId: string, fileId: string): Promise<FileText>;
}

export const FILE_TEXT_READER = Symbol.for('mango.FileTextReader');
