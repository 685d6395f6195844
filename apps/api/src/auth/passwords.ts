import { hash, verify } from '@node-rs/argon2';

// OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane.
const OPTIONS = {
  algorithm: 2 /* Algorithm.Argon2id, a const enum */,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/** An argon2id hash (PHC string) of `password`. */
export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

// Verified against when the account does not exist, so a wrong email costs the same time as a
// wrong password and response times do not reveal which emails have accounts.
const DUMMY_HASH = hash('not-a-real-password', OPTIONS);

/** Whether `password` matches `passwordHash`; a missing hash still costs one verification. */
export async function verifyPassword(
  passwordHash: string | null | undefined,
  password: string,
): Promise<boolean> {
  try {
    if (!passwordHash) {
      await verify(await DUMMY_HASH, password);
      return false;
    }
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Why `password` is too weak, or undefined when it is acceptable. */
export function passwordWeakness(password: string): string | undefined {
  if (password.length < 10) return 'must be at least 10 characters long';
  if (password.length > 200) return 'must be at most 200 characters long';
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^a-zA-Z0-9]/].filter((re) => re.test(password)).length;
  if (classes < 3) return 'must mix at least three of: lower case, upper case, digits, symbols';
  return undefined;
}
