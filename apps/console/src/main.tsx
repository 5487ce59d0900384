import { render } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { LocationProvider, Route, Router } from 'preact-iso';
import type { MangoClient } from '@mango/sdk';
import { ClientContext, clientFor, forgetKey, storedKey } from './api';
import { keyHint } from './transcript';
import { SignIn } from './pages/sign-in';
import { SessionsPage } from './pages/sessions';
import { SessionPage } from './pages/session';
import { EnvironmentsPage } from './pages/environments';
import { AgentsPage } from './pages/agents';
import { FilesPage } from './pages/files';
import { VaultsPage } from './pages/vaults';
import { WebhooksPage } from './pages/webhooks';
import { DeploymentsPage } from './pages/deployments';
import { MemoryStoresPage } from './pages/memory-stores';
import { AuditPage } from './pages/audit';
import './styles.css';

export const BASE = '/console';

function App() {
  const [key, setKey] = useState<string | null>(storedKey());
  const client = useMemo<MangoClient | null>(() => (key ? clientFor(key) : null), [key]);
  if (!key || !client) return <SignIn onSignedIn={setKey} />;
  const signOut = () => {
    forgetKey();
    setKey(null);
  };
  return (
    <ClientContext.Provider value={client}>
      <LocationProvider scope={BASE}>
        <header class="top">
          <a class="brand" href={`${BASE}/`}>
            Mango
          </a>
          <nav>
            <a href={`${BASE}/`}>Sessions</a>
            <a href={`${BASE}/environments`}>Environments</a>
            <a href={`${BASE}/agents`}>Agents</a>
            <a href={`${BASE}/deployments`}>Deployments</a>
            <a href={`${BASE}/files`}>Files</a>
            <a href={`${BASE}/memory_stores`}>Memory Stores</a>
            <a href={`${BASE}/vaults`}>Vaults</a>
            <a href={`${BASE}/webhooks`}>Webhooks</a>
            <a href={`${BASE}/audit`}>Audit log</a>
          </nav>
          <span class="who" data-testid="key-hint">
            key {keyHint(key)}
          </span>
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </header>
        <main>
          <Router>
            <Route path={`${BASE}/sessions/:id`} component={SessionPage} />
            <Route path={`${BASE}/environments`} component={EnvironmentsPage} />
            <Route path={`${BASE}/agents`} component={AgentsPage} />
            <Route path={`${BASE}/deployments`} component={DeploymentsPage} />
            <Route path={`${BASE}/files`} component={FilesPage} />
            <Route path={`${BASE}/memory_stores`} component={MemoryStoresPage} />
            <Route path={`${BASE}/vaults`} component={VaultsPage} />
            <Route path={`${BASE}/webhooks`} component={WebhooksPage} />
            <Route path={`${BASE}/audit`} component={AuditPage} />
            <Route default component={SessionsPage} />
          </Router>
        </main>
      </LocationProvider>
    </ClientContext.Provider>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
