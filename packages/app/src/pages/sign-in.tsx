/** Sign-in: paste an API key with calls:read; it is checked, then kept in this tab's session storage. */
import { useState } from 'preact/hooks';
import { ApiError, checkKey, storeKey } from '../api.ts';

/** The sign-in form. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const abilities = await checkKey(key.trim());
      storeKey(key.trim(), abilities);
      onSignedIn();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401)
        setError('This key is not valid (unknown, revoked or mistyped).');
      else if (e instanceof ApiError && e.status === 403)
        setError('This key cannot read calls: it needs the calls:read scope.');
      else setError(`The service did not answer: ${String(e instanceof Error ? e.message : e)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Call Quality Service</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <p id="api-key-help" class="muted">
          A key with the <code>calls:read</code> scope (<code>cqs key create --scopes calls:read</code>); with{' '}
          <code>calls</code> too, you can tag calls. It stays in this browser tab only.
        </p>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          aria-describedby="api-key-help"
          value={key}
          onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
