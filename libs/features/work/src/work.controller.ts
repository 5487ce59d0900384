import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import { AllowCredentials, CurrentPrincipal, Principal } from '@mango/feature-auth';
import { IdempotentByProtocol } from '@mango/feature-idempotency';
import { PollWorkUseCase } from './poll-work.usecase';
import { WorkTransitionsService } from './work-transitions.service';
import { WorkService } from './work.service';

type Q = Record<string, unknown>;

/** `/v1/environments/{environment_id}/work` — the eleven Environment Work operations. */
@Controller('v1/environments/:environmentId/work')
export class WorkController {
  constructor(
    private readonly work: WorkService,
    private readonly pollWork: PollWorkUseCase,
    private readonly transitions: WorkTransitionsService,
  ) {}

  @Post()
  @HttpCode(201)
  create(@CurrentPrincipal() p: Principal, @Param('environmentId') env: string, @Body() body: unknown) {
    return this.work.create(p, env, body);
  }

  @Get()
  list(@CurrentPrincipal() p: Principal, @Param('environmentId') env: string, @Query() q: Q) {
    return this.work.list(p, env, q);
  }

  @Get('poll')
  @AllowCredentials('environment')
  poll(
    @CurrentPrincipal() p: Principal,
    @Param('environmentId') env: string,
    @Query() q: Q,
    @Headers('anthropic-worker-id') worker: unknown,
  ) {
    return this.pollWork.execute(p, env, q, worker);
  }

  @Get('stats')
  @AllowCredentials('workspace', 'environment')
  stats(@CurrentPrincipal() p: Principal, @Param('environmentId') env: string) {
    return this.work.stats(p, env);
  }

  @Get(':workId')
  retrieve(
    @CurrentPrincipal() p: Principal,
    @Param('environmentId') env: string,
    @Param('workId') id: string,
  ) {
    return this.work.retrieve(p, env, id);
  }

  @Post(':workId')
  @HttpCode(200)
  update(
    @CurrentPrincipal() p: Principal,
    @Param('environmentId') env: string,
    @Param('workId') id: string,
    @Body() body: unknown,
  ) {
    return this.work.update(p, env, id, body);
  }

  @Post(':workId/ack')
  @IdempotentByProtocol()
  @HttpCode(200)
  @AllowCredentials('environment')
  ack(@CurrentPrincipal() p: Principal, @Param('environmentId') env: string, @Param('workId') id: string) {
    return this.transitions.ack(p, env, id);
  }

  @Post(':workId/heartbeat')
  @IdempotentByProtocol()
  @HttpCode(200)
  @AllowCredentials('work')
  heartbeat(
    @CurrentPrincipal() p: Principal,
    @Param('environmentId') env: string,
    @Param('workId') id: string,
    @Query() q: Q,
  ) {
    return this.transitions.heartbeat(p, env, id, q);
  }

  @Post(':workId/result')
  @IdempotentByProtocol()
  @HttpCode(200)
  @AllowCredentials('work')
  result(
    @CurrentPrincipal() p: Principal,
    @Param('environmentId') env: string,
    @Param('workId') id: string,
    @Body() body: unknown,
  ) {
    return this.transitions.result(p, env, id, body);
  }

  @Post(':workId/fail')
  @IdempotentByProtocol()
  @HttpCode(200)
  @AllowCredentials('work')
  fail(
    @CurrentPrincipal() p: Principal,
    @Param('environmentId') env: string,
    @Param('workId') id: string,
    @Body() body: unknown,
  ) {
    return this.transitions.fail(p, env, id, body);
  }

  @Post(':workId/stop')
  @IdempotentByProtocol()
  @HttpCode(204)
  @AllowCredentials('workspace', 'work')
  stop(
    @CurrentPrincipal() p: Principal,
    @Param('environmentId') env: string,
    @Param('workId') id: string,
    @Body() body: unknown,
  ) {
    return this.transitions.stop(p, env, id, body);
  }
}
