import 'reflect-metadata';

const RULES = Symbol('mango:config-rules');

/** A rule across several settings: the problems it finds (each a sentence naming the variables), or none. */
export type ConfigRule<T> = (env: T) => string[];

/**
 * Rules across settings (a client certificate without its key, an API key over plaintext, an `http://`
 * public URL in production), on an env DTO or on a mixin's class. `loadConfig` checks them after the
 * per-variable rules and lists every problem of both kinds in its one `ConfigError`, so an operator fixes
 * the whole configuration in one go. Rules of every class in the DTO's chain apply.
 */
export function ConfigRules<T>(...rules: ConfigRule<T>[]) {
  // The class may be a mixin's or a base's: the rule reads the whole DTO's values, of type T.
  return (target: abstract new (...args: any[]) => object): void => {
    Reflect.defineMetadata(RULES, rules, target);
  };
}

/** Every rule declared on `dto` and the classes it extends, the base's first. */
export function configRulesOf<T>(dto: abstract new (...args: any[]) => T): ConfigRule<T>[] {
  const chain: ConfigRule<T>[][] = [];
  for (
    let c: unknown = dto;
    typeof c === 'function' && c !== Function.prototype;
    c = Object.getPrototypeOf(c)
  ) {
    const own = Reflect.getOwnMetadata(RULES, c) as ConfigRule<T>[] | undefined;
    if (own) chain.unshift(own);
  }
  return chain.flat();
}
