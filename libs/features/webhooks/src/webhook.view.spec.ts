import type { WebhookEntity } from '@mango/persistence';
import { renderWebhook } from './webhook.view';

describe('renderWebhook', () => {
  it('never renders the sealed secrets, and reports disabled from disabled_at', () => {
    const at = new Date('2026-12-01T10:00:00.000Z');
    const row = {
      id: 'webhook_01JD2Y3QX9V5M8K7R6T4W2P0AB',
      workspaceId: 'wrkspc_default',
      url: 'https://hooks.example.com/x',
      eventTypes: ['session.created'],
      description: null,
      metadata: {},
      secrets: [{ sealed: 'SEALED-SECRET', expires_at: null }],
      disabledAt: at,
      createdAt: at,
      updatedAt: at,
      deletedAt: null,
    } as WebhookEntity;
    const view = renderWebhook(row);
    expect(JSON.stringify(view)).not.toContain('SEALED-SECRET');
    expect(view).toMatchObject({ type: 'webhook', disabled: true, disabled_at: at.toISOString() });
    expect(renderWebhook({ ...row, disabledAt: null } as WebhookEntity)).toMatchObject({
      disabled: false,
      disabled_at: null,
    });
  });
});
