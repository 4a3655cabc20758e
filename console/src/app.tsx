import { useEffect, useState } from 'preact/hooks';
import { createApi, type Api } from './api.ts';
import { Link } from './link.tsx';
import { match, navigate, usePath } from './router.ts';
import { ROUTES } from './routes.tsx';
import { signOut, storedKey } from './session.ts';
import { SignIn } from './pages/sign-in.tsx';

function initialApi(onUnauthorized: () => void): Api | null {
  const key = storedKey();
  return key ? createApi(key, onUnauthorized) : null;
}

export function App() {
  const [api, setApi] = useState<Api | null>(() => initialApi(() => setApi(null)));
  const path = usePath();
  const found = ROUTES.map((r) => ({ route: r, params: match(r.pattern, path) })).find((m) => m.params);

  useEffect(() => {
    document.title = found ? `${found.route.title} · Switchboard` : 'Switchboard';
  }, [found?.route.title]);
  useEffect(() => {
    const home = ROUTES.find((r) => r.nav);
    if (api && path === '/' && home) navigate(home.pattern);
  }, [api, path]);

  if (!api) return <SignIn onSignedIn={(signed) => setApi(signed)} />;
  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">Switchboard</span>
        <nav aria-label="Console">
          <ul>
            {ROUTES.filter((r) => r.nav).map((r) => (
              <li key={r.pattern}>
                <Link to={r.pattern} aria-current={path.startsWith(r.pattern) ? 'page' : undefined}>
                  {r.title}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button
          type="button"
          class="sign-out"
          onClick={() => {
            signOut();
            setApi(null);
          }}
        >
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {found ? found.route.render(api, found.params!) : <NotFound />}
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>No console page has this address.</p>
    </section>
  );
}
