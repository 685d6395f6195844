import type { PartyType } from '@platform/shared';
import type { RelationMappings } from 'objection';
import { BaseModel, EntityModel } from './base-model';

export class Party extends EntityModel {
  static override tableName = 'parties';
  type!: PartyType;
  name!: string;
  managed_by_party_id!: number | null;
  conference_enabled!: boolean;
  /** Its tenant's bucket, the directory (`../buckets.ts`); null on a row written before it was set. */
  bucket!: number;
}

export class Permission extends BaseModel {
  static override tableName = 'permissions';
  id!: number;
  name!: string;
  resource!: string;
  action!: number;
}

/** An account group: the permissions it grants are the permissions of its accounts. */
export class AccountGroup extends EntityModel {
  static override tableName = 'account_groups';
  party_id!: number | null;
  name!: string;
  permissions?: Permission[];

  static override get relationMappings(): RelationMappings {
    return {
      permissions: {
        relation: BaseModel.ManyToManyRelation,
        modelClass: Permission,
        join: {
          from: 'account_groups.id',
          through: {
            from: 'account_group_permissions.group_id',
            to: 'account_group_permissions.permission_id',
          },
          to: 'permissions.id',
        },
      },
    };
  }
}

export class AccountContactDetail extends EntityModel {
  static override tableName = 'account_contact_details';
  account_id!: number;
  type!: string;
  value!: string;
  label!: string | null;
  is_primary!: boolean;
}

/** An account. Its secrets (password hash, MFA secret) are columns no response shows. */
export class Account extends EntityModel {
  static override tableName = 'accounts';
  party_id!: number;
  group_id!: number;
  email!: string;
  first_name!: string | null;
  last_name!: string | null;
  password_hash!: string | null;
  must_change_password!: boolean;
  mfa_enabled!: boolean;
  party?: Party;
  contactDetails?: AccountContactDetail[];

  static override get relationMappings(): RelationMappings {
    return {
      party: {
        relation: BaseModel.BelongsToOneRelation,
        modelClass: Party,
        join: { from: 'accounts.party_id', to: 'parties.id' },
      },
      /** The live (not soft-deleted) contact details. */
      contactDetails: {
        relation: BaseModel.HasManyRelation,
        modelClass: AccountContactDetail,
        filter: (query) => query.whereNull('account_contact_details.deleted'),
        join: { from: 'accounts.id', to: 'account_contact_details.account_id' },
      },
    };
  }
}
