/** Exhaustiveness guard for discriminated unions: a new variant that is not handled fails to compile. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
