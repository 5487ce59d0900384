import { useState } from 'preact/hooks';
import { clientFor, messageOf, storeKey } from '../api';

/** Sign-in with a Workspace API key: checked against the API once, then kept in sessionStorage only. */
export function SignIn({ onSignedIn }: { onSignedIn: (key: string) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return setError('Enter a Workspace API key.');
    setBusy(true);
    setError(null);
    try {
      await clientFor(k).agents.list({ limit: 1 });
      storeKey(k);
      setKey('');
      onSignedIn(k);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Mango console</h1>
      <form onSubmit={submit}>
        <label>
          Workspace API key
          <input
            name="api_key"
            type="password"
            autocomplete="off"
            placeholder="mango_ak_…"
            value={key}
            onInput={(e) => setKey((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <p class="hint">
          The key stays in this browser tab (sessionStorage) and is sent only to this server.
        </p>
      </form>
    </main>
  );
}
