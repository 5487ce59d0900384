export * from './sandbox-egress.module';
export * from './sandbox-egress-record-input';
