export * from './judged-egress';
