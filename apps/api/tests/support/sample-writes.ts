import { PartyType } from '@platform/shared';

/**
 * Valid writes of every resource (`RESOURCES`) for tests that go through all of them: the
 * security suites (forged tokens aimed at real rows) and the event catalog's deliveries.
 */

/**
 * Which row of a resource a maker describes: `main`, the one a test names by id; `spare`, a
 * childless one that DELETE removes (a row with children is refused with a 409); `post`, another
 * create body, which must collide with neither (one mandate per owner and conference, one vote
 * per voter, …).
 */
export type SampleVariant = 'main' | 'spare' | 'post';
type Json = Record<string, unknown>;

/** Parties in the writer's scope that rows refer to (a contractor, a tenant, a broker, voters). */
export interface SampleParties {
  contractor: number;
  user: number;
  broker: number;
  /** The User party that votes and grants mandates in each variant's row. */
  voters: Record<SampleVariant, number>;
}

/** The parties of a test world that rows refer to; `world.user` votes in every variant unless told. */
export function worldParties(
  world: Record<'contractor' | 'user' | 'broker', { id: number }>,
  voters: Record<SampleVariant, number> = { main: world.user.id, spare: world.user.id, post: world.user.id },
): SampleParties {
  return { contractor: world.contractor.id, user: world.user.id, broker: world.broker.id, voters };
}

/** A create body; `need` answers the id of the `main` row of a resource it refers to. */
export type SampleMaker = (
  need: (name: string) => Promise<number>,
  variant: SampleVariant,
  parties: SampleParties,
) => Promise<Json>;

/**
 * A valid create body of every resource for a Property Management Company whose scope holds
 * `parties`. Tests that go through every resource check that none is missing here, so a new
 * resource cannot slip past them.
 */
export const SAMPLE_CREATE: Record<string, SampleMaker> = {
  Party: async (_need, variant) => ({ type: PartyType.User, name: `Owner ${variant}` }),
  ContactDetails: async (_need, variant) => ({ type: 'email', value: `office-${variant}@example.com` }),
  Property: async (_need, variant) => ({
    name: `Lindenhof ${variant}`,
    street: 'Lindenstraße 1',
    postalCode: '10969',
    city: 'Berlin',
  }),
  Entrance: async (need, variant) => ({ propertyId: await need('Property'), name: `Aufgang ${variant}` }),
  Unit: async (need, variant) => ({ propertyId: await need('Property'), number: `WE ${variant}` }),
  UnitContract: async (need) => ({
    unitId: await need('Unit'),
    contractType: 'tenancy',
    startDate: '2025-01-01',
  }),
  Document: async (_need, variant) => ({ title: `Mietvertrag ${variant}` }),
  File: async (_need, variant) => ({ fileName: `plan-${variant}.pdf` }),
  Process: async (_need, variant) => ({ title: `Wasserschaden ${variant}` }),
  ProcessFeed: async (need, variant) => ({ processId: await need('Process'), text: `Handwerker ${variant}` }),
  WorkOrder: async (_need, variant, parties) => ({
    contractorPartyId: parties.contractor,
    title: `Leitung reparieren ${variant}`,
  }),
  Inquiry: async (_need, variant, parties) => ({
    connectedPartyId: parties.user,
    report: `Heizung kalt ${variant}`,
  }),
  Notice: async (_need, variant) => ({ title: `Wartung ${variant}`, body: 'Am Montag kein Wasser' }),
  Conference: async (need, variant) => ({
    propertyId: await need('Property'),
    title: `Eigentümerversammlung ${variant}`,
  }),
  // one live settings record per party: the PMC's own, and those of two parties it manages
  Settings: async (_need, variant, parties) =>
    variant === 'main' ? {} : { partyId: parties.voters[variant] },
  Topic: async (need, variant) => ({ conferenceId: await need('Conference'), title: `TOP ${variant}` }),
  TopicNote: async (need, variant) => ({ topicId: await need('Topic'), text: `Notiz ${variant}` }),
  Resolution: async (need, variant) => ({ topicId: await need('Topic'), title: `Dachsanierung ${variant}` }),
  ResolutionOption: async (need, variant) => ({
    resolutionId: await need('Resolution'),
    label: `Ja ${variant}`,
  }),
  // one open session per resolution: the others are closed
  VotingSession: async (need, variant) => ({
    conferenceId: await need('Conference'),
    resolutionId: await need('Resolution'),
    ...(variant === 'main' ? {} : { status: 'closed' }),
  }),
  Mandate: async (need, variant, parties) => ({
    conferenceId: await need('Conference'),
    grantorPartyId: parties.voters[variant],
    proxyPartyId: parties.broker,
  }),
  // one holder per office and conference: each row holds an office of its own
  ConferenceRole: async (need, variant, parties) => ({
    conferenceId: await need('Conference'),
    holderPartyId: parties.voters[variant],
    role: ({ main: 'chair', spare: 'minute_taker', post: 'scrutineer' } as const)[variant],
  }),
  ConferenceVote: async (need, variant, parties) => ({
    votingSessionId: await need('VotingSession'),
    resolutionOptionId: await need('ResolutionOption'),
    voterPartyId: parties.voters[variant],
  }),
  PredefinedVote: async (need, variant, parties) => ({
    resolutionId: await need('Resolution'),
    resolutionOptionId: await need('ResolutionOption'),
    voterPartyId: parties.voters[variant],
  }),
  TopicTemplate: async (_need, variant) => ({ title: `Wirtschaftsplan ${variant}` }),
  ResolutionTemplate: async (_need, variant) => ({ title: `Jahresabrechnung ${variant}` }),
  ResolutionOptionTemplate: async (need, variant) => ({
    resolutionTemplateId: await need('ResolutionTemplate'),
    label: `Ja ${variant}`,
  }),
};

/** A merge patch of every resource's `main` row that changes it; `extra` creates a row of its own. */
export const SAMPLE_PATCH: Record<
  string,
  (extra: (name: string) => Promise<number>, parties: SampleParties) => Json | Promise<Json>
> = {
  Party: () => ({ name: 'Owner Meyer-Schulz' }),
  ContactDetails: () => ({ label: 'Büro' }),
  Property: () => ({ name: 'Lindenhof Nord' }),
  Entrance: () => ({ name: 'Aufgang B' }),
  Unit: () => ({ number: 'WE 2' }),
  UnitContract: () => ({ notes: 'Verlängert' }),
  Document: () => ({ title: 'Mietvertrag 2026' }),
  File: () => ({ fileName: 'plan-2026.pdf' }),
  Process: () => ({ title: 'Wasserschaden Keller' }),
  ProcessFeed: () => ({ text: 'Handwerker kommt morgen' }),
  WorkOrder: () => ({ title: 'Leitung ersetzen' }),
  Inquiry: () => ({ subject: 'Heizung' }),
  Notice: () => ({ title: 'Wartung verschoben' }),
  Conference: () => ({ title: 'Außerordentliche Versammlung' }),
  Settings: () => ({ quorumPercent: 60 }),
  Topic: () => ({ title: 'TOP 2' }),
  TopicNote: () => ({ text: 'Notiz 2' }),
  Resolution: () => ({ title: 'Fassadensanierung' }),
  ResolutionOption: () => ({ label: 'Nein' }),
  VotingSession: () => ({ openedAt: '2025-01-01T09:00:00.000Z' }),
  Mandate: () => ({ instructions: 'Mit Ja stimmen' }),
  ConferenceRole: (_extra, parties) => ({ holderPartyId: parties.broker }),
  ConferenceVote: () => ({ weight: 2 }),
  // its only patchable field: another option of the same resolution
  PredefinedVote: async (extra) => ({ resolutionOptionId: await extra('ResolutionOption') }),
  TopicTemplate: () => ({ title: 'Wirtschaftsplan 2026' }),
  ResolutionTemplate: () => ({ title: 'Jahresabrechnung 2025' }),
  ResolutionOptionTemplate: () => ({ label: 'Nein' }),
};

/** The multipart upload of a File with the text `fields`, built afresh for each request. */
export function uploadForm(fields: Json): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
  form.append('file', new Blob(['%PDF-1.4 secret plan'], { type: 'application/pdf' }), 'plan.pdf');
  return form;
}
