import { isWorkTokenRoute } from './work-token-routes';

const S = 'sesn_01JABCDEFGHJKMNPQRSTVWXYZ0';
const E = 'env_01JABCDEFGHJKMNPQRSTVWXYZ0';
const W = 'work_01JABCDEFGHJKMNPQRSTVWXYZ0';

describe('isWorkTokenRoute (the sandbox socket allowlist)', () => {
  it.each([
    ['GET', `/v1/sessions/${S}`],
    ['GET', `/v1/sessions/${S}/events?limit=100&order=asc`],
    ['POST', `/v1/sessions/${S}/events`],
    ['GET', `/v1/sessions/${S}/events/stream`],
    ['post', `/v1/environments/${E}/work/${W}/heartbeat`],
    ['POST', `/v1/environments/${E}/work/${W}/result`],
    ['POST', `/v1/environments/${E}/work/${W}/fail`],
    ['POST', `/v1/environments/${E}/work/${W}/stop`],
    ['GET', '/v1/skills/skill_01J/versions/3/content'],
    ['GET', '/v1/memory_stores/memstore_1/memories?path_prefix=/a'],
    ['DELETE', '/v1/memory_stores/memstore_1/memories/mem_1'],
  ])('%s %s passes', (method, path) => expect(isWorkTokenRoute(method, path)).toBe(true));

  it.each([
    ['GET', '/v1/sessions'],
    ['POST', '/v1/sessions'],
    ['DELETE', `/v1/sessions/${S}`],
    ['POST', `/v1/sessions/${S}`],
    ['POST', `/v1/sessions/${S}/archive`],
    ['GET', '/v1/agents'],
    ['GET', `/v1/environments/${E}/work/poll`],
    ['POST', `/v1/environments/${E}/work/${W}/ack`],
    ['GET', `/v1/environments/${E}/work`],
    ['GET', `/v1/environments/${E}/work/stats`],
    ['GET', '/v1/files'],
    ['POST', '/v1/skills'],
    ['GET', '/readyz'],
    ['GET', '/metrics'],
    ['GET', `/v1/sessions/${S}/../../agents`],
    ['GET', `/v1/sessions/x%2F..%2Fy/events`],
    ['GET', `/v1//sessions/${S}`],
    ['GET', `v1/sessions/${S}`],
    ['PUT', `/v1/sessions/${S}/events`],
    ['GET', `/v1/sessions/${S}/events/stream/extra`],
    ['GET', '/v1/../v1/agents'],
    ['GET', '/v1/sessions/%2e%2e/%2e%2e/agents'],
    ['GET', `/v1/sessions/${S}%3f/../../../agents`],
    ['GET', `/v1/sessions/${S}\\..\\..\\agents`],
    ['GET', `/v1/sessions/${S}#/../../agents`],
    ['GET', '//v1/agents'],
    ['GET', `http://mango.sandbox/v1/sessions/${S}`],
    ['OPTIONS', '*'],
    ['HEAD', `/v1/sessions/${S}`],
  ])('%s %s is refused', (method, path) => expect(isWorkTokenRoute(method, path)).toBe(false));
});
