import type { Container } from 'dockerode';

/**
 * `docker pause`, again while runc answers "unable to freeze": on a loaded machine the cgroup freeze can
 * time out (runc thaws the container and gives up), which says nothing about the code under test.
 */
export async function pauseContainer(container: Container): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await container.pause();
    } catch (err) {
      if (attempt >= 10 || !/unable to freeze/.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
