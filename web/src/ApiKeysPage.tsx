// Personal API keys for scripts (issue 34): the caller's keys without their secrets and with their scopes, a form
// that makes one (its scopes chosen, issue 42) and shows it once with a Copy button, and a revoke button per key
// that asks first (issue 46).
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, api } from './api';
import { ConfirmDialog } from './ConfirmDialog';

/** What a key may do besides the owner's conversations (every key's): asked for one by one (src/api/key-scopes.ts). */
const EXTRA_SCOPES = [
  { scope: 'keys', label: 'Make and revoke API keys' },
  { scope: 'export', label: 'Export all your data' },
  { scope: 'erase', label: 'Erase your account' },
  { scope: 'operator', label: 'Operator routes', role: 'operator' },
] as const;

interface ApiKey {
  id: string;
  name: string;
  roles: string[] | null;
  scopes: string[];
  expiresAt: string | null;
  createdAt: string;
  lastUsedAt: string | null;
}

const when = (iso: string | null, none: string) => (iso ? new Date(iso).toLocaleString() : none);

export function ApiKeysPage() {
  const [keys, setKeys] = useState<ApiKey[]>();
  const [name, setName] = useState('');
  const [expires, setExpires] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  // the operator scope is offered to operators only: anyone else asking for it gets a 400
  const [roles, setRoles] = useState<string[]>([]);
  const [made, setMade] = useState<{ name: string; key: string }>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [revoking, setRevoking] = useState<ApiKey>();
  const [revokeBusy, setRevokeBusy] = useState(false);
  const [revokeError, setRevokeError] = useState<string>();

  const load = useCallback(() => {
    api<{ keys: ApiKey[] }>('GET', '/v1/api-keys')
      .then((body) => setKeys(body.keys))
      .catch((e: ApiError) => setError(e.message));
  }, []);
  useEffect(load, [load]);
  useEffect(() => {
    api<{ roles: string[] }>('GET', '/v1/meta')
      .then((meta) => setRoles(meta.roles))
      .catch(() => setRoles([]));
  }, []);

  async function create(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const body = { name: name.trim(), scopes, ...(expires ? { expiresAt: new Date(`${expires}T23:59:59`).toISOString() } : {}) };
      const created = await api<{ name: string; key: string }>('POST', '/v1/api-keys', body);
      setMade({ name: created.name, key: created.key });
      setName('');
      setExpires('');
      setScopes([]);
      load();
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  async function revoke(key: ApiKey) {
    setRevokeBusy(true);
    setRevokeError(undefined);
    try {
      await api('DELETE', `/v1/api-keys/${encodeURIComponent(key.id)}`);
      setRevoking(undefined);
      load();
    } catch (e) {
      setRevokeError((e as ApiError).message);
    } finally {
      setRevokeBusy(false);
    }
  }

  return (
    <section className="api-keys">
      <h1>API keys</h1>
      <p>
        A key lets a script call Brigade's API as you (<code>Authorization: Bearer brg_…</code>), with no more than your roles. It reads and
        writes your conversations; anything more only if you tick it below. It stops when you revoke it, when it expires, or when your
        account ends or has not signed in for a long time.
      </p>
      {error && (
        <p role="alert" className="banner error">
          {error}
        </p>
      )}
      {made && (
        <div role="status" className="banner">
          <p>Your new key “{made.name}”. Copy it now: it is not shown again.</p>
          <NewKey value={made.key} />
          <button type="button" className="secondary" onClick={() => setMade(undefined)}>
            Done
          </button>
        </div>
      )}
      <form onSubmit={create}>
        <label htmlFor="api-key-name">Key name</label>
        <input id="api-key-name" value={name} maxLength={100} required onChange={(e) => setName(e.target.value)} />
        <label htmlFor="api-key-expires">Expires (optional)</label>
        <input id="api-key-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        <fieldset>
          <legend>Besides your conversations, the key may</legend>
          {EXTRA_SCOPES.filter((option) => !('role' in option) || roles.includes(option.role)).map(({ scope, label }) => (
            <label key={scope} className="checkbox">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => setScopes((now) => (e.target.checked ? [...now, scope] : now.filter((s) => s !== scope)))}
              />{' '}
              {label}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={busy || !name.trim()}>
          Make a key
        </button>
      </form>
      {keys && keys.length === 0 && <p>You have no API keys.</p>}
      {keys && keys.length > 0 && (
        // the table scrolls inside its box, so a phone never scrolls the page sideways
        <div className="table-scroll">
          <table className="result-table keys-table" aria-label="Your API keys">
            <thead>
              <tr>
                <th>Name</th>
                <th>Scopes</th>
                <th>Made</th>
                <th>Last used</th>
                <th>Expires</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>{key.scopes.join(', ')}</td>
                  <td>{when(key.createdAt, '')}</td>
                  <td>{when(key.lastUsedAt, 'never')}</td>
                  <td>{when(key.expiresAt, 'never')}</td>
                  <td>
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => {
                        setRevokeError(undefined);
                        setRevoking(key);
                      }}
                      aria-label={`Revoke ${key.name}`}
                    >
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ConfirmDialog
        open={!!revoking}
        heading={`Revoke “${revoking?.name ?? ''}”?`}
        action="Revoke"
        busyAction="Revoking…"
        busy={revokeBusy}
        error={revokeError}
        onClose={() => setRevoking(undefined)}
        onConfirm={() => revoking && void revoke(revoking)}
      >
        <p>Scripts that use this key stop working at once. This cannot be undone: a new key would have to be made and put in them.</p>
      </ConfirmDialog>
    </section>
  );
}

/** The new key, shown once, with Copy: to the clipboard when the browser allows it, otherwise selected for Ctrl+C. */
function NewKey({ value }: { value: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'copied' | 'selected'>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('copied');
    } catch {
      // no clipboard (an insecure origin, a refused permission): the text is selected for the person to copy
      input.current?.focus();
      input.current?.select();
      setCopied('selected');
    }
  };
  return (
    <div className="new-key">
      <input ref={input} aria-label="New API key" readOnly value={value} onFocus={(e) => e.currentTarget.select()} />
      <button type="button" onClick={() => void copy()}>
        Copy
      </button>
      <span role="status" className="copy-status">
        {copied === 'copied' ? 'Copied' : copied === 'selected' ? 'Selected: press Ctrl+C (⌘C on a Mac) to copy' : ''}
      </span>
    </div>
  );
}
