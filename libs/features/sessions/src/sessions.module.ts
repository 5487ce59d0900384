import { Module } from '@nestjs/common';
import { SessionStreamController } from './session-stream.controller';
import { SessionStreamHub } from './session-stream.service';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

@Module({
  controllers: [SessionsController, SessionStreamController],
  providers: [SessionsService, SessionStreamHub],
  exports: [SessionsService],
})
export class SessionsModule {}
