import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { EnvironmentEntity } from './environment.entity';

/** The last time each `worker_id` polled an Environment, for `workers_polling` in queue stats. */
@Entity({ name: 'work_pollers' })
export class WorkPollerEntity {
  @PrimaryColumn({ name: 'environment_id', type: 'text' })
  environmentId!: string;

  @PrimaryColumn({ name: 'worker_id', type: 'text' })
  workerId!: string;

  @Column({ name: 'last_seen_at', type: 'timestamptz', precision: 3 })
  lastSeenAt!: Date;

  @ManyToOne(() => EnvironmentEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'environment_id' })
  environment?: EnvironmentEntity;
}
