import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { ConfigRules } from './config-rules';
import { ConfigError, loadConfig } from './load-config';

class ExampleEnv {
  @Matches(/^postgres(ql)?:\/\//)
  MANGO_DATABASE_URL!: string;

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(65535)
  MANGO_PORT: number = 8080;

  @IsString()
  MANGO_REQUIRED!: string;
}

describe('loadConfig', () => {
  it('converts and keeps defaults', () => {
    const cfg = loadConfig(ExampleEnv, {
      MANGO_DATABASE_URL: 'postgres://a@localhost:5432/db',
      MANGO_REQUIRED: 'x',
    });
    expect(cfg.MANGO_PORT).toBe(8080);
    expect(
      loadConfig(ExampleEnv, {
        MANGO_DATABASE_URL: 'postgres://a@h/db',
        MANGO_REQUIRED: 'x',
        MANGO_PORT: '9',
      }).MANGO_PORT,
    ).toBe(9);
  });

  it('names every bad variable in one error', () => {
    let err: unknown;
    try {
      loadConfig(ExampleEnv, { MANGO_DATABASE_URL: 'nope', MANGO_PORT: '70000' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = (err as ConfigError).message;
    expect(text).toMatch(/MANGO_DATABASE_URL/);
    expect(text).toMatch(/MANGO_PORT/);
    expect(text).toMatch(/MANGO_REQUIRED/);
    expect((err as ConfigError).problems.length).toBeGreaterThanOrEqual(3);
  });

  it('lists the problems of rules across settings with the per-variable ones, from every class of the chain', () => {
    type Pair = { MANGO_CERT?: string; MANGO_KEY?: string; MANGO_PORT: number };
    @ConfigRules<Pair>((e) => (e.MANGO_CERT && !e.MANGO_KEY ? ['MANGO_KEY is required with MANGO_CERT'] : []))
    class Base {
      @IsOptional()
      @IsString()
      MANGO_CERT?: string;

      @IsOptional()
      @IsString()
      MANGO_KEY?: string;
    }
    @ConfigRules<Pair>((e) => (e.MANGO_PORT === 81 ? ['MANGO_PORT 81 is reserved'] : []))
    class Derived extends Base {
      @Type(() => Number)
      @IsInt()
      @Max(100)
      MANGO_PORT: number = 80;
    }
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(Derived, env);
        return [];
      } catch (e) {
        return (e as ConfigError).problems;
      }
    };
    expect(problems({ MANGO_CERT: 'c', MANGO_PORT: '81' })).toEqual([
      'MANGO_KEY is required with MANGO_CERT',
      'MANGO_PORT 81 is reserved',
    ]);
    expect(problems({ MANGO_CERT: 'c', MANGO_PORT: '500' })).toEqual([
      'MANGO_PORT: MANGO_PORT must not be greater than 100',
      'MANGO_KEY is required with MANGO_CERT',
    ]);
    expect(problems({ MANGO_CERT: 'c', MANGO_KEY: 'k' })).toEqual([]);
  });
});
