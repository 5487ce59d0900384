/**
 * The webhook event vocabulary (`data.type`; docs/api-guide.md, Webhooks), restricted to what Mango emits. A type is
 * listed here only once something emits it, so a subscription never waits for an event that cannot come.
 */
export const SESSION_WEBHOOK_TYPES = [
  'session.created',
  'session.updated',
  'session.archived',
  'session.deleted',
  'session.status_run_started',
  'session.status_idled',
  'session.status_rescheduled',
  'session.status_terminated',
  'session.requires_action',
  'session.budget_reached',
  // Delegate and Advisor Threads (ADR 0017); `data.session_thread_id` names the Thread.
  'session.thread_created',
  'session.thread_idled',
  'session.thread_terminated',
] as const;

/**
 * Deployment and run events. A run records `deployment_run.started` and, in the same transaction, its
 * outcome (`succeeded` with a Session, or `failed` with an error). There is no DELETE for Deployments.
 */
export const DEPLOYMENT_WEBHOOK_TYPES = [
  'deployment.created',
  'deployment.updated',
  'deployment.paused',
  'deployment.unpaused',
  'deployment.archived',
  'deployment_run.started',
  'deployment_run.succeeded',
  'deployment_run.failed',
] as const;

/**
 * Events of the other resources, each recorded in the transaction of its change. `vault_credential.*`
 * carry `data.vault_id`; `vault_credential.refresh_failed` is recorded with the failure on the credential.
 * Mango has no DELETE for Agents, so `agent.deleted` is not emitted.
 */
export const RESOURCE_WEBHOOK_TYPES = [
  'agent.created',
  'agent.updated',
  'agent.archived',
  'environment.created',
  'environment.updated',
  'environment.archived',
  'environment.deleted',
  'vault.created',
  'vault.archived',
  'vault.deleted',
  'vault_credential.created',
  'vault_credential.archived',
  'vault_credential.deleted',
  'vault_credential.refresh_failed',
  'memory_store.created',
  'memory_store.archived',
  'memory_store.deleted',
] as const;

export const WEBHOOK_EVENT_TYPES: readonly string[] = [
  ...SESSION_WEBHOOK_TYPES,
  ...DEPLOYMENT_WEBHOOK_TYPES,
  ...RESOURCE_WEBHOOK_TYPES,
];

/** §3.12 types Mango knows but does not emit (yet): refused with a message that says so. */
export const HOSTED_ONLY_WEBHOOK_TYPES: readonly string[] = [
  'session.pending',
  'session.running',
  'session.idled',
  'session.status_scheduled',
  'session.thread_created',
  'session.thread_idled',
  'session.thread_terminated',
  'session.outcome_evaluation_ended',
  'vault.created',
  'vault.archived',
  'vault.deleted',
  'vault_credential.created',
  'vault_credential.archived',
  'vault_credential.deleted',
  'vault_credential.refresh_failed',
  'agent.created',
  'agent.updated',
  'agent.archived',
  'agent.deleted',
  'deployment.created',
  'deployment.updated',
  'deployment.paused',
  'deployment.unpaused',
  'deployment.archived',
  'deployment.deleted',
  'deployment_run.started',
  'deployment_run.succeeded',
  'deployment_run.failed',
  'environment.created',
  'environment.updated',
  'environment.archived',
  'environment.deleted',
  'memory_store.created',
  'memory_store.archived',
  'memory_store.deleted',
].filter((t) => !WEBHOOK_EVENT_TYPES.includes(t));

/**
 * The webhook events a Session event announces (the appended event's type and body). Session creation
 * and archiving have no Session event and are recorded by the service that performs them.
 */
export function webhookTypesForSessionEvent(type: string, body: Record<string, unknown>): string[] {
  switch (type) {
    case 'session.status_running':
      return ['session.status_run_started'];
    case 'session.status_idle': {
      const reason = (body.stop_reason as { type?: unknown } | undefined)?.type;
      const out = ['session.status_idled'];
      if (reason === 'requires_action') out.push('session.requires_action');
      if (reason === 'budget_reached') out.push('session.budget_reached');
      return out;
    }
    case 'session.thread_created':
      return ['session.thread_created'];
    case 'session.thread_status_idle':
      return ['session.thread_idled'];
    case 'session.thread_status_terminated':
      return ['session.thread_terminated'];
    case 'session.status_rescheduled':
    case 'session.status_terminated':
    case 'session.updated':
    case 'session.deleted':
      return [type];
    default:
      return [];
  }
}
