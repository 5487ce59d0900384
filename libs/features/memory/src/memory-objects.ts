import { Inject, Injectable } from '@nestjs/common';
import { ObjectStore } from '@mango/adapter-object-store';
import { isMissingObject } from '@mango/feature-files';

/**
 * Memory content in the object store. Each written version gets its own object
 * (`workspaces/{workspace}/memory_stores/{store}/versions/{memver}`), so one cleanup intent covers
 * exactly one key, as for Files: a sweeper removing an abandoned write can never remove bytes another
 * write still needs (content addressing would share keys between concurrent writers). A rename reuses
 * the previous version's object.
 */
@Injectable()
export class MemoryObjects {
  constructor(@Inject(ObjectStore) private readonly store: ObjectStore) {}

  static key(workspaceId: string, memoryStoreId: string, memoryVersionId: string): string {
    return `workspaces/${workspaceId}/memory_stores/${memoryStoreId}/versions/${memoryVersionId}`;
  }

  async put(key: string, content: Buffer): Promise<void> {
    await this.store.client.putObject(this.store.bucket, key, content, content.length, {
      'Content-Type': 'text/plain; charset=utf-8',
    });
  }

  async read(key: string): Promise<string> {
    const body = await this.store.client.getObject(this.store.bucket, key);
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  /** Missing objects are not an error. */
  async remove(key: string): Promise<void> {
    try {
      await this.store.client.removeObject(this.store.bucket, key);
    } catch (err) {
      if (!isMissingObject(err)) throw err;
    }
  }
}
