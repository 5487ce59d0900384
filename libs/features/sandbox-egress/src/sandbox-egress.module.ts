import { Module } from '@nestjs/common';
import { SandboxEgressController } from './sandbox-egress.controller';
import { SandboxEgressService } from './sandbox-egress.service';

@Module({ controllers: [SandboxEgressController], providers: [SandboxEgressService] })
export class SandboxEgressModule {}
