import { Model } from 'objection';

/**
 * Base of every model. Properties are the column names, unmapped: the API's collection queries
 * (scope, search, sort, paging) are Knex builders shared by every resource and answer rows in
 * column names, so a model instance and such a row have one shape and one presenter serves both.
 */
export class BaseModel extends Model {
  // `first()` reads one row, as Knex's does, instead of fetching every match and keeping one
  static override useLimitInFirst = true;
}

/** Base of soft-deleted domain rows: id, created, last_modified, deleted. */
export class EntityModel extends BaseModel {
  id!: number;
  created!: Date;
  last_modified!: Date | null;
  deleted!: Date | null;
}
