import { DynamicModule, Global, Module } from '@nestjs/common';
import { MangoMetrics } from './metrics';

/** Makes the app's one `MangoMetrics` injectable everywhere (features, activities, services). */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(metrics: MangoMetrics): DynamicModule {
    return {
      module: MetricsModule,
      providers: [{ provide: MangoMetrics, useValue: metrics }],
      exports: [MangoMetrics],
    };
  }
}
