import { useCallback, useEffect, useRef, useState } from 'react';
import {
  ApiError,
  type AuthSession,
  api,
  readAuthSession,
  sessionProof,
  setUnauthorizedHandler,
  signOutOfSession,
  takeSessionProofFromFragment,
  takeTokenFromFragment,
  tokenStore,
} from './api';
import { ApiKeysPage } from './ApiKeysPage';
import { SchedulesPage } from './SchedulesPage';
import { AGENT_PAGES } from './agents/registry';
import { ConnectionBanner } from './connection';
import { ConversationList } from './ConversationList';
import { DeletionNotice } from './DeletionNotice';
import { Home } from './Home';
import { outbox } from './outbox';
import { ConversationPage } from './ConversationPage';
import { SignIn } from './SignIn';
import { navigate, usePath } from './router';
import { useNarrow } from './useNarrow';
import { finishConnect, takeMcpCallback } from './mcpConnect';
import type { Meta } from './types';

export function App() {
  const [token, setToken] = useState(tokenStore.get());
  // the web sign-in through the server: a cookie the page never sees and the proof this page holds (GET
  // /auth/session says whether there is a cookie and whether the proof fits it)
  const [session, setSession] = useState<AuthSession>();
  const [meta, setMeta] = useState<Meta>();
  const [error, setError] = useState<string>();
  const [listVersion, setListVersion] = useState(0);
  // the conversation list as a drawer on a narrow screen
  const [drawer, setDrawer] = useState(false);
  // said once on the home page: what just happened elsewhere (a deletion)
  const [notice, setNotice] = useState<string>();
  // the conversation its Start just made: its page puts the focus in the composer
  const [started, setStarted] = useState<string>();
  // bumped by each sign-in link: the same token again must still ask who it is, or the page waits forever
  const [signIns, setSignIns] = useState(0);
  const path = usePath();
  const narrow = useNarrow();

  // a token that worked once has expired or been revoked; one that never worked was mistyped
  const signedIn = useRef(false);
  const sessionRef = useRef<AuthSession>(undefined);
  sessionRef.current = session;

  useEffect(() => {
    const failed = /(?:^#|&)signin-error=([^&]+)/.exec(window.location.hash);
    if (failed) {
      setError(`Sign-in did not complete (${decodeURIComponent(failed[1]!)}). Try again.`);
      history.replaceState(null, '', window.location.pathname + window.location.search);
    }
    const offered = takeSessionProofFromFragment();
    readAuthSession()
      .then((next) => {
        // A cookie this page cannot prove was not made for it (planted from another port, or this page lost its
        // proof): the page acts as nobody and offers the sign-in again, never as the cookie's person.
        if (offered.refused) setError('A sign-in this page did not start was ignored. Sign in here if you meant to.');
        else if (next.cookieSession && !next.signedIn)
          setError("This browser's sign-in could not be confirmed on this page (its session was not made here). Sign in again.");
        setSession(next);
      })
      .catch(() => setSession({ signIn: 'token', signedIn: false }));
  }, []);
  const authed = Boolean(token) || Boolean(session?.signedIn);
  const signOut = useCallback((reason?: string) => {
    if (sessionRef.current?.signedIn && !reason) return void signOutOfSession();
    if (sessionRef.current?.signedIn) {
      // a refused proof is of a session that ended or of a cookie replaced from another port: it is of no more use
      sessionProof.clear();
      setSession({ ...sessionRef.current, signedIn: false });
    }
    signedIn.current = false;
    tokenStore.clear();
    setToken(null);
    setMeta(undefined);
    setError(reason);
    navigate('/');
  }, []);

  useEffect(() => {
    setUnauthorizedHandler(() =>
      signOut(
        signedIn.current
          ? 'Your sign-in is not valid any more: the token was refused. Sign in again.'
          : 'That token was refused: check it and try again.',
      ),
    );
  }, [signOut]);

  // the dev sign-in link opened in a tab that already shows the app: the fragment changes, nothing reloads
  useEffect(() => {
    const onHash = () => {
      const next = takeTokenFromFragment();
      if (!next) return;
      signedIn.current = false;
      setMeta(undefined);
      setError(undefined);
      setToken(next);
      setSignIns((n) => n + 1);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    if (!authed) return;
    api<Meta>('GET', '/v1/meta')
      .then((m) => {
        signedIn.current = true;
        setMeta(m);
        setError(undefined);
      })
      .catch((e: ApiError) => {
        // a refused token has already signed out, with its own words
        if (e.status !== 401) setError(e.message);
      });
  }, [authed, token, signIns]);

  useEffect(() => {
    if (path !== '/') setNotice(undefined);
  }, [path]);

  // back from an MCP server's consent page (#mcp-oauth?code=…&state=…): finished with this page's own credentials
  const [connected, setConnected] = useState<string>();
  useEffect(() => {
    if (!authed) return;
    const callback = takeMcpCallback();
    if (!callback) return;
    navigate(callback.returnTo);
    finishConnect(callback.query)
      .then((done) => setConnected(`Connected ${done.server}.`))
      .catch((e: ApiError) => setError(e.message));
  }, [authed]);

  if (!authed) {
    if (!session)
      return (
        <main className="signin" id="main">
          <p>Signing in…</p>
        </main>
      );
    return (
      <SignIn
        oidc={session.signIn === 'oidc'}
        notice={error}
        onSignIn={(t) => {
          tokenStore.set(t);
          setError(undefined);
          setToken(t);
        }}
      />
    );
  }

  const conversationId = /^\/c\/([^/]+)/.exec(path)?.[1];
  const page =
    path === '/api-keys'
      ? { path, navLabel: 'API keys', Page: ApiKeysPage }
      : path === '/schedules'
        ? { path, navLabel: 'Schedules', Page: SchedulesPage }
        : AGENT_PAGES.find((p) => p.path === path);
  const go = (to: string) => {
    setDrawer(false);
    navigate(to);
  };

  // The links and the account: in the top bar on a wide screen, in the menu's drawer on a phone (one header row,
  // nothing cut short); rendered in one place only, so each is one element.
  const accountLinks = (where: string) => (
    <div className={`account-links ${where}`}>
      <nav aria-label="Main">
        {AGENT_PAGES.map((p) => (
          <a
            key={p.path}
            href={p.path}
            aria-current={p === page ? 'page' : undefined}
            onClick={(e) => {
              e.preventDefault();
              go(p.path);
            }}
          >
            {p.navLabel}
          </a>
        ))}
        <a
          href="/schedules"
          aria-current={path === '/schedules' ? 'page' : undefined}
          onClick={(e) => {
            e.preventDefault();
            go('/schedules');
          }}
        >
          Schedules
        </a>
        <a
          href="/api-keys"
          aria-current={path === '/api-keys' ? 'page' : undefined}
          onClick={(e) => {
            e.preventDefault();
            go('/api-keys');
          }}
        >
          API keys
        </a>
      </nav>
      <span className="who">
        {meta ? (
          <>
            Signed in as <strong>{meta.name ?? meta.user}</strong>
            {meta.client ? ` (${meta.client})` : ''}
          </>
        ) : (
          'Signing in…'
        )}
      </span>
      <button type="button" className="secondary signout" onClick={() => signOut()}>
        Sign out
      </button>
    </div>
  );

  return (
    <div className={`app ${drawer ? 'drawer-open' : ''}`} onKeyDown={(e) => e.key === 'Escape' && drawer && setDrawer(false)}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="menu secondary"
          aria-expanded={drawer}
          aria-controls="sidebar"
          onClick={() => setDrawer((open) => !open)}
        >
          <span aria-hidden="true">☰</span> <span className="menu-label">Conversations</span>
        </button>
        <a
          className="brand"
          href="/"
          onClick={(e) => {
            e.preventDefault();
            go('/');
          }}
        >
          Brigade
        </a>
        {!narrow && accountLinks('topbar-links')}
      </header>
      <ConnectionBanner />
      <DeletionNotice />
      {error && (
        <div role="alert" className="banner error">
          {error}
        </div>
      )}
      {connected && (
        <div role="status" className="banner ok">
          {connected}
        </div>
      )}
      <div className="layout">
        <aside id="sidebar" className="sidebar" aria-label="Conversations">
          {narrow && accountLinks('drawer-links')}
          <ConversationList activeId={conversationId} version={listVersion} onOpen={() => setDrawer(false)} />
        </aside>
        {drawer && <button type="button" className="scrim" aria-label="Close the list" tabIndex={-1} onClick={() => setDrawer(false)} />}
        <main id="main" tabIndex={-1} className={`content ${conversationId ? 'has-conversation' : 'scrolls'}`}>
          {page ? (
            <page.Page />
          ) : conversationId ? (
            <ConversationPage
              key={conversationId}
              id={conversationId}
              meta={meta}
              justStarted={started === conversationId}
              onChanged={() => setListVersion((v) => v + 1)}
              onDeleted={() => {
                // DeletionNotice says it, with Undo
                setListVersion((v) => v + 1);
                navigate('/');
              }}
            />
          ) : (
            <Home
              meta={meta}
              notice={notice}
              onCreated={(id, first) => {
                if (first) outbox.put(id, first);
                setStarted(id);
                setNotice(undefined);
                setListVersion((v) => v + 1);
                navigate(`/c/${id}`);
              }}
            />
          )}
        </main>
      </div>
    </div>
  );
}
