export * from './sandbox-networking';
export * from './package-registry-hosts';
export * from './egress-decision';
