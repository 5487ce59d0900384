/** Variables never passed to the shell: Mango's own settings and credentials, and the SDK's. */
const SCRUBBED = /^(MANGO_|ANTHROPIC_)/i;
const SECRETISH = /(TOKEN|SECRET|PASSWORD|API_KEY|ENVIRONMENT_KEY)/i;

/** The Bash environment: the runner's environment without Mango credentials, plus a quiet prompt. */
export function shellEnv(base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined || SCRUBBED.test(k) || SECRETISH.test(k)) continue;
    env[k] = v;
  }
  return { ...env, PS1: '', PS2: '', PROMPT_COMMAND: '', TERM: 'dumb', HISTFILE: '/dev/null' };
}
