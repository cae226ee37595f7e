import { useState } from 'react';

export function SignIn({ onSignIn, notice }: { onSignIn: (token: string) => void; notice?: string }) {
  const [token, setToken] = useState('');
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
        {notice && <p role="alert" className="banner error">{notice}</p>}
        <label htmlFor="token">Bearer token</label>
        <input id="token" name="token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} required />
        <button type="submit">Sign in</button>
        <p className="hint">With <code>npm start</code>, the start-up lines include a link that signs in the dev user.</p>
      </form>
    </main>
  );
}
