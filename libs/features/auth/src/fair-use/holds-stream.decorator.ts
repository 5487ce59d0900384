import { SetMetadata } from '@nestjs/common';

export const HOLDS_STREAM = 'mango:holds-stream';

/**
 * Marks a route whose response stays open (a Server-Sent Events stream): while it is open it holds one
 * of its credential's and its Workspace's stream slots (`MANGO_MAX_SSE_STREAMS_PER_KEY`,
 * `MANGO_MAX_SSE_STREAMS_PER_WORKSPACE`), freed when the connection closes.
 */
export const HoldsStream = () => SetMetadata(HOLDS_STREAM, true);
