import type { Agent, Environment, PolledWork, RedactedWork, Session, SessionEvent } from '../types';

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

export function sessionFixture(
  id = 'sesn_01JD2Y3QX9V5M8K7R6T4W2P0AB',
  overrides: Partial<Session> = {},
): Session {
  return {
    id,
    type: 'session',
    title: null,
    status: 'idle',
    agent: {
      id: 'agent_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      type: 'agent',
      version: 1,
      name: 'triage',
      description: null,
      system: 'You are helpful.',
      model: { id: 'claude-sonnet-4-5' },
      tools: [],
      mcp_servers: [],
      skills: [],
      multiagent: null,
    },
    environment_id: 'env_01JD2Y3QX9V5M8K7R6T4W2P0AB',
    resources: [],
    vault_ids: [],
    metadata: {},
    budget: null,
    usage: {},
    stats: {},
    outcome_evaluations: [],
    created_at: T0,
    updated_at: T0,
    archived_at: null,
    ...overrides,
  };
}

/** A `user.message` event whose id and text encode `seq` (e.g. `sevt_…00007`, `"m7"`). */
export function messageEventFixture(seq: number): SessionEvent {
  return {
    id: `sevt_01JD2Y3QX9V5M8K7R6T4W${String(seq).padStart(5, '0')}`,
    type: 'user.message',
    content: [{ type: 'text', text: `m${seq}` }],
    processed_at: null,
  };
}

export function deletedEventFixture(seq: number): SessionEvent {
  return {
    id: `sevt_01JD2Y3QX9V5M8K7R6T4W${String(seq).padStart(5, '0')}`,
    type: 'session.deleted',
    processed_at: null,
  };
}
