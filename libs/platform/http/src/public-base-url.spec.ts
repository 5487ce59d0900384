import { publicBaseUrlProblems, resolvePublicBaseUrl } from './public-base-url';

describe('the public base URL', () => {
  it.each<[string, Parameters<typeof publicBaseUrlProblems>[0], RegExp | null]>([
    ['production without it is refused', { MANGO_ENV: 'production' }, /required outside development/],
    [
      'production with https is fine',
      { MANGO_ENV: 'production', MANGO_PUBLIC_BASE_URL: 'https://mango.example.com' },
      null,
    ],
    [
      'production with http to a public name is refused',
      { MANGO_ENV: 'production', MANGO_PUBLIC_BASE_URL: 'http://mango.example.com' },
      /must be https/,
    ],
    [
      'production with http to loopback is a one-host install',
      { MANGO_ENV: 'production', MANGO_PUBLIC_BASE_URL: 'http://127.0.0.1:8080' },
      null,
    ],
    [
      'production with http to localhost too',
      { MANGO_ENV: 'production', MANGO_PUBLIC_BASE_URL: 'http://localhost:8080' },
      null,
    ],
    [
      'production with http to [::1] too',
      { MANGO_ENV: 'production', MANGO_PUBLIC_BASE_URL: 'http://[::1]:8080' },
      null,
    ],
    [
      'a name that merely starts with 127 is not loopback',
      { MANGO_ENV: 'production', MANGO_PUBLIC_BASE_URL: 'http://127.0.0.1.example.com' },
      /must be https/,
    ],
    ['development needs none', { MANGO_ENV: 'development' }, null],
    [
      'development accepts http anywhere',
      { MANGO_ENV: 'development', MANGO_PUBLIC_BASE_URL: 'http://dev.example.com' },
      null,
    ],
  ])('%s', (_name, settings, problem) => {
    const problems = publicBaseUrlProblems(settings);
    if (problem) expect(problems).toEqual([expect.stringMatching(problem)]);
    else expect(problems).toEqual([]);
  });

  it('is the configured URL, or in development the listen address; a wildcard host becomes loopback', () => {
    const listen = { host: '0.0.0.0', port: 8081 };
    expect(
      resolvePublicBaseUrl(
        { MANGO_ENV: 'production', MANGO_PUBLIC_BASE_URL: 'https://m.example.com' },
        listen,
      ),
    ).toBe('https://m.example.com');
    expect(resolvePublicBaseUrl({ MANGO_ENV: 'development' }, listen)).toBe('http://127.0.0.1:8081');
    expect(resolvePublicBaseUrl({ MANGO_ENV: 'development' }, { host: '::1', port: 9 })).toBe(
      'http://[::1]:9',
    );
    expect(() => resolvePublicBaseUrl({ MANGO_ENV: 'production' }, listen)).toThrow(/required/);
  });
});
