/** The web app's entry: sign in with a pasted key, then the calls list or one call. */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { forgetKey, storedKey } from './api.ts';
import { CallPage } from './pages/call.tsx';
import { CallsPage } from './pages/calls.tsx';
import { SignIn } from './pages/sign-in.tsx';
import { BASE, navigate, onLinkClick, routeOf, useLocation } from './router.ts';
import './styles.css';

function App() {
  const [key, setKey] = useState(storedKey());
  const location = useLocation();
  if (!key) return <SignIn onSignedIn={() => setKey(storedKey())} />;
  const route = routeOf(location);
  const signOut = () => {
    forgetKey();
    setKey(null);
    navigate(BASE);
  };
  return (
    <>
      <header class="top">
        <a href={BASE} onClick={onLinkClick} class="brand">
          Call Quality Service
        </a>
        <nav aria-label="Account">
          <button type="button" class="link" onClick={signOut}>
            Sign out
          </button>
        </nav>
      </header>
      <main id="main">
        {route.page === 'call' ? (
          <CallPage id={route.id} key={route.id} onSignedOut={signOut} />
        ) : (
          <CallsPage search={location.search} onSignedOut={signOut} />
        )}
      </main>
    </>
  );
}

// The app puts the list's scroll back itself once its rows are in again (the browser would try before).
history.scrollRestoration = 'manual';
const root = document.getElementById('root');
if (root) render(<App />, root);
