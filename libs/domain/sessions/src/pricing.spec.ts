import { budgetChangeProblem, budgetReached, listCost, parsePriceTable, priceOf } from './pricing';

const budget = (amount: string) => ({
  type: 'limit' as const,
  max_list_cost: { amount, currency: 'USD' as const },
});

describe('list prices and budgets', () => {
  it.each([
    ['claude-sonnet-4-6', { input: 3, output: 15 }],
    ['claude-opus-4-1', { input: 15, output: 75 }],
    ['claude-opus-4-6', { input: 5, output: 25 }],
    ['claude-haiku-4-5', { input: 1, output: 5 }],
    ['my-local-model', undefined],
  ])('prices %s', (model, price) => {
    expect(priceOf(model)).toEqual(price);
  });

  it('computes list cost in cents, rounded up, with cache multipliers', () => {
    // 1M input at $3 + 100k output at $15 = $3 + $1.50
    expect(listCost('claude-sonnet-4-6', { input_tokens: 1_000_000, output_tokens: 100_000 })).toEqual({
      amount: '450',
      currency: 'USD',
    });
    // 1M cache writes at $3.75, 1M cache reads at $0.30
    expect(
      listCost('claude-sonnet-4-6', {
        cache_creation_input_tokens: 1_000_000,
        cache_read_input_tokens: 1_000_000,
      }),
    ).toEqual({ amount: '405', currency: 'USD' });
    // one token is a fraction of a cent: rounds up to 1
    expect(listCost('claude-sonnet-4-6', { input_tokens: 1 })?.amount).toBe('1');
    expect(listCost('claude-sonnet-4-6', {})?.amount).toBe('0');
    expect(listCost('unpriced', { input_tokens: 5 })).toBeNull();
  });

  it('gates at the limit, not before', () => {
    expect(budgetReached(null, { amount: '999', currency: 'USD' })).toBe(false);
    expect(budgetReached(budget('10'), { amount: '9', currency: 'USD' })).toBe(false);
    expect(budgetReached(budget('10'), { amount: '10', currency: 'USD' })).toBe(true);
    expect(budgetReached(budget('10'), { amount: '11', currency: 'USD' })).toBe(true);
    expect(budgetReached(budget('0'), null)).toBe(true);
  });

  it('a changed budget must exceed what was spent', () => {
    expect(budgetChangeProblem(budget('10'), { amount: '10', currency: 'USD' })).toMatch(/must exceed/);
    expect(budgetChangeProblem(budget('11'), { amount: '10', currency: 'USD' })).toBeUndefined();
    expect(budgetChangeProblem(budget('1'), null)).toBeUndefined();
  });
});

describe('operator prices (MANGO_MODEL_PRICES)', () => {
  const table = parsePriceTable(
    '{"my-local-model": {"input": 0.5, "output": 1.5}, "claude-sonnet-4-6": {"input": 1, "output": 2}}',
  );
  it('prices unlisted models and overrides listed ones by exact id', () => {
    expect(priceOf('my-local-model', table)).toEqual({ input: 0.5, output: 1.5 });
    expect(priceOf('claude-sonnet-4-6', table)).toEqual({ input: 1, output: 2 });
    expect(priceOf('claude-sonnet-4-5', table)).toEqual({ input: 3, output: 15 });
    expect(listCost('my-local-model', { input_tokens: 2_000_000, output_tokens: 1_000_000 }, table)).toEqual({
      amount: '250',
      currency: 'USD',
    });
  });
  it('treats empty as none', () => {
    expect(parsePriceTable(undefined)).toEqual({});
    expect(parsePriceTable('  ')).toEqual({});
  });
  it.each([
    ['not JSON', '{', /JSON object/],
    ['an array', '[]', /JSON object/],
    ['a missing output', '{"m": {"input": 1}}', /"m"/],
    ['a negative price', '{"m": {"input": -1, "output": 1}}', /"m"/],
    ['an extra field', '{"m": {"input": 1, "output": 1, "cache": 1}}', /"m"/],
    ['a string price', '{"m": {"input": "1", "output": 1}}', /"m"/],
  ])('refuses %s', (_name, raw, message) => {
    expect(() => parsePriceTable(raw)).toThrow(message);
  });
});
