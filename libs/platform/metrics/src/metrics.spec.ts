import { MangoMetrics } from './metrics';

describe('MangoMetrics.backgroundLoop: a loop says it is failing and that it is back', () => {
  const series = async (m: MangoMetrics, name: string) =>
    ((await m.registry.getSingleMetric(name)!.get()).values as Array<{ labels: object; value: number }>).map(
      (v) => [v.labels, v.value],
    );

  it('running shows both series at 0; failing sets 1; recovered sets 0 and counts the return', async () => {
    const m = new MangoMetrics('orchestrator');
    m.backgroundLoop('outbox_relay', 'running');
    expect(await series(m, 'mango_background_loop_failing')).toEqual([[{ loop: 'outbox_relay' }, 0]]);
    expect(await series(m, 'mango_background_loop_recoveries_total')).toEqual([
      [{ loop: 'outbox_relay' }, 0],
    ]);
    m.backgroundLoop('outbox_relay', 'failing');
    expect(await series(m, 'mango_background_loop_failing')).toEqual([[{ loop: 'outbox_relay' }, 1]]);
    m.backgroundLoop('outbox_relay', 'recovered');
    m.backgroundLoop('outbox_relay', 'failing');
    m.backgroundLoop('outbox_relay', 'recovered');
    expect(await series(m, 'mango_background_loop_failing')).toEqual([[{ loop: 'outbox_relay' }, 0]]);
    expect(await series(m, 'mango_background_loop_recoveries_total')).toEqual([
      [{ loop: 'outbox_relay' }, 2],
    ]);
  });
});
