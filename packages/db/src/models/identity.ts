import type { PartyType } from '@platform/shared';
import { BaseModel, EntityModel } from './base-model';

export class Party extends EntityModel {
  static override tableName = 'parties';
  type!: PartyType;
  name!: string;
  managedByPartyId!: number | null;
  conferenceEnabled!: boolean;
}

export class AccountGroup extends EntityModel {
  static override tableName = 'account_groups';
  partyId!: number | null;
  name!: string;
}

export class Permission extends BaseModel {
  static override tableName = 'permissions';
  id!: number;
  name!: string;
  resource!: string;
  action!: number;
}

export class AccountGroupPermission extends BaseModel {
  static override tableName = 'account_group_permissions';
  static override idColumn = ['group_id', 'permission_id'];
  groupId!: number;
  permissionId!: number;
}

export class Account extends EntityModel {
  static override tableName = 'accounts';
  partyId!: number;
  groupId!: number;
  email!: string;
  firstName!: string | null;
  lastName!: string | null;
  passwordHash!: string | null;
  mustChangePassword!: boolean;
  allowSkipMfa!: boolean;
  mfaSecret!: string | null;
  mfaEnabled!: boolean;
  recoveryFailures!: number;
  recoveryBlockedUntil!: Date | null;
}

export class AccountContactDetail extends EntityModel {
  static override tableName = 'account_contact_details';
  accountId!: number;
  type!: string;
  value!: string;
  label!: string | null;
  isPrimary!: boolean;
}

export class RefreshToken extends BaseModel {
  static override tableName = 'refresh_tokens';
  static override idColumn = 'jti';
  jti!: string;
  familyId!: string;
  accountId!: number;
  issuedAt!: Date;
  expiresAt!: Date;
  usedAt!: Date | null;
  revokedAt!: Date | null;
}

export class RecoveryCode extends BaseModel {
  static override tableName = 'recovery_codes';
  id!: number;
  accountId!: number;
  codeHash!: string;
  expiresAt!: Date;
  usedAt!: Date | null;
  created!: Date;
}

export class MailOutbox extends BaseModel {
  static override tableName = 'mail_outbox';
  id!: number;
  toAddress!: string;
  subject!: string;
  textBody!: string;
  kind!: string;
  created!: Date;
  sentAt!: Date | null;
}
