import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, Principal } from '@mango/feature-auth';
import { SealedReplay } from '@mango/feature-idempotency';
import { WebhooksService } from './webhooks.service';

/** `/v1/webhooks` (Mango addition): Workspace API keys only. */
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @HttpCode(201)
  @SealedReplay()
  create(@CurrentPrincipal() p: Principal, @Body() body: unknown) {
    return this.webhooks.create(p.workspaceId, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Query() query: Record<string, unknown>) {
    return this.webhooks.list(p.workspaceId, query);
  }

  @Get(':webhookId')
  get(@CurrentPrincipal() p: Principal, @Param('webhookId') id: string) {
    return this.webhooks.get(p.workspaceId, id);
  }

  @Post(':webhookId')
  @HttpCode(200)
  update(@CurrentPrincipal() p: Principal, @Param('webhookId') id: string, @Body() body: unknown) {
    return this.webhooks.update(p.workspaceId, id, body);
  }

  @Delete(':webhookId')
  @HttpCode(200)
  delete(@CurrentPrincipal() p: Principal, @Param('webhookId') id: string) {
    return this.webhooks.delete(p.workspaceId, id);
  }

  @Post(':webhookId/rotate_secret')
  @HttpCode(200)
  @SealedReplay()
  rotate(@CurrentPrincipal() p: Principal, @Param('webhookId') id: string, @Body() body: unknown) {
    return this.webhooks.rotateSecret(p.workspaceId, id, body);
  }

  @Get(':webhookId/deliveries')
  deliveries(
    @CurrentPrincipal() p: Principal,
    @Param('webhookId') id: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.webhooks.listDeliveries(p.workspaceId, id, query);
  }

  @Post(':webhookId/deliveries/:deliveryId/redeliver')
  @HttpCode(201)
  redeliver(
    @CurrentPrincipal() p: Principal,
    @Param('webhookId') id: string,
    @Param('deliveryId') deliveryId: string,
  ) {
    return this.webhooks.redeliver(p.workspaceId, id, deliveryId);
  }
}
