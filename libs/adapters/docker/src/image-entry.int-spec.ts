import { createDockerClient, imageItemEntry } from './docker-engine';

describe('imageItemEntry (real dockerd)', () => {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  const tag = `mango-entry-test:${process.pid}`;

  afterAll(async () => {
    await docker
      .getImage(tag)
      .remove({ force: true })
      .catch(() => undefined);
  });

  it('reads the precompiled runner an image declares, and nothing from an image without one', async () => {
    expect(await imageItemEntry(docker, process.env.MANGO_BASE_IMAGE!)).toBeUndefined();
    // A derived image that declares an entry (committed from a created, never started, container).
    const c = await docker.createContainer({ Image: process.env.MANGO_BASE_IMAGE!, Cmd: ['true'] });
    try {
      const [repo, version] = tag.split(':');
      await c.commit({ repo, tag: version, changes: 'ENV MANGO_ITEM_ENTRY=/opt/mango/dist/x/item-main.js' });
    } finally {
      await c.remove({ force: true });
    }
    expect(await imageItemEntry(docker, tag)).toBe('/opt/mango/dist/x/item-main.js');
  });
});
