import { z } from 'zod';
import { EntityMeta, Id, OptionalText, Text, Timestamp } from './common';

// The conference family: owners' meetings (Gen1 "Eigentümerversammlung"), their agenda, resolutions
// and votes, and the party's reusable templates. Every resource needs the conference feature of
// the caller's party (docs/resources.md#conferences). Children carry the owning party of their parent, so they never
// take a `partyId`.

export const CONFERENCE_STATUSES = ['planned', 'invited', 'in_progress', 'closed', 'cancelled'] as const;
export type ConferenceStatus = (typeof CONFERENCE_STATUSES)[number];

/** How votes are counted: one per owner (head), by ownership share, or one per unit. */
export const VOTING_METHODS = ['head', 'share', 'unit'] as const;
export type VotingMethod = (typeof VOTING_METHODS)[number];

/** The majority a resolution needs to pass. */
export const RESOLUTION_MAJORITIES = ['simple', 'qualified', 'unanimous'] as const;
export type ResolutionMajority = (typeof RESOLUTION_MAJORITIES)[number];

export const VOTING_SESSION_STATUSES = ['open', 'closed'] as const;
export type VotingSessionStatus = (typeof VOTING_SESSION_STATUSES)[number];

const OwningParty = Id.optional().meta({ description: 'Owning party; the caller’s own party when absent.' });
const PartyOfParent = (parent: string) =>
  z
    .number()
    .int()
    .meta({ description: `The owning party, that of its ${parent}.` });
const Position = z
  .number()
  .int()
  .min(1)
  .max(10000)
  .meta({ description: 'Order within its parent, from 1; the next free one when absent at creation.' });
const FixedAtCreation = (description: string) =>
  Id.meta({ description: `${description} Fixed at creation.` });

// ---- Conference: an owners' meeting of a property ------------------------------------------------

export const ConferenceRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    propertyId: z.number().int(),
    title: z.string(),
    scheduledAt: Timestamp.nullable(),
    location: z.string().nullable(),
    status: z.enum(CONFERENCE_STATUSES),
    notes: z.string().nullable(),
  })
  .meta({ id: 'ConferenceRead' });
export type ConferenceRead = z.infer<typeof ConferenceRead>;

export const ConferenceWrite = z
  .strictObject({
    partyId: OwningParty,
    propertyId: Id.meta({ description: 'The property whose owners meet.' }),
    title: Text(200),
    scheduledAt: Timestamp.nullable().optional().meta({ description: 'Start of the meeting.' }),
    location: OptionalText(200),
    status: z.enum(CONFERENCE_STATUSES).optional().meta({ description: 'Default planned.' }),
    notes: OptionalText(10000),
  })
  .meta({ id: 'ConferenceWrite' });
export type ConferenceWrite = z.infer<typeof ConferenceWrite>;

// ---- Settings: the conference settings of a party (at most one live per party) -------------------

export const ConferenceSettingsRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    defaultDurationMinutes: z.number().int(),
    quorumPercent: z.number().int(),
    votingMethod: z.enum(VOTING_METHODS),
    allowProxyVoting: z.boolean(),
    invitationLeadDays: z.number().int(),
  })
  .meta({ id: 'SettingsRead', description: 'The conference settings of a party.' });
export type ConferenceSettingsRead = z.infer<typeof ConferenceSettingsRead>;

export const ConferenceSettingsWrite = z
  .strictObject({
    partyId: OwningParty.meta({
      description: 'The party they are for (one live settings record each); the caller’s own when absent.',
    }),
    defaultDurationMinutes: z
      .number()
      .int()
      .min(1)
      .max(1440)
      .optional()
      .meta({ description: 'Default 120.' }),
    quorumPercent: z
      .number()
      .int()
      .min(0)
      .max(100)
      .optional()
      .meta({ description: 'Share of votes that must be present, 0–100; default 50.' }),
    votingMethod: z.enum(VOTING_METHODS).optional().meta({ description: 'Default head.' }),
    allowProxyVoting: z
      .boolean()
      .optional()
      .meta({ description: 'False refuses new mandates for the party’s conferences; default true.' }),
    invitationLeadDays: z
      .number()
      .int()
      .min(0)
      .max(365)
      .optional()
      .meta({ description: 'Days between invitation and meeting; default 21.' }),
  })
  .meta({ id: 'SettingsWrite', description: 'The conference settings of a party.' });
export type ConferenceSettingsWrite = z.infer<typeof ConferenceSettingsWrite>;

// ---- Topic: an agenda item of a conference, and its notes -----------------------------------------

export const TopicRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('conference'),
    conferenceId: z.number().int(),
    title: z.string(),
    description: z.string().nullable(),
    position: z.number().int(),
  })
  .meta({ id: 'TopicRead' });
export type TopicRead = z.infer<typeof TopicRead>;

export const TopicWrite = z
  .strictObject({
    conferenceId: FixedAtCreation('The conference whose agenda it is on.'),
    title: Text(200),
    description: OptionalText(10000),
    position: Position.optional(),
  })
  .meta({ id: 'TopicWrite' });
export type TopicWrite = z.infer<typeof TopicWrite>;

export const TopicNoteRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('topic'),
    topicId: z.number().int(),
    text: z.string(),
    authorAccountId: z.number().int().nullable().meta({ description: 'The account that wrote it.' }),
  })
  .meta({ id: 'TopicNoteRead' });
export type TopicNoteRead = z.infer<typeof TopicNoteRead>;

export const TopicNoteWrite = z
  .strictObject({
    topicId: FixedAtCreation('The topic it is a note on.'),
    text: Text(10000),
  })
  .meta({ id: 'TopicNoteWrite' });
export type TopicNoteWrite = z.infer<typeof TopicNoteWrite>;

// ---- Resolution: a motion voted on under a topic, and its options ---------------------------------

export const ResolutionRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('topic'),
    topicId: z.number().int(),
    title: z.string(),
    text: z.string().nullable(),
    majority: z.enum(RESOLUTION_MAJORITIES),
  })
  .meta({ id: 'ResolutionRead' });
export type ResolutionRead = z.infer<typeof ResolutionRead>;

export const ResolutionWrite = z
  .strictObject({
    topicId: FixedAtCreation('The topic it is moved under.'),
    title: Text(200),
    text: OptionalText(20000).meta({ description: 'The wording voted on.' }),
    majority: z.enum(RESOLUTION_MAJORITIES).optional().meta({ description: 'Default simple.' }),
  })
  .meta({ id: 'ResolutionWrite' });
export type ResolutionWrite = z.infer<typeof ResolutionWrite>;

export const ResolutionOptionRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('resolution'),
    resolutionId: z.number().int(),
    label: z.string(),
    position: z.number().int(),
  })
  .meta({ id: 'ResolutionOptionRead' });
export type ResolutionOptionRead = z.infer<typeof ResolutionOptionRead>;

export const ResolutionOptionWrite = z
  .strictObject({
    resolutionId: FixedAtCreation('The resolution it is an answer to.'),
    label: Text(200).meta({ description: 'e.g. "Yes", "No", "Abstain".' }),
    position: Position.optional(),
  })
  .meta({ id: 'ResolutionOptionWrite' });
export type ResolutionOptionWrite = z.infer<typeof ResolutionOptionWrite>;

// ---- VotingSession: the vote on one resolution during a conference --------------------------------

export const VotingSessionRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('conference'),
    conferenceId: z.number().int(),
    resolutionId: z.number().int(),
    status: z.enum(VOTING_SESSION_STATUSES),
    openedAt: Timestamp,
    closedAt: Timestamp.nullable(),
  })
  .meta({ id: 'VotingSessionRead' });
export type VotingSessionRead = z.infer<typeof VotingSessionRead>;

export const VotingSessionWrite = z
  .strictObject({
    conferenceId: FixedAtCreation('The conference it is held in.'),
    resolutionId: FixedAtCreation('A resolution on the agenda of that conference.'),
    status: z
      .enum(VOTING_SESSION_STATUSES)
      .optional()
      .meta({ description: 'Default open; one open session per resolution. Votes change only while open.' }),
    openedAt: Timestamp.optional().meta({ description: 'The time of creation when absent.' }),
    closedAt: Timestamp.nullable().optional().meta({
      description:
        'Not before `openedAt`, and only on a closed session; the time of closing when a session is closed without one.',
    }),
  })
  .meta({ id: 'VotingSessionWrite' });
export type VotingSessionWrite = z.infer<typeof VotingSessionWrite>;

// ---- Mandate: an owner's power of attorney for another party to vote in a conference --------------

export const MandateRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('conference'),
    conferenceId: z.number().int(),
    grantorPartyId: z.number().int(),
    proxyPartyId: z.number().int(),
    validUntil: Timestamp.nullable(),
    instructions: z.string().nullable(),
  })
  .meta({ id: 'MandateRead' });
export type MandateRead = z.infer<typeof MandateRead>;

export const MandateWrite = z
  .strictObject({
    conferenceId: FixedAtCreation('The conference it is for.'),
    grantorPartyId: FixedAtCreation(
      'The owner granting it: a User party (type 7) in the caller’s scope; one live mandate per owner and conference.',
    ),
    proxyPartyId: Id.meta({
      description: 'The party that votes for the owner, in the caller’s scope; not the grantor.',
    }),
    validUntil: Timestamp.nullable().optional(),
    instructions: OptionalText(4000).meta({ description: 'How the owner wants the proxy to vote.' }),
  })
  .meta({ id: 'MandateWrite' });
export type MandateWrite = z.infer<typeof MandateWrite>;

// ---- ConferenceRole: who holds which office in a conference ----------------------------------------

/** The offices of an owners' meeting: chair, minute taker, scrutineer (vote counter). */
export const CONFERENCE_ROLES = ['chair', 'minute_taker', 'scrutineer'] as const;
export type ConferenceRoleName = (typeof CONFERENCE_ROLES)[number];

export const ConferenceRoleRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('conference'),
    conferenceId: z.number().int(),
    holderPartyId: z.number().int(),
    role: z.enum(CONFERENCE_ROLES),
  })
  .meta({ id: 'ConferenceRoleRead' });
export type ConferenceRoleRead = z.infer<typeof ConferenceRoleRead>;

export const ConferenceRoleWrite = z
  .strictObject({
    conferenceId: FixedAtCreation('The conference it is for.'),
    holderPartyId: Id.meta({ description: 'The party holding the office, in the caller’s scope.' }),
    role: z
      .enum(CONFERENCE_ROLES)
      .meta({ description: 'The office; one live holder per office and conference (409 otherwise).' }),
  })
  .meta({ id: 'ConferenceRoleWrite' });
export type ConferenceRoleWrite = z.infer<typeof ConferenceRoleWrite>;

// ---- Votes: cast in a voting session, or before the meeting ----------------------------------------

/** A vote's weight, as the voting method counts it (1 per head or unit, the share otherwise). */
const Weight = z
  .number()
  .positive()
  .max(99999999.9999)
  .multipleOf(0.0001, 'must have at most 4 decimal places');

export const ConferenceVoteRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('voting session'),
    votingSessionId: z.number().int(),
    resolutionOptionId: z.number().int(),
    voterPartyId: z.number().int(),
    weight: z.number(),
  })
  .meta({ id: 'ConferenceVoteRead' });
export type ConferenceVoteRead = z.infer<typeof ConferenceVoteRead>;

export const ConferenceVoteWrite = z
  .strictObject({
    votingSessionId: FixedAtCreation('An open voting session.'),
    resolutionOptionId: Id.meta({ description: 'An option of the session’s resolution.' }),
    voterPartyId: FixedAtCreation('The party voting, in the caller’s scope; one live vote per session.'),
    weight: Weight.optional().meta({ description: 'Greater than 0, at most 4 decimals; default 1.' }),
  })
  .meta({ id: 'ConferenceVoteWrite' });
export type ConferenceVoteWrite = z.infer<typeof ConferenceVoteWrite>;

export const PredefinedVoteRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('resolution'),
    resolutionId: z.number().int(),
    resolutionOptionId: z.number().int(),
    voterPartyId: z.number().int(),
  })
  .meta({ id: 'PredefinedVoteRead', description: 'A vote cast before the meeting.' });
export type PredefinedVoteRead = z.infer<typeof PredefinedVoteRead>;

export const PredefinedVoteWrite = z
  .strictObject({
    resolutionId: FixedAtCreation('The resolution voted on.'),
    resolutionOptionId: Id.meta({ description: 'An option of that resolution.' }),
    voterPartyId: FixedAtCreation('The party voting, in the caller’s scope; one live vote per resolution.'),
  })
  .meta({ id: 'PredefinedVoteWrite', description: 'A vote cast before the meeting.' });
export type PredefinedVoteWrite = z.infer<typeof PredefinedVoteWrite>;

// ---- Templates: a party's reusable topics and resolutions -----------------------------------------

export const TopicTemplateRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    title: z.string(),
    description: z.string().nullable(),
  })
  .meta({ id: 'TopicTemplateRead' });
export type TopicTemplateRead = z.infer<typeof TopicTemplateRead>;

export const TopicTemplateWrite = z
  .strictObject({
    partyId: OwningParty,
    title: Text(200),
    description: OptionalText(10000),
  })
  .meta({ id: 'TopicTemplateWrite' });
export type TopicTemplateWrite = z.infer<typeof TopicTemplateWrite>;

export const ResolutionTemplateRead = z
  .object({
    ...EntityMeta,
    partyId: z.number().int(),
    title: z.string(),
    text: z.string().nullable(),
    majority: z.enum(RESOLUTION_MAJORITIES),
  })
  .meta({ id: 'ResolutionTemplateRead' });
export type ResolutionTemplateRead = z.infer<typeof ResolutionTemplateRead>;

export const ResolutionTemplateWrite = z
  .strictObject({
    partyId: OwningParty,
    title: Text(200),
    text: OptionalText(20000),
    majority: z.enum(RESOLUTION_MAJORITIES).optional().meta({ description: 'Default simple.' }),
  })
  .meta({ id: 'ResolutionTemplateWrite' });
export type ResolutionTemplateWrite = z.infer<typeof ResolutionTemplateWrite>;

export const ResolutionOptionTemplateRead = z
  .object({
    ...EntityMeta,
    partyId: PartyOfParent('resolution template'),
    resolutionTemplateId: z.number().int(),
    label: z.string(),
    position: z.number().int(),
  })
  .meta({ id: 'ResolutionOptionTemplateRead' });
export type ResolutionOptionTemplateRead = z.infer<typeof ResolutionOptionTemplateRead>;

export const ResolutionOptionTemplateWrite = z
  .strictObject({
    resolutionTemplateId: FixedAtCreation('The resolution template it is an option of.'),
    label: Text(200),
    position: Position.optional(),
  })
  .meta({ id: 'ResolutionOptionTemplateWrite' });
export type ResolutionOptionTemplateWrite = z.infer<typeof ResolutionOptionTemplateWrite>;
