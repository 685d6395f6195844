import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Button } from '../../../components/ui/button';
import { Field } from '../../../components/ui/field';
import { ApiError, errorMessage, fieldErrors } from '../../../lib/api-client';
import { sessionStore } from '../../../lib/api';
import { NotAnOperatorError, type SessionEnd } from '../../../lib/session';
import { login, loginWithMfa } from '../api/login';

function signInError(error: unknown, step: 'password' | 'code'): string {
  if (error instanceof NotAnOperatorError) return error.message;
  if (error instanceof ApiError && error.status === 401 && step === 'code') {
    return 'The sign-in took too long or was already used. Enter your email and password again.';
  }
  // the API names the field (`code: is wrong, …`); say it as a sentence
  const codeErrors = fieldErrors(error).code;
  if (step === 'code' && codeErrors?.length) return `The code ${codeErrors.join('; ')}.`;
  return errorMessage(error);
}

/**
 * Sign-in with an operator account: email and password, then the second factor when the account
 * has one. Shown in place of any screen while signed out, so the operator lands back on the
 * screen (and its filters) they were on.
 */
export function SignInPage({ endReason }: { endReason: SessionEnd | null }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  const codeRef = useRef<HTMLInputElement>(null);
  const errorRef = useRef<HTMLParagraphElement>(null);

  // the session starts inside the mutation, so a refused account (NotAnOperatorError) is its error
  const passwordStep = useMutation({
    mutationFn: async (request: { email: string; password: string }) => {
      const answer = await login(request);
      if ('mfaRequired' in answer) setMfaToken(answer.mfaToken);
      else sessionStore.start(answer);
    },
  });
  const codeStep = useMutation({
    mutationFn: async (request: { mfaToken: string; code: string }) => {
      sessionStore.start(await loginWithMfa(request));
    },
    onError: (error) => {
      if (error instanceof ApiError && error.status === 401) {
        setMfaToken(null);
        setCode('');
      }
    },
  });

  useEffect(() => {
    if (mfaToken) codeRef.current?.focus();
  }, [mfaToken]);

  const failure = codeStep.error ?? (mfaToken ? null : passwordStep.error);
  useEffect(() => {
    if (failure) errorRef.current?.focus();
  }, [failure]);

  const submitPassword = (event: FormEvent) => {
    event.preventDefault();
    codeStep.reset();
    passwordStep.mutate({ email, password });
  };
  const submitCode = (event: FormEvent) => {
    event.preventDefault();
    if (mfaToken) codeStep.mutate({ mfaToken, code });
  };
  const startOver = () => {
    setMfaToken(null);
    setCode('');
    codeStep.reset();
    passwordStep.reset();
  };

  return (
    <main className="sign-in" id="main" tabIndex={-1}>
      <div className="sign-in__card">
        <p className="brand brand--large">
          <span className="brand__mark" aria-hidden="true">
            ⇄
          </span>
          Webhooks
        </p>
        <h1 className="sign-in__title">Sign in to the operator console</h1>
        {endReason === 'expired' && !failure && (
          <p className="notice" role="status">
            Your session has ended. Sign in again to continue where you were.
          </p>
        )}
        {endReason === 'signed-out' && !failure && (
          <p className="notice" role="status">
            You are signed out.
          </p>
        )}
        {failure && (
          <p className="form-error" role="alert" tabIndex={-1} ref={errorRef} data-testid="sign-in-error">
            {signInError(failure, codeStep.error ? 'code' : 'password')}
          </p>
        )}
        {mfaToken ? (
          <form onSubmit={submitCode} aria-label="Second factor" className="form">
            <p>Enter the 6-digit code of your authenticator app, or one of your recovery codes.</p>
            <Field label="Authentication code">
              <input
                ref={codeRef}
                name="code"
                value={code}
                onChange={(e) => setCode(e.target.value)}
                required
                autoComplete="one-time-code"
                inputMode="text"
                spellCheck={false}
              />
            </Field>
            <div className="form__actions">
              <Button type="submit" variant="primary" busy={codeStep.isPending}>
                Verify
              </Button>
              <Button variant="ghost" onClick={startOver}>
                Start over
              </Button>
            </div>
          </form>
        ) : (
          <form onSubmit={submitPassword} aria-label="Sign in" className="form">
            <Field label="Email">
              <input
                type="email"
                name="email"
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                required
                autoComplete="username"
                autoFocus
              />
            </Field>
            <Field label="Password">
              <input
                type="password"
                name="password"
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                required
                autoComplete="current-password"
              />
            </Field>
            <div className="form__actions">
              <Button type="submit" variant="primary" busy={passwordStep.isPending}>
                Sign in
              </Button>
            </div>
            <p className="muted small">
              For accounts of the Admin party and of Property Management Companies.
            </p>
          </form>
        )}
      </div>
    </main>
  );
}
