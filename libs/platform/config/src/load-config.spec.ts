import { Type } from 'class-transformer';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
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
});
