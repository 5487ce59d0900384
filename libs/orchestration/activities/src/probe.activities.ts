import type { ProbeActivities } from '@mango/workflows';
import type { DataSource } from 'typeorm';

export function createProbeActivities(deps: { dataSource: DataSource }): ProbeActivities {
  return {
    async databaseTime() {
      const rows: Array<{ now: Date }> = await deps.dataSource.query('SELECT now() AS now');
      return rows[0]!.now.toISOString();
    },
  };
}
