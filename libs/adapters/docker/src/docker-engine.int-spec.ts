import { createDockerClient, engineInfo } from './docker-engine';

describe('Docker engine adapter (real dockerd)', () => {
  it('reports the engine version over DOCKER_HOST', async () => {
    const info = await engineInfo(createDockerClient(process.env.DOCKER_HOST));
    expect(info.version).toMatch(/^\d+\.\d+/);
    expect(info.apiVersion).toMatch(/^1\.\d+$/);
    expect(info.os).toBe('linux');
  });

  it('fails fast on an unreachable engine', async () => {
    await expect(engineInfo(createDockerClient('unix:///nonexistent/docker.sock'))).rejects.toThrow();
  });
});
