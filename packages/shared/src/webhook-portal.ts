import { z } from 'zod';
import { parseOverlap } from './webhook-operations';

/**
 * The contract of the endpoint portal (docs/portal.md): a short-lived, revocable session a
 * platform opens for one party, whose token may call only the webhook routes its actions allow.
 */

const timestamp = z.iso.datetime({ offset: true });
const int32Id = z.number().int().min(1).max(2147483647);

/**
 * What a portal session may do. `read` is always granted (a portal that shows nothing is no
 * portal); the others each unlock the routes `PORTAL_ROUTE_ACTIONS` in apps/api lists for them.
 */
export const PORTAL_ACTIONS = ['read', 'test', 'retry', 'recover', 'rotate-secret', 'manage'] as const;
export type PortalAction = (typeof PORTAL_ACTIONS)[number];

/** The longest a portal session (and so its token) lives. */
export const MAX_PORTAL_SESSION_MS = 24 * 3600 * 1000;
/** The most registrations and origins a session may name. */
export const MAX_PORTAL_REGISTRATIONS = 100;
export const MAX_PORTAL_ORIGINS = 20;

/** `expiresIn` as milliseconds, or undefined when it is no duration of 1 minute to 24 hours. */
export function portalSessionLifetime(text: string): number | undefined {
  const ms = parseOverlap(text);
  return ms === undefined || ms <= 0 || ms > MAX_PORTAL_SESSION_MS ? undefined : ms;
}

const HEX_COLOUR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const colour = (name: string) =>
  z
    .string()
    .regex(HEX_COLOUR, `${name} must be a hex colour such as #1d4ed8`)
    .optional()
    .meta({ description: `${name} as #rgb or #rrggbb.` });

/** Whether `text` is exactly an http(s) origin: scheme, host and optional port, nothing else. */
export function isWebOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text;
  } catch {
    return false;
  }
}

function isWebUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** How the portal looks: the platform's colours, logo and light or dark mode. */
export const PortalTheme = z
  .strictObject({
    mode: z.enum(['light', 'dark'], { error: 'mode must be light or dark' }).optional(),
    primaryColor: colour('primaryColor'),
    backgroundColor: colour('backgroundColor'),
    textColor: colour('textColor'),
    logoUrl: z
      .string()
      .max(2048, 'logoUrl must be at most 2048 characters')
      .refine(isWebUrl, 'logoUrl must be an absolute http(s) URL')
      .optional(),
    title: z.string().min(1).max(100, 'title must be at most 100 characters').optional(),
  })
  .meta({ id: 'WebhookPortalTheme' });
export type PortalTheme = z.infer<typeof PortalTheme>;

/** `POST /api/webhook-portal/sessions`. */
export const WebhookPortalSessionWrite = z
  .strictObject({
    partyId: int32Id.meta({ description: 'The party whose webhooks the portal shows.' }),
    registrationIds: z
      .array(int32Id)
      .min(1, 'registrationIds must name at least one registration (leave it out for all)')
      .max(MAX_PORTAL_REGISTRATIONS, `registrationIds may name at most ${MAX_PORTAL_REGISTRATIONS}`)
      .optional()
      .meta({ description: 'Only these registrations of the party; all of them when left out.' }),
    actions: z
      .array(z.enum(PORTAL_ACTIONS, { error: `an action is one of ${PORTAL_ACTIONS.join(', ')}` }))
      .max(PORTAL_ACTIONS.length * 2)
      .meta({ description: 'What the session may do besides reading (`read` is always granted).' }),
    expiresIn: z
      .string()
      .refine(
        (text) => parseOverlap(text) !== undefined && parseOverlap(text)! > 0,
        'expiresIn must be a duration like 30m, 1h or 24h',
      )
      .refine((text) => (parseOverlap(text) ?? 0) <= MAX_PORTAL_SESSION_MS, 'expiresIn must be at most 24h')
      .meta({ description: 'How long the session lives: a duration like `30m` or `1h`, at most `24h`.' }),
    allowedOrigins: z
      .array(
        z
          .string()
          .max(300)
          .refine(isWebOrigin, 'each allowed origin must be an origin such as https://app.example.com'),
      )
      .max(MAX_PORTAL_ORIGINS, `allowedOrigins may name at most ${MAX_PORTAL_ORIGINS}`)
      .meta({
        description:
          'The origins that may frame the portal (`frame-ancestors`); empty: it may not be framed at all.',
      }),
    theme: PortalTheme.optional(),
  })
  .meta({ id: 'WebhookPortalSessionWrite' });
export type WebhookPortalSessionWrite = z.infer<typeof WebhookPortalSessionWrite>;

export const WebhookPortalSessionCreated = z
  .object({
    id: z.uuid(),
    url: z.string().meta({ description: 'The portal page, with the token in its fragment.' }),
    token: z
      .string()
      .meta({ description: 'The session’s bearer token (a JWT), for the portal’s API calls.' }),
    expiresAt: timestamp,
  })
  .meta({ id: 'WebhookPortalSessionCreated' });
export type WebhookPortalSessionCreated = z.infer<typeof WebhookPortalSessionCreated>;

/** A session as its own token reads it (`GET /api/webhook-portal/session`). */
export const WebhookPortalSessionRead = z
  .object({
    id: z.uuid(),
    partyId: z.number().int(),
    partyName: z.string(),
    registrationIds: z.array(z.number().int()).nullable(),
    actions: z.array(z.enum(PORTAL_ACTIONS)),
    allowedOrigins: z.array(z.string()),
    theme: PortalTheme,
    expiresAt: timestamp,
    created: timestamp,
  })
  .meta({ id: 'WebhookPortalSessionRead' });
export type WebhookPortalSessionRead = z.infer<typeof WebhookPortalSessionRead>;
