// The API-under-test harness lives in @mango/testing so that other apps' tests (supervisor, files) use it too.
export { startApi } from '@mango/testing';
export type { ApiUnderTest } from '@mango/testing';
