import { Module } from '@nestjs/common';
import { SessionStreamController } from './session-stream.controller';
import { SessionStreamHub } from './session-stream-hub';
import { SessionStreamer } from './session-streamer';
import { SessionThreadsController } from './session-threads.controller';
import { SessionsController } from './sessions.controller';
import { SessionsService } from './sessions.service';

@Module({
  controllers: [SessionsController, SessionStreamController, SessionThreadsController],
  providers: [SessionsService, SessionStreamHub, SessionStreamer],
  exports: [SessionsService],
})
export class SessionsModule {}
