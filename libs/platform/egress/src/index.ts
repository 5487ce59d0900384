export * from './bounded-fetch';
export * from './judged-egress';
