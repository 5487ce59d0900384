import { randomBytes } from 'node:crypto';
import { keyringFromSettings, LEGACY_WEBHOOK_KEY_ID } from './keyring-settings';

const k = () => randomBytes(32).toString('base64');

describe('keyringFromSettings: one keyring from MANGO_KEYRING, a file, or the older settings', () => {
  const a = `a:${k()}`;
  const b = `b:${k()}`;
  const noFile = () => {
    throw new Error('no file expected');
  };

  it('nothing configured is no keyring', () => {
    expect(keyringFromSettings({}, noFile)).toBeNull();
    expect(keyringFromSettings({ MANGO_KEYRING: ' ', MANGO_VAULT_KEYRING: '' }, noFile)).toBeNull();
  });

  it('MANGO_KEYRING: the first entry is active, the others open only', () => {
    const ring = keyringFromSettings({ MANGO_KEYRING: `${b},${a}` }, noFile)!;
    expect({ active: ring.activeId, ids: ring.ids() }).toEqual({ active: 'b', ids: ['b', 'a'] });
  });

  it('MANGO_KEYRING_FILE: entries on lines or comma-separated, # comment lines ignored', () => {
    const text = `# rotated 2026-12\n${b}\n\n  ${a} \n# old: x:abc\n`;
    const ring = keyringFromSettings({ MANGO_KEYRING_FILE: '/etc/mango/keyring' }, (p) => {
      expect(p).toBe('/etc/mango/keyring');
      return text;
    })!;
    expect({ active: ring.activeId, ids: ring.ids() }).toEqual({ active: 'b', ids: ['b', 'a'] });
  });

  it('the older settings keep working: MANGO_VAULT_KEYRING as is, MANGO_WEBHOOK_SECRETS_KEY as key webhook-legacy', () => {
    const hex = randomBytes(32).toString('hex');
    const old = keyringFromSettings({ MANGO_VAULT_KEYRING: a, MANGO_WEBHOOK_SECRETS_KEY: hex }, noFile)!;
    expect({ active: old.activeId, ids: old.ids() }).toEqual({
      active: 'a',
      ids: ['a', LEGACY_WEBHOOK_KEY_ID],
    });
    expect(old.key(LEGACY_WEBHOOK_KEY_ID).toString('hex')).toBe(hex);
    const webhookOnly = keyringFromSettings({ MANGO_WEBHOOK_SECRETS_KEY: k() }, noFile)!;
    expect(webhookOnly.activeId).toBe(LEGACY_WEBHOOK_KEY_ID);
    // MANGO_KEYRING comes first (active); the older keys stay readable beside it.
    const all = keyringFromSettings(
      { MANGO_KEYRING: b, MANGO_VAULT_KEYRING: a, MANGO_WEBHOOK_SECRETS_KEY: hex },
      noFile,
    )!;
    expect(all.ids()).toEqual(['b', 'a', LEGACY_WEBHOOK_KEY_ID]);
    // The same id and key in two settings is one key (e.g. MANGO_KEYRING repeats the Vault keyring).
    expect(
      keyringFromSettings({ MANGO_KEYRING: `${b},${a}`, MANGO_VAULT_KEYRING: a }, noFile)!.ids(),
    ).toEqual(['b', 'a']);
  });

  it.each([
    [{ MANGO_KEYRING: 'a:abc' }, /^MANGO_KEYRING is invalid: keyring key a must be 32 bytes/],
    [{ MANGO_KEYRING: 'nokey' }, /^MANGO_KEYRING is invalid: keyring entry 1 must be id:base64key/],
    [{ MANGO_VAULT_KEYRING: 'x:%%' }, /^MANGO_VAULT_KEYRING is invalid: keyring key x is not base64/],
    [{ MANGO_WEBHOOK_SECRETS_KEY: 'short' }, /^MANGO_WEBHOOK_SECRETS_KEY must be 32 bytes/],
    [{ MANGO_KEYRING: `a:${k()}`, MANGO_KEYRING_FILE: '/f' }, /not both/],
    [
      { MANGO_KEYRING: `a:${k()}`, MANGO_VAULT_KEYRING: `a:${k()}` },
      /key id a names different keys in MANGO_KEYRING and MANGO_VAULT_KEYRING/,
    ],
    [
      { MANGO_KEYRING: `${LEGACY_WEBHOOK_KEY_ID}:${k()}`, MANGO_WEBHOOK_SECRETS_KEY: k() },
      /key id webhook-legacy names different keys/,
    ],
  ])('refuses %p with a message naming the setting', (settings, message) => {
    expect(() => keyringFromSettings(settings, noFile)).toThrow(message);
  });

  it('a keyring file that cannot be read or has no keys is refused, naming the path and never the contents', () => {
    expect(() =>
      keyringFromSettings({ MANGO_KEYRING_FILE: '/nope' }, () => {
        throw Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
      }),
    ).toThrow('MANGO_KEYRING_FILE /nope cannot be read: ENOENT');
    expect(() => keyringFromSettings({ MANGO_KEYRING_FILE: '/f' }, () => '# nothing\n')).toThrow(
      'MANGO_KEYRING_FILE /f has no keys',
    );
    const leaked = randomBytes(20).toString('base64');
    try {
      keyringFromSettings({ MANGO_KEYRING_FILE: '/f' }, () => `a:${leaked}\n`);
      throw new Error('expected a failure');
    } catch (e) {
      expect(String(e)).toMatch(/MANGO_KEYRING_FILE is invalid: keyring key a must be 32 bytes/);
      expect(String(e)).not.toContain(leaked);
    }
  });
});
