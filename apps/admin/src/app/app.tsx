import { useState } from 'react';
import { useMyself } from '../features/auth/api/get-myself';
import { SignIn } from '../features/auth/sign-in';

function Home({ token, onSignOut }: { token: string; onSignOut: () => void }) {
  const myself = useMyself(token);
  return (
    <main>
      <p>Signed in as {myself.data?.email ?? '…'}</p>
      <button onClick={onSignOut}>Sign out</button>
    </main>
  );
}

/** The operator console. Screens for webhooks arrive with the admin issue. */
export function App() {
  const [token, setToken] = useState<string | null>(null);
  return token ? <Home token={token} onSignOut={() => setToken(null)} /> : <SignIn onSignedIn={setToken} />;
}
