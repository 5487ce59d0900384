import { GVISOR_PIDS_LIMIT, resolveSandboxRuntime } from './container-runtime';

const GVISOR_ARGS = ['--network=none', '--host-uds=open'];
const declared = {
  runc: { path: 'runc' },
  runsc: { path: '/usr/bin/runsc', runtimeArgs: GVISOR_ARGS },
  'io.containerd.runc.v2': {},
};

describe('resolveSandboxRuntime: MANGO_WORKER_RUNTIME is checked against the runtimes the daemon declares', () => {
  it("unset (or empty) is the daemon's default runtime: nothing is passed", () => {
    expect(resolveSandboxRuntime(undefined, declared)).toBeUndefined();
    expect(resolveSandboxRuntime('', declared)).toBeUndefined();
  });

  it('runc is passed as is, with the default pids limit', () => {
    expect(resolveSandboxRuntime('runc', declared)).toEqual({ name: 'runc', gvisor: false });
  });

  it('a declared runsc is gVisor and gets the gVisor pids limit', () => {
    expect(resolveSandboxRuntime('runsc', declared)).toEqual({
      name: 'runsc',
      gvisor: true,
      pidsLimit: GVISOR_PIDS_LIMIT,
    });
  });

  it('gVisor is recognised by its path, whatever name the operator gave it', () => {
    const custom = { sandboxed: { path: '/opt/gvisor/bin/runsc', runtimeArgs: ['--host-uds=all'] } };
    expect(resolveSandboxRuntime('sandboxed', custom)).toMatchObject({ name: 'sandboxed', gvisor: true });
  });

  it.each([['--host-uds=open'], ['-host-uds=open'], ['--host-uds=all'], ['--fsgofer-host-uds']])(
    'accepts a gVisor runtime declared with %s',
    (arg) => {
      expect(resolveSandboxRuntime('runsc', { runsc: { path: 'runsc', runtimeArgs: [arg] } })).toMatchObject({
        gvisor: true,
      });
    },
  );

  it('refuses a runtime the daemon does not declare, naming the declared ones and how to declare it', () => {
    expect(() => resolveSandboxRuntime('runsc', { runc: { path: 'runc' } })).toThrow(
      /MANGO_WORKER_RUNTIME=runsc is not a runtime this Docker daemon declares \(it declares: runc\)\. Declare it in the daemon's daemon\.json "runtimes"/,
    );
    expect(() => resolveSandboxRuntime('kata', undefined)).toThrow(/it declares: none/);
  });

  it.each([
    ['no arguments', undefined],
    ['only --network=none', ['--network=none']],
    ['host sockets refused', ['--network=none', '--host-uds=none']],
    ['only creating host sockets', ['--host-uds=create']],
  ])('refuses a gVisor runtime with %s: the Work API socket would be unreachable', (_, runtimeArgs) => {
    expect(() => resolveSandboxRuntime('runsc', { runsc: { path: '/usr/bin/runsc', runtimeArgs } })).toThrow(
      /declared without "--host-uds=open": its sandboxes could not connect to the Work API socket/,
    );
  });

  it('a name with no declared path is gVisor only when the name itself is runsc', () => {
    expect(resolveSandboxRuntime('io.containerd.runc.v2', declared)).toEqual({
      name: 'io.containerd.runc.v2',
      gvisor: false,
    });
  });
});
