import { useState } from 'react';
import { startingSignIn } from './api';

export function SignIn({ onSignIn, notice, oidc }: { onSignIn: (token: string) => void; notice?: string; oidc?: boolean }) {
  const [token, setToken] = useState('');
  if (oidc) {
    // The server runs the sign-in with the provider and keeps the session in a cookie this page cannot read;
    // the page gets back the session's proof, which its requests carry.
    const returnTo = window.location.pathname + window.location.search;
    return (
      <main className="signin" id="main">
        <h1>Brigade</h1>
        {notice && (
          <p role="alert" className="banner error">
            {notice}
          </p>
        )}
        <p>Sign in with your organisation's account.</p>
        {/* this tab expects the session's proof back: a proof it did not ask for is refused (api.ts) */}
        <a className="button" href={`/auth/login?returnTo=${encodeURIComponent(returnTo)}`} onClick={startingSignIn}>
          Sign in
        </a>
      </main>
    );
  }
  return (
    <main className="signin" id="main">
      <h1>Brigade</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim()) onSignIn(token.trim());
        }}
      >
        <p>Sign in with a bearer token. It stays in this browser tab's session storage until you sign out.</p>
        {notice && (
          <p role="alert" className="banner error">
            {notice}
          </p>
        )}
        <label htmlFor="token">Bearer token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          value={token}
          onChange={(e) => setToken(e.target.value)}
          required
        />
        <button type="submit">Sign in</button>
        <p className="hint">
          With <code>npm start</code>, the start-up lines include a link that signs in the dev user.
        </p>
      </form>
    </main>
  );
}
