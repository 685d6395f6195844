import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { login } from './api/login';

/** The sign-in form; calls `onSignedIn` with the access token. */
export function SignIn({ onSignedIn }: { onSignedIn: (accessToken: string) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const mutation = useMutation({ mutationFn: login, onSuccess: (tokens) => onSignedIn(tokens.accessToken) });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    mutation.mutate({ email, password });
  };
  return (
    <form onSubmit={submit} aria-label="Sign in" style={{ display: 'grid', gap: 8, maxWidth: 320 }}>
      <h1>Operator console</h1>
      <label>
        Email
        <input
          type="email"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          required
          autoComplete="username"
        />
      </label>
      <label>
        Password
        <input
          type="password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          required
          autoComplete="current-password"
        />
      </label>
      <button type="submit" disabled={mutation.isPending}>
        Sign in
      </button>
      {mutation.error && <p role="alert">{mutation.error.message}</p>}
    </form>
  );
}
