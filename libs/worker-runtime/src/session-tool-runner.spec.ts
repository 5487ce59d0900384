import { resultText } from './session-tool-runner';

describe('resultText', () => {
  it.each([
    ['', '(no output)'],
    ['plain', 'plain'],
    ['a\u0000b\u0000', 'a\ufffdb\ufffd'],
    ['héllo ✓', 'héllo ✓'],
  ])('%j → %j', (input, expected) => {
    expect(resultText(input)).toBe(expected);
  });
});
