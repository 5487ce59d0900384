import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SupervisorEnv } from './supervisor.env';

describe('SupervisorEnv defaults', () => {
  it('starts Work containers from the sandbox image of its own version (mango-sandbox:<package.json version>)', () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8'));
    expect(new SupervisorEnv().MANGO_WORKER_IMAGE).toBe(`mango-sandbox:${version}`);
  });
});
