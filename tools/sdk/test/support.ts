import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiUnderTest, startApi } from '@mango/testing';

const ROOT = join(__dirname, '../../..');

/** What the live SDK suites read from their environment. */
export interface LiveTarget {
  api: ApiUnderTest;
  env: {
    MANGO_BASE_URL: string;
    MANGO_API_KEY: string;
    MANGO_ENVIRONMENT_ID: string;
    MANGO_ENVIRONMENT_KEY: string;
  };
}

/** A real apps/api process with a Workspace key, an Environment and an Environment key for it. */
export async function startLiveTarget(label: string): Promise<LiveTarget> {
  const api = await startApi(label);
  try {
    const key = await api.issueKey('wrkspc_default');
    const res = await fetch(`${api.url}/v1/environments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `${label}-env` }),
    });
    if (res.status !== 201) throw new Error(`creating the Environment: ${res.status} ${await res.text()}`);
    const env = (await res.json()) as { id: string };
    const envKey = await api.issueKey('wrkspc_default', env.id);
    return {
      api,
      env: {
        MANGO_BASE_URL: api.url,
        MANGO_API_KEY: key.api_key,
        MANGO_ENVIRONMENT_ID: env.id,
        MANGO_ENVIRONMENT_KEY: envKey.api_key,
      },
    };
  } catch (err) {
    await api.close();
    throw err;
  }
}

export interface LiveRun {
  code: number | null;
  output: string;
  report: {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numFailedTestSuites: number;
  };
}

/** Runs `tools/sdk/run.sh <target>` (python-live / go-live) against the target and reads its test report. */
export async function runLiveSuite(
  target: 'python-live' | 'go-live',
  env: LiveTarget['env'],
): Promise<LiveRun> {
  const dir = mkdtempSync(join(tmpdir(), 'mango-sdk-live-'));
  const reportPath = join(dir, 'report.json');
  try {
    const child = spawn('bash', [join(ROOT, 'tools/sdk/run.sh'), target], {
      cwd: ROOT,
      env: { ...process.env, ...env, SDK_REPORT: reportPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    let report: LiveRun['report'];
    try {
      report = JSON.parse(readFileSync(reportPath, 'utf8'));
    } catch {
      throw new Error(`${target} wrote no test report (exit ${code}):\n${output}`);
    }
    return { code, output, report };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
