import type { Agent, Environment, PolledWork, RedactedWork } from '../types';

const T0 = '2026-01-02T03:04:05.678Z';

export function agentFixture(id = 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB', overrides: Partial<Agent> = {}): Agent {
  return {
    id,
    type: 'agent',
    name: 'triage',
    description: null,
    system: 'You are helpful.',
    model: { id: 'claude-sonnet-4-5' },
    tools: [],
    mcp_servers: [],
    skills: [],
    multiagent: null,
    metadata: {},
    version: 1,
    created_at: T0,
    updated_at: T0,
    archived_at: null,
    ...overrides,
  };
}

export function environmentFixture(
  id = 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
  overrides: Partial<Environment> = {},
): Environment {
  return {
    id,
    type: 'environment',
    name: 'local',
    description: null,
    config: { type: 'self_hosted' },
    scope: 'organization',
    metadata: {},
    created_at: T0,
    updated_at: T0,
    archived_at: null,
    ...overrides,
  };
}

export function workFixture(
  id = 'work_01JD2Y3QX9V5M8K7R6T4W2P0AB',
  overrides: Partial<RedactedWork> = {},
): RedactedWork {
  return {
    id,
    type: 'work',
    environment_id: 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
    data: { type: 'healthcheck' },
    state: 'queued',
    secret: null,
    metadata: {},
    result: null,
    expires_at: '2026-01-02T03:06:05.678Z',
    created_at: T0,
    acknowledged_at: null,
    started_at: null,
    latest_heartbeat_at: null,
    stop_requested_at: null,
    stopped_at: null,
    ...overrides,
  };
}

export function polledWorkFixture(secret: string, id = 'work_01JD2Y3QX9V5M8K7R6T4W2P0AB'): PolledWork {
  return { ...workFixture(id), state: 'queued', secret };
}
