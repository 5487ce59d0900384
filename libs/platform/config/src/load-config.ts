import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { configRulesOf } from './config-rules';

/** One error that names every bad variable, so an operator fixes them all in one go. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

function describe(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const name = prefix + e.property;
    const own = Object.values(e.constraints ?? {}).map((msg) => `${name}: ${msg}`);
    return [...own, ...describe(e.children ?? [], `${name}.`)];
  });
}

/**
 * Validates the process environment against an app's env DTO (class-validator decorators, with
 * `@Type(() => Number)` etc. for conversion, and the DTO's rules across settings, `ConfigRules`) once at
 * boot. The only place that reads process.env.
 */
export function loadConfig<T extends object>(
  dto: new () => T,
  env: Record<string, string | undefined> = process.env,
  /** Values known only at run time (e.g. a pooled item runner's assignment), validated like the rest. */
  overrides: Record<string, string | undefined> = {},
): T {
  const instance = plainToInstance(dto, { ...env, ...overrides }, { enableImplicitConversion: false });
  const errors = validateSync(instance, { whitelist: false, forbidUnknownValues: false });
  // Then the rules across settings (ConfigRules): every problem of both kinds in one error.
  const problems = [...describe(errors), ...configRulesOf(dto).flatMap((rule) => rule(instance))];
  if (problems.length > 0) throw new ConfigError(problems);
  return instance;
}
